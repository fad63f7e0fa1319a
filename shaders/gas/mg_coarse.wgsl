// gas/mg_coarse.wgsl  --  passes `<entity>:gas:mg:<cycle>:<level>:coarse`
//
// The coarsest multigrid level's solve: SWEEPS red-black Gauss-Seidel sweeps of the pressure
// equation (gas/poisson.wgsl) on level LEVEL, all in one workgroup, which strides over the
// level's cells of one colour and meets at a barrier before the other colour. The same updates,
// in the same order of colours, as 2 SWEEPS passes of gas/mg_smooth.wgsl, in one dispatch.
// For levels of at most COARSE_CELLS cells (systems/gas/multigrid.py).
// Workgroup size 256; dispatch (1, 1, 1).
// Bindings (group 0): 0 params (read GasParams), 1 levels (read GasLevel array),
//   2 rhs (read: the level's), 3 pressure (rw: the level's), 4 solid_bits (read: level 0's)

//! include gas/relax.wgsl

override LEVEL: u32 = 0u;
override SWEEPS: u32 = 8u;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> levels: array<GasLevel>;
@group(0) @binding(2) var<storage, read> rhs: array<f32>;
@group(0) @binding(3) var<storage, read_write> pressure: array<f32>;
@group(0) @binding(4) var<storage, read> solid_bits: array<u32>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    let level = levels[LEVEL];
    let n = level.cells.xyz;
    for (var sweep = 0u; sweep < 2u * SWEEPS; sweep++) {
        let color = sweep % 2u;
        for (var i = lid; i < level.cells.w; i += WORKGROUP_SIZE) {
            let c = cell_coords(i, n);
            if (u32(c.x + c.y + c.z) % 2u == color) {
                relax(LEVEL, c, n, level.spacing.x);
            }
        }
        storageBarrier();
        workgroupBarrier();
    }
}
