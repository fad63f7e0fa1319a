// gas/poisson.wgsl: the pressure equation's stencil on a multigrid level (no pass of its own).
// The including pass binds `params` (GasParams) and `pressure` (the level's, array<f32>).
//
// The equation per cell: sum over its 6 neighbours of (p_n - p) / h_l^2 = rhs. Past a solid
// side the face carries nothing (the neighbour drops out); past an open side the neighbour is
// the outside, at pressure 0; a periodic grid wraps. This is D G of gas/divergence.wgsl and
// gas/project.wgsl on level 0.

//! include gas/types.wgsl

struct Stencil {
    sum: f32,     // the neighbours' pressures
    count: f32,   // the neighbours that count (those outside an open side at 0)
};

fn stencil(c: vec3i, n: vec3u) -> Stencil {
    var out = Stencil(0.0, 0.0);
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
            out.sum += pressure[cell_at(o, n)];
            out.count += 1.0;
        }
    }
    return out;
}
