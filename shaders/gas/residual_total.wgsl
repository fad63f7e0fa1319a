// gas/residual_total.wgsl  --  pass `<entity>:gas:residual:total`
//
// The partials of gas/residual.wgsl added up: residual.xy = the squared divergence summed over
// the grid's open cells before and after the projection (z, w: 0). The engine reads it back late
// for stats().
// One workgroup of 256 invocations, each adding every 256th partial.
// Bindings (group 0): 0 partials (read: vec2f per workgroup of the residual pass),
//   1 residual (rw: one vec4f)

@group(0) @binding(0) var<storage, read> partials: array<vec2f>;
@group(0) @binding(1) var<storage, read_write> residual: vec4f;

const WORKGROUP_SIZE: u32 = 256u;

var<workgroup> sums: array<vec2f, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    var own = vec2f(0.0);
    for (var k = lid; k < arrayLength(&partials); k += WORKGROUP_SIZE) {
        own += partials[k];
    }
    sums[lid] = own;
    workgroupBarrier();
    for (var half = WORKGROUP_SIZE / 2u; half > 0u; half = half / 2u) {
        if (lid < half) { sums[lid] += sums[lid + half]; }
        workgroupBarrier();
    }
    if (lid == 0u) { residual = vec4f(sums[0], 0.0, 0.0); }
}
