// gas/curl.wgsl  --  pass `<entity>:gas:curl`
//
// Each cell's vorticity magnitude |w| (gas/vorticity.wgsl), whose gradient the confinement
// force points along (gas/force.wgsl, which takes the cell's own w afresh).
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read: after advection),
//   2 curl (rw: |w| per cell)

//! include common/dispatch.wgsl
//! include gas/vorticity.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read_write> curl: array<f32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    curl[i] = length(vorticity_at(cell_coords(i, params.cells.xyz)));
}
