// gas/vorticity.wgsl: a cell's vorticity w = curl u (no pass of its own), by central differences
// of the cell-centred velocities of its neighbours (gas/centred.wgsl; one-sided at a wall). The
// including pass binds `params` (GasParams) and `velocity` (array<f32>, the faces' components).

//! include gas/centred.wgsl

// d(velocity) / d(axis) at c, in cells: the axis is `e`'s (of m cells); the neighbours either
// side wrapped, or c itself past a wall (one-sided there).
fn gradient(c: vec3i, e: vec3i, m: i32, wrap: bool) -> vec3f {
    let up = beside(c, e, 1, m, wrap);
    let down = beside(c, e, -1, m, wrap);
    let span = dot(up - down, e);
    return (centred(up) - centred(down)) / max(f32(span + select(0, m, span < 0)), 1.0);
}

fn vorticity_at(c: vec3i) -> vec3f {
    let m = vec3i(params.cells.xyz);
    let wrap = wraps(params);
    let gx = gradient(c, vec3i(1, 0, 0), m.x, wrap);
    let gy = gradient(c, vec3i(0, 1, 0), m.y, wrap);
    let gz = gradient(c, vec3i(0, 0, 1), m.z, wrap);
    return vec3f(gy.z - gz.y, gz.x - gx.z, gx.y - gy.x) / params.lower.w;
}
