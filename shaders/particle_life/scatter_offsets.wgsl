// particle_life/scatter_offsets.wgsl  --  pass `<entity>:particle_life:scatter`
// (grid_kernel = "cell_tiled")
//
// Counting sort, step 3, without a cursor copy: each particle takes slot
// cell_start[cell] + atomicAdd(cell_fill[cell], 1) (cell_fill cleared before the step), so
// cell_particles lists the particles cell by cell, in scheduling order inside a cell (the order
// pass sorts each cell's run afterwards).
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 cell_of (read), 2 cell_start (read,
//   exclusive scan of the counts), 3 cell_fill (rw atomics, cells words), 4 cell_particles (rw)

//! include common/dispatch.wgsl
//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> cell_of: array<u32>;
@group(0) @binding(2) var<storage, read> cell_start: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_fill: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> cell_particles: array<u32>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let cell = cell_of[i];
    cell_particles[cell_start[cell] + atomicAdd(&cell_fill[cell], 1u)] = i;
}
