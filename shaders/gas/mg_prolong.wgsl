// gas/mg_prolong.wgsl  --  passes `<entity>:gas:mg:<cycle>:<level>:prolong`
//
// The correction solved on level LEVEL + 1, interpolated trilinearly at the centres of level
// LEVEL's cells and added to their pressure. A fine centre lies a quarter of a coarse cell from
// the nearest coarse centres. A periodic grid wraps. Past a side, the coarse cell at the side
// stands in for the one outside: as it is past a solid side (no flow: the correction's slope is
// 0 there), negated past an open side (the correction is 0 on the side, as the pressure outside).
// One invocation per cell of level LEVEL; workgroup size 64, dispatch ceil(cells / 64)
// workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 levels (read GasLevel array),
//   2 coarse_pressure (read: level LEVEL + 1's), 3 pressure (rw: level LEVEL's); the levels in
//   colour-split order (gas/types.wgsl's level_slot)

//! include common/dispatch.wgsl
//! include gas/types.wgsl

override LEVEL: u32 = 0u;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> levels: array<GasLevel>;
@group(0) @binding(2) var<storage, read> coarse_pressure: array<f32>;
@group(0) @binding(3) var<storage, read_write> pressure: array<f32>;

const WORKGROUP_SIZE: u32 = 64u;

// -1 when corner k of the stencil at `base` lies past an open side of an axis (odd reflection:
// the side's pressure is 0), else 1.
fn outside_sign(base: vec3i, k: u32, m: vec3i, wrap: bool) -> f32 {
    if (wrap) { return 1.0; }
    let o = base + vec3i(i32(k & 1u), i32((k >> 1u) & 1u), i32((k >> 2u) & 1u));
    var sign = 1.0;
    for (var a = 0u; a < 3u; a++) {
        if (o[a] < 0 && !solid_side(params, a, 0u)) { sign = -sign; }
        if (o[a] >= m[a] && !solid_side(params, a, 1u)) { sign = -sign; }
    }
    return sign;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    let fine = levels[LEVEL];
    if (i >= fine.cells.w) { return; }
    let coarse = levels[LEVEL + 1u].cells.xyz;
    let m = vec3i(coarse);
    let wrap = wraps(params);
    // the fine centre in coarse lattice coordinates (coarse centre k at k)
    let own = cell_coords(i, fine.cells.xyz);
    let q = (vec3f(own) + vec3f(0.5)) * 0.5 - vec3f(0.5);
    let base = vec3i(floor(q));
    let t = q - vec3f(base);
    var value = 0.0;
    for (var k = 0u; k < 8u; k++) {
        let corner = trilinear_corner(base, t, k, m, wrap);
        value += coarse_pressure[level_slot(corner.cell, coarse)] * corner.weight
                 * outside_sign(base, k, m, wrap);
    }
    let slot = level_slot(own, fine.cells.xyz);
    pressure[slot] += value;
}
