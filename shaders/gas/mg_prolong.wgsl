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

// The coarse correction at corner `o` (0 or 1 per axis) of the stencil at `base` (coarse lattice
// coordinates, weights t), weighted; negated when the corner lies past an open side of an odd
// count of axes (odd reflection: the side's pressure is 0).
fn corner(base: vec3i, t: vec3f, o: vec3i, m: vec3i, wrap: bool, coarse: vec3u) -> f32 {
    let k = base + o;
    let cell = vec3i(along(k.x, m.x, wrap), along(k.y, m.y, wrap), along(k.z, m.z, wrap));
    let w = select(1.0 - t, t, o == vec3i(1));
    let value = coarse_pressure[level_slot(cell, coarse)] * w.x * w.y * w.z;
    if (wrap) { return value; }
    let solid_low = vec3<bool>(solid_side(params, 0u, 0u), solid_side(params, 1u, 0u),
                               solid_side(params, 2u, 0u));
    let solid_high = vec3<bool>(solid_side(params, 0u, 1u), solid_side(params, 1u, 1u),
                                solid_side(params, 2u, 1u));
    let flips = select(vec3u(0u), vec3u(1u), (k < vec3i(0)) & !solid_low)
                + select(vec3u(0u), vec3u(1u), (k >= m) & !solid_high);
    return select(value, -value, ((flips.x + flips.y + flips.z) & 1u) == 1u);
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
    let value = corner(base, t, vec3i(0, 0, 0), m, wrap, coarse)
                + corner(base, t, vec3i(1, 0, 0), m, wrap, coarse)
                + corner(base, t, vec3i(0, 1, 0), m, wrap, coarse)
                + corner(base, t, vec3i(1, 1, 0), m, wrap, coarse)
                + corner(base, t, vec3i(0, 0, 1), m, wrap, coarse)
                + corner(base, t, vec3i(1, 0, 1), m, wrap, coarse)
                + corner(base, t, vec3i(0, 1, 1), m, wrap, coarse)
                + corner(base, t, vec3i(1, 1, 1), m, wrap, coarse);
    let slot = level_slot(own, fine.cells.xyz);
    pressure[slot] += value;
}
