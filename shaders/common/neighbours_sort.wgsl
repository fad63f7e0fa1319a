// common/neighbours_sort.wgsl  --  pass `<name>:order` of a neighbour grid without a snapshot
// (emberfx.blocks.neighbours, copy = 0)
//
// Sorts every cell's run of point indices ascending, so the order inside a cell is the same on
// every run (the scatter fills a cell in scheduling order). One workgroup per cell, ranking the
// run in workgroup memory, or, past CAPACITY indices, with the bitonic network (both in
// common/neighbours_runs.wgsl).
// Workgroup size 32; dispatch one workgroup per cell (grid.w), folded into (x, y) past the limit.
// Bindings (group 0): 0 grid (read: GridParams), 1 cell_start (read, exclusive scan of counts),
//   2 cell_particles (rw)

//! include common/dispatch.wgsl
//! include common/neighbours_runs.wgsl

// bindings 0 grid, 1 cell_start, 2 cell_particles: declared in common/neighbours_runs.wgsl

const WORKGROUP_SIZE: u32 = 32u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let cell = folded_workgroup(wid, groups);
    if (cell >= grid.grid.w) { return; }      // the same for the whole workgroup
    let bounds = cell_run(cell);
    let first = bounds.x;
    let end = bounds.y;
    let n = uniform_length(first, end, lid);
    if (n <= 1u) { return; }
    if (n > CAPACITY) {
        sort_run_by_workgroup(first, n, lid, WORKGROUP_SIZE);
        return;
    }
    load_run(first, n, lid, WORKGROUP_SIZE);
    for (var q = lid; q < n; q += WORKGROUP_SIZE) {
        let v = run[q];
        let rank = rank_in_run(v, n);
        cell_particles[first + rank] = v;
    }
}
