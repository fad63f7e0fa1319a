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

fn neighbours(level: u32, c: vec3i, n: vec3u) -> Neighbours {
    var out = Neighbours(0.0, 0.0);
    let wrap = wraps(params);
    for (var a = 0u; a < 3u; a++) {
        let m = i32(n[a]);
        for (var side = 0u; side < 2u; side++) {
            let k = c[a] + select(-1, 1, side == 1u);
            if (!wrap && (k < 0 || k >= m)) {
                if (!solid_side(params, a, side)) { out.count += 1.0; }
                continue;
            }
            var o = c;
            o[a] = along(k, m, wrap);
            let slot = level_slot(o, n);
            if (solid_slot(level, slot)) { continue; }
            out.sum += pressure[slot];
            out.count += 1.0;
        }
    }
    return out;
}
