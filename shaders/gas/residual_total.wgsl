// gas/residual_total.wgsl  --  pass `<entity>:gas:residual:total`
//
// The partials of gas/residual.wgsl added up: residual.xy = the squared divergence summed over
// the grid's open cells before and after the projection (z, w: 0). The engine reads it back late
// for stats().
// One workgroup of 256 invocations, each adding every 256th partial.
// Bindings (group 0): 0 partials (read: vec2f per workgroup of the residual pass),
//   1 residual (rw: one vec4f)

//! include gas/reduce.wgsl

@group(0) @binding(0) var<storage, read> partials: array<vec2f>;
@group(0) @binding(1) var<storage, read_write> residual: vec4f;

const WORKGROUP_SIZE: u32 = REDUCE_SIZE;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    var own = vec2f(0.0);
    for (var k = lid; k < arrayLength(&partials); k += WORKGROUP_SIZE) {
        own += partials[k];
    }
    reduce_a[lid] = vec4f(own, 0.0, 0.0);
    reduce_b[lid] = vec4f(0.0);
    reduce_workgroup(lid);
    if (lid == 0u) { residual = vec4f(reduce_a[0].xy, 0.0, 0.0); }
}
