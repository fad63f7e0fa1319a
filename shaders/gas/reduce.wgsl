// gas/reduce.wgsl: a workgroup's sum of two vec4f per invocation (no pass of its own, no
// bindings). Each invocation stores its values in reduce_a[lid] and reduce_b[lid], then every
// invocation calls reduce_workgroup(lid); the sums are left in reduce_a[0] and reduce_b[0]
// (a tree in workgroup memory: the same order, and so the same bytes, every run).

const REDUCE_SIZE: u32 = 256u;   // the including pass's workgroup size

var<workgroup> reduce_a: array<vec4f, REDUCE_SIZE>;
var<workgroup> reduce_b: array<vec4f, REDUCE_SIZE>;

fn reduce_workgroup(lid: u32) {
    workgroupBarrier();
    for (var half = REDUCE_SIZE / 2u; half > 0u; half = half / 2u) {
        if (lid < half) {
            reduce_a[lid] += reduce_a[lid + half];
            reduce_b[lid] += reduce_b[lid + half];
        }
        workgroupBarrier();
    }
}
