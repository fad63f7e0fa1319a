// gas/project.wgsl  --  pass `<entity>:gas:project`
//
// Each face's component less the pressure gradient across it, (p_hi - p_lo) / h: the
// divergence-free velocity the next step starts from. A face on a solid wall stays 0, one next
// to a solid cell keeps its collider's velocity (gas/faces.wgsl set it); at an open side the
// pressure outside is 0.
// One invocation per face of all three runs; workgroup size 64, dispatch ceil(faces / 64)
// workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read: after the forces),
//   2 pressure (read: multigrid level 0's, by gas/types.wgsl's level_slot), 3 result (rw: the
//   step's result), 4 solid (read)

//! include common/dispatch.wgsl
//! include gas/types.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read> pressure: array<f32>;
@group(0) @binding(3) var<storage, read_write> result: array<f32>;
@group(0) @binding(4) var<storage, read> solid: array<u32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let f = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (f >= params.counts.z) { return; }
    let n = params.cells.xyz;
    let c = face_coords(f, n);
    let cells = face_cells(params, c);
    if (on_solid_side(params, c)) {
        result[f] = 0.0;
        return;
    }
    if (solid[cell_at(cells.lo, n)] != 0u || solid[cell_at(cells.hi, n)] != 0u) {
        result[f] = velocity[f];
        return;
    }
    // beyond an open side the pressure is 0
    let side = face_side(params, c);
    let p_lo = select(pressure[level_slot(cells.lo, n)], 0.0, side == 0);
    let p_hi = select(pressure[level_slot(cells.hi, n)], 0.0, side == 1);
    result[f] = velocity[f] - (p_hi - p_lo) / params.lower.w;
}
