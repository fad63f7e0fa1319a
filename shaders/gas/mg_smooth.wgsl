// gas/mg_smooth.wgsl  --  passes `<entity>:gas:mg:<cycle>:<level>:<down|up|coarse>:<sweep>:<color>`
//
// Half a red-black Gauss-Seidel sweep of the pressure equation (gas/poisson.wgsl) on multigrid
// level LEVEL: each cell of colour COLOR ((x + y + z) mod 2) takes the value that satisfies its
// equation given its neighbours, all of the other colour: p = (sum p_n - h_l^2 rhs) / count.
// One invocation per slot of colour COLOR (gas/types.wgsl's level_slot): invocation j is row
// j / hx's cell 2 (j mod hx) + the row's offset ((y + z + COLOR) mod 2), with hx = ceil(nx / 2)
// (past nx, nothing). Workgroup size 64, dispatch ceil(hx ny nz / 64) workgroups, folded into
// (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 levels (read GasLevel array),
//   2 rhs (read: the level's), 3 pressure (rw: the level's), 4 solid_bits (read: level 0's)

//! include common/dispatch.wgsl
//! include gas/relax.wgsl

override LEVEL: u32 = 0u;
override COLOR: u32 = 0u;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> levels: array<GasLevel>;
@group(0) @binding(2) var<storage, read> rhs: array<f32>;
@group(0) @binding(3) var<storage, read_write> pressure: array<f32>;
@group(0) @binding(4) var<storage, read> solid_bits: array<u32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let j = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    let level = levels[LEVEL];
    let n = level.cells.xyz;
    let hx = half_row(n);
    let row = j / hx;
    if (row >= n.y * n.z) { return; }
    let y = row % n.y;
    let z = row / n.y;
    let x = 2u * (j % hx) + ((y + z + COLOR) & 1u);
    if (x >= n.x) { return; }
    relax(LEVEL, vec3i(vec3u(x, y, z)), n, level.spacing.x);
}
