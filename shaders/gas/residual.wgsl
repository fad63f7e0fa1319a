// gas/residual.wgsl  --  pass `<entity>:gas:residual`
//
// The projection's result, measured: each workgroup sums, over its cells outside the solids,
// the squared divergence before the projection (multigrid level 0's right-hand side) and after
// it (of the step's result), and writes the two sums as its partial. gas/residual_total.wgsl
// adds the partials; the relative residual is sqrt(after / before).
// One invocation per cell; workgroup size 256, dispatch ceil(cells / 256) workgroups, folded
// into (x, y) past the limit; every workgroup of the dispatch writes its partial.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read: the step's result),
//   2 rhs (read: level 0's, by level_slot), 3 solid (read), 4 partials (rw: vec2f per workgroup)

//! include common/dispatch.wgsl
//! include gas/types.wgsl
//! include gas/divergence_at.wgsl
//! include gas/reduce.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read> rhs: array<f32>;
@group(0) @binding(3) var<storage, read> solid: array<u32>;
@group(0) @binding(4) var<storage, read_write> partials: array<vec2f>;

const WORKGROUP_SIZE: u32 = REDUCE_SIZE;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    var own = vec2f(0.0);
    if (i < params.counts.y && solid[i] == 0u) {
        let c = cell_coords(i, params.cells.xyz);
        let before = rhs[level_slot(c, params.cells.xyz)];
        let after = divergence_at(c);
        own = vec2f(before * before, after * after);
    }
    reduce_a[lid] = vec4f(own, 0.0, 0.0);
    reduce_b[lid] = vec4f(0.0);
    reduce_workgroup(lid);
    if (lid == 0u) { partials[folded_workgroup(wid, groups)] = reduce_a[0].xy; }
}
