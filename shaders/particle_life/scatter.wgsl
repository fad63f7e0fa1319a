// particle_life/scatter.wgsl  --  pass `<entity>:particle_life:scatter`
// (grid_kernel = "baseline"; the other kernels scatter with common/neighbours_scatter.wgsl)
//
// Counting sort, step 3: with cell_cursor holding each cell's start (the exclusive
// scan of the counts, copied), each particle takes the next slot of its cell with atomicAdd and
// writes its index there, so cell_particles lists the particles cell by cell.
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 cell_of (read), 2 cell_cursor (rw atomics),
//                     3 cell_particles (rw, count words)

//! include common/dispatch.wgsl
//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> cell_of: array<u32>;
@group(0) @binding(2) var<storage, read_write> cell_cursor: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> cell_particles: array<u32>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    cell_particles[atomicAdd(&cell_cursor[cell_of[i]], 1u)] = i;
}
