// gas/curl.wgsl  --  pass `<entity>:gas:curl`
//
// Each cell's vorticity w = curl u, by central differences of the cell-centred velocities of its
// neighbours (each the mean of the cell's two faces per axis; one-sided at a wall), for the
// confinement force (gas/force.wgsl). Writes (w, |w|).
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read: after advection),
//   2 curl (rw)

//! include common/dispatch.wgsl
//! include gas/centred.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read_write> curl: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

// The neighbour of c along axis a (direction d = +-1): wrapped, or c itself past a wall.
fn step_to(c: vec3i, a: u32, d: i32) -> vec3i {
    var o = c;
    o[a] = along(c[a] + d, i32(params.cells[a]), wraps(params));
    return o;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let c = cell_coords(i, params.cells.xyz);
    var grad: array<vec3f, 3>;   // grad[a] = d(velocity) / d(axis a)
    for (var a = 0u; a < 3u; a++) {
        let hi = step_to(c, a, 1);
        let lo = step_to(c, a, -1);
        let span = f32(hi[a] - lo[a] + select(0, i32(params.cells[a]), hi[a] < lo[a]));
        grad[a] = (centred(hi) - centred(lo)) / max(span, 1.0) / params.lower.w;
    }
    let w = vec3f(grad[1].z - grad[2].y, grad[2].x - grad[0].z, grad[0].y - grad[1].x);
    curl[i] = vec4f(w, length(w));
}
