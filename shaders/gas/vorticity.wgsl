// gas/vorticity.wgsl: a cell's vorticity w = curl u (no pass of its own), by central differences
// of the cell-centred velocities of its neighbours (gas/centred.wgsl; one-sided at a wall). The
// including pass binds `params` (GasParams) and `velocity` (array<f32>, the faces' components).

//! include gas/centred.wgsl

// The neighbour of c along axis a (direction d = +-1): wrapped, or c itself past a wall.
fn step_to(c: vec3i, a: u32, d: i32) -> vec3i {
    var o = c;
    o[a] = along(c[a] + d, i32(params.cells[a]), wraps(params));
    return o;
}

fn vorticity_at(c: vec3i) -> vec3f {
    var grad: array<vec3f, 3>;   // grad[a] = d(velocity) / d(axis a)
    for (var a = 0u; a < 3u; a++) {
        let hi = step_to(c, a, 1);
        let lo = step_to(c, a, -1);
        let span = f32(hi[a] - lo[a] + select(0, i32(params.cells[a]), hi[a] < lo[a]));
        grad[a] = (centred(hi) - centred(lo)) / max(span, 1.0) / params.lower.w;
    }
    return vec3f(grad[1].z - grad[2].y, grad[2].x - grad[0].z, grad[0].y - grad[1].x);
}
