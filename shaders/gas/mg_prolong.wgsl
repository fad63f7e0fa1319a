// gas/mg_prolong.wgsl  --  passes `<entity>:gas:mg:<cycle>:<level>:prolong`
//
// The correction solved on level LEVEL + 1, interpolated trilinearly at the centres of level
// LEVEL's cells (a fine centre lies a quarter of a coarse cell from the nearest coarse centres;
// wrapped on a periodic grid, clamped at the sides otherwise) and added to its pressure.
// One invocation per cell of level LEVEL; workgroup size 64, dispatch ceil(cells / 64)
// workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 levels (read GasLevel array),
//   2 coarse_pressure (read: level LEVEL + 1's), 3 pressure (rw: level LEVEL's)

//! include common/dispatch.wgsl
//! include gas/types.wgsl

override LEVEL: u32 = 0u;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> levels: array<GasLevel>;
@group(0) @binding(2) var<storage, read> coarse_pressure: array<f32>;
@group(0) @binding(3) var<storage, read_write> pressure: array<f32>;

const WORKGROUP_SIZE: u32 = 64u;

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
    let q = (vec3f(cell_coords(i, fine.cells.xyz)) + vec3f(0.5)) * 0.5 - vec3f(0.5);
    let base = vec3i(floor(q));
    let t = q - vec3f(base);
    var value = 0.0;
    for (var k = 0u; k < 8u; k++) {
        let corner = trilinear_corner(base, t, k, m, wrap);
        value += coarse_pressure[cell_at(corner.cell, coarse)] * corner.weight;
    }
    pressure[i] += value;
}
