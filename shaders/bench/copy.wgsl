// bench/copy.wgsl  --  pass `bench:copy` (emberfx bench only)
//
// The roofline of a streaming compute pass: dst[i] = src[i] over vec4f elements, the access a
// particle update makes with 16-byte loads and stores. `emberfx bench` reports kernels against it.
// Workgroup size 256; dispatch ceil(n / 256) workgroups, folded into (x, y) past the
// per-dimension limit (i = (y * nx + x) * 256 + lid).
// Bindings (group 0): 0 src (read), 1 dst (rw)

//! include common/dispatch.wgsl

@group(0) @binding(0) var<storage, read> src: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4f>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i < arrayLength(&src)) { dst[i] = src[i]; }
}
