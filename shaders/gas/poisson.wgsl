// gas/poisson.wgsl: the pressure equation's stencil on a multigrid level (no pass of its own).
// The including pass binds `params` (GasParams), `pressure` (the level's, array<f32>, in the
// levels' colour-split order: gas/types.wgsl's level_slot) and `solid_bits` (level 0's solid
// cells, one bit per slot: gas/solids.wgsl).
//
// The equation per cell: sum over its 6 neighbours of (p_n - p) / h_l^2 = rhs. Past a solid
// side the face carries nothing (the neighbour drops out); past an open side the neighbour is
// the outside, at pressure 0; a periodic grid wraps; on level 0 a solid neighbour drops out like
// a solid side (its faces carry nothing). This is D G of gas/divergence.wgsl and
// gas/project.wgsl on level 0. The coarser levels leave the solids out: they only correct the
// finest level's smooth error, and the finest level's sweeps see the walls.

//! include gas/types.wgsl

struct Neighbours {
    sum: f32,     // the neighbours' pressures
    count: f32,   // the neighbours that count (those outside an open side at 0)
};

// Whether the cell in `slot` of level `level` is solid (only level 0 has solids).
fn solid_slot(level: u32, slot: u32) -> bool {
    return level == 0u && ((solid_bits[slot >> 5u] >> (slot & 31u)) & 1u) != 0u;
}

// The neighbour of c d steps along the axis of `e`: (its pressure, 1); (0, 1) past an open side
// of the box (the pressure outside is 0); (0, 0) past a solid side or in a solid cell.
fn neighbour(level: u32, c: vec3i, n: vec3u, e: vec3i, d: i32, wrap: bool, wall: bool) -> vec2f {
    let m = dot(vec3i(n), e);
    let k = dot(c, e) + d;
    if (!wrap && (k < 0 || k >= m)) { return vec2f(0.0, select(1.0, 0.0, wall)); }
    let slot = level_slot(beside(c, e, d, m, wrap), n);
    if (solid_slot(level, slot)) { return vec2f(0.0); }
    return vec2f(pressure[slot], 1.0);
}

fn neighbours(level: u32, c: vec3i, n: vec3u) -> Neighbours {
    let wrap = wraps(params);
    let x = vec3i(1, 0, 0);
    let y = vec3i(0, 1, 0);
    let z = vec3i(0, 0, 1);
    let s = neighbour(level, c, n, x, -1, wrap, solid_side(params, 0u, 0u))
            + neighbour(level, c, n, x, 1, wrap, solid_side(params, 0u, 1u))
            + neighbour(level, c, n, y, -1, wrap, solid_side(params, 1u, 0u))
            + neighbour(level, c, n, y, 1, wrap, solid_side(params, 1u, 1u))
            + neighbour(level, c, n, z, -1, wrap, solid_side(params, 2u, 0u))
            + neighbour(level, c, n, z, 1, wrap, solid_side(params, 2u, 1u));
    return Neighbours(s.x, s.y);
}
