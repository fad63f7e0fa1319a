// particle_life/assign_slots.wgsl  --  pass `<entity>:particle_life:assign`
// (every grid kernel but "baseline")
//
// Counting sort, step 1: each particle's cell id, the cell's count (atomicAdd), and the count
// the atomicAdd returned: the particle's slot in its cell's run, so the scatter places it
// without atomics of its own (particle_life/scatter_offsets.wgsl). Slots follow scheduling order;
// the order pass sorts each run afterwards.
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles (read), 2 cell_of (rw, count
//   words), 3 cell_slot (rw, count words), 4 cell_count (rw atomics, cells words; cleared before
//   the pass)

//! include common/dispatch.wgsl
//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> particles: array<LifeParticle>;
@group(0) @binding(2) var<storage, read_write> cell_of: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_slot: array<u32>;
@group(0) @binding(4) var<storage, read_write> cell_count: array<atomic<u32>>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let cell = cell_index(cell_coords(particles[i].position.xyz, params), params);
    cell_of[i] = cell;
    cell_slot[i] = atomicAdd(&cell_count[cell], 1u);
}
