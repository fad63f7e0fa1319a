// gas/divergence.wgsl  --  pass `<entity>:gas:divergence`
//
// Each cell's velocity divergence (the sum over axes of the upper face's component less the
// lower's, over h), the right-hand side of the pressure equation on multigrid level 0 (a solid
// cell's is left out). The level's pressure starts from the last step's: the V-cycles correct
// it (a warm start), so a flow that changes little from step to step needs fewer.
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read), 2 rhs (rw: level 0's, in
//   colour-split order: gas/types.wgsl's level_slot), 3 solid (read)

//! include common/dispatch.wgsl
//! include gas/types.wgsl
//! include gas/divergence_at.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read_write> rhs: array<f32>;
@group(0) @binding(3) var<storage, read> solid: array<u32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let c = cell_coords(i, params.cells.xyz);
    rhs[level_slot(c, params.cells.xyz)] = select(divergence_at(c), 0.0, solid[i] != 0u);
}
