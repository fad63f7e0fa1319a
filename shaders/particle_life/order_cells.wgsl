// particle_life/order_cells.wgsl  --  pass `<entity>:particle_life:order`
//
// The scatter's atomics fill each cell in scheduling order; this pass sorts every cell's short
// run of particle indices ascending (insertion sort), so forces are summed in the same order on
// every run and the simulation replays bit for bit.
// Workgroup size 64; dispatch ceil(cells / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 cell_start (read, exclusive scan of counts),
//                     2 cell_particles (rw)

//! include common/dispatch.wgsl
//! include particle_life/cell_runs.wgsl

// bindings 0 params, 1 cell_start, 2 cell_particles: declared in particle_life/cell_runs.wgsl

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let cell = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (cell >= params.grid.w) { return; }
    let bounds = cell_run(cell);
    sort_run_in_place(bounds.x, bounds.y);
}
