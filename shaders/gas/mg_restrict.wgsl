// gas/mg_restrict.wgsl  --  passes `<entity>:gas:mg:<cycle>:<level>:restrict`
//
// The residual of the pressure equation on level LEVEL (rhs - (sum p_n - count p) / h_l^2, per
// cell: gas/poisson.wgsl) averaged over each 2 x 2 x 2 block: the next level's right-hand side,
// where its pressure (the correction) starts at 0.
// One invocation per cell of level LEVEL + 1; workgroup size 64, dispatch ceil(cells / 64)
// workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 levels (read GasLevel array),
//   2 rhs (read: level LEVEL's), 3 pressure (read: level LEVEL's),
//   4 coarse_rhs (rw: level LEVEL + 1's), 5 coarse_pressure (rw: level LEVEL + 1's),
//   6 solid_bits (read: level 0's; a solid cell's residual is 0); the levels in colour-split
//   order (gas/types.wgsl's level_slot)

//! include common/dispatch.wgsl
//! include gas/poisson.wgsl

override LEVEL: u32 = 0u;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> levels: array<GasLevel>;
@group(0) @binding(2) var<storage, read> rhs: array<f32>;
@group(0) @binding(3) var<storage, read> pressure: array<f32>;
@group(0) @binding(4) var<storage, read_write> coarse_rhs: array<f32>;
@group(0) @binding(5) var<storage, read_write> coarse_pressure: array<f32>;
@group(0) @binding(6) var<storage, read> solid_bits: array<u32>;

const WORKGROUP_SIZE: u32 = 64u;

// The residual of the pressure equation at fine cell c (0 in a solid cell).
fn residual_at(c: vec3i, n: vec3u, h2: f32) -> f32 {
    let j = level_slot(c, n);
    if (solid_slot(LEVEL, j)) { return 0.0; }
    let s = neighbours(LEVEL, c, n);
    return rhs[j] - (s.sum - s.count * pressure[j]) / h2;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    let coarse = levels[LEVEL + 1u];
    if (i >= coarse.cells.w) { return; }
    let fine = levels[LEVEL];
    let n = fine.cells.xyz;
    let own = cell_coords(i, coarse.cells.xyz);
    let base = 2 * own;
    let h2 = fine.spacing.x;
    let total = residual_at(base, n, h2) + residual_at(base + vec3i(1, 0, 0), n, h2)
                + residual_at(base + vec3i(0, 1, 0), n, h2)
                + residual_at(base + vec3i(1, 1, 0), n, h2)
                + residual_at(base + vec3i(0, 0, 1), n, h2)
                + residual_at(base + vec3i(1, 0, 1), n, h2)
                + residual_at(base + vec3i(0, 1, 1), n, h2)
                + residual_at(base + vec3i(1, 1, 1), n, h2);
    let slot = level_slot(own, coarse.cells.xyz);
    coarse_rhs[slot] = total / 8.0;
    coarse_pressure[slot] = 0.0;
}
