// particle_life/sort_gather.wgsl  --  pass `<entity>:particle_life:order`
// (grid_kernel = "gathered")
//
// particle_life/sort_cells.wgsl (each cell's run of particle indices sorted ascending, a
// deterministic sum order) that also copies each particle's position + species into
// `gathered` at its slot in cell order: gathered[n] = particles_in[cell_particles[n]].position.
// The forces pass then reads a neighbour cell as one contiguous run, without the index lookup.
// One workgroup per cell, sorting as particle_life/cell_runs.wgsl does (ranks in
// workgroup memory, or the bitonic network past CAPACITY), then copying.
// Workgroup size 32; dispatch one workgroup per cell (grid.w), folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 cell_start (read, exclusive scan of counts),
//   2 cell_particles (rw), 3 particles_in (read), 4 gathered (rw, count vec4f)

//! include common/dispatch.wgsl
//! include particle_life/cell_runs.wgsl

// bindings 0 params, 1 cell_start, 2 cell_particles: declared in particle_life/cell_runs.wgsl
@group(0) @binding(3) var<storage, read> particles_in: array<LifeParticle>;
@group(0) @binding(4) var<storage, read_write> gathered: array<vec4f>;

const WORKGROUP_SIZE: u32 = 32u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let cell = folded_workgroup(wid, groups);
    if (cell >= params.grid.w) { return; }      // the same for the whole workgroup
    let bounds = cell_run(cell);
    let first = bounds.x;
    let end = bounds.y;
    let n = uniform_length(first, end, lid);
    if (n > CAPACITY) {
        sort_run_by_workgroup(first, n, lid, WORKGROUP_SIZE);   // ends on a storage barrier
        for (var k = first + lid; k < end; k += WORKGROUP_SIZE) {
            gathered[k] = particles_in[cell_particles[k]].position;
        }
        return;
    }
    load_run(first, n, lid, WORKGROUP_SIZE);
    for (var q = lid; q < n; q += WORKGROUP_SIZE) {
        let v = run[q];
        let rank = rank_in_run(v, n);
        cell_particles[first + rank] = v;
        gathered[first + rank] = particles_in[v].position;
    }
}
