// gas/relax.wgsl: one cell's Gauss-Seidel update of the pressure equation (no pass of its own).
// The including pass binds what gas/poisson.wgsl needs and `rhs` (the level's, array<f32>, in
// the same order as the pressure).

//! include gas/poisson.wgsl

// Gauss-Seidel on one cell c of a level with edge h_l^2 = `h2`: the value that satisfies its
// equation given its neighbours, p = (sum p_n - h_l^2 rhs) / count (solid cells keep theirs).
fn relax(level: u32, c: vec3i, n: vec3u, h2: f32) {
    let i = level_slot(c, n);
    if (solid_slot(level, i)) { return; }
    let s = neighbours(level, c, n);
    if (s.count == 0.0) { return; }
    pressure[i] = (s.sum - h2 * rhs[i]) / s.count;
}
