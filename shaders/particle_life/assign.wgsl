// particle_life/assign.wgsl  --  pass `<entity>:particle_life:assign`
// (grid_kernel = "baseline", the earliest build, kept to measure against; it counts into the
// buffers of the shared neighbour grid, emberfx.blocks.neighbours, whose scan and order follow)
//
// Counting sort, step 1: each particle's cell id, and the cell's count (atomicAdd).
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles (read), 2 cell_of (rw, count words),
//                     3 cell_count (rw atomics, cells words; cleared before the pass)

//! include common/dispatch.wgsl
//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> particles: array<LifeParticle>;
@group(0) @binding(2) var<storage, read_write> cell_of: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_count: array<atomic<u32>>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let cell = cell_index(cell_coords(particles[i].position.xyz, params), params);
    cell_of[i] = cell;
    atomicAdd(&cell_count[cell], 1u);
}
