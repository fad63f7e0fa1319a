// particle_life/sort_cells.wgsl  --  pass `<entity>:particle_life:order`
// (grid_kernel = "cell_tiled")
//
// Sorts every cell's run of particle indices ascending, so forces are summed in the same order
// on every run (the scatter fills a cell in scheduling order). One workgroup per cell: the run
// is loaded into workgroup memory and each index goes to its rank (the number of smaller indices
// in the run; indices are distinct). A run longer than CAPACITY (about 50 times the mean at the
// usual ~20 per cell) is sorted in place by the workgroup's bitonic network instead
// (particle_life/cell_runs.wgsl). Per invocation the rank loop runs at most CAPACITY^2 / 32 =
// 32768 iterations, under llvmpipe's silent 65535-iteration loop cap.
// Workgroup size 32; dispatch one workgroup per cell (grid.w), folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 cell_start (read, exclusive scan of counts),
//                     2 cell_particles (rw)

//! include common/dispatch.wgsl
//! include particle_life/cell_runs.wgsl

// bindings 0 params, 1 cell_start, 2 cell_particles: declared in particle_life/cell_runs.wgsl

const WORKGROUP_SIZE: u32 = 32u;
const CAPACITY: u32 = 1024u;

var<workgroup> run: array<u32, CAPACITY>;
var<workgroup> run_length: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let cell = folded_workgroup(wid, groups);
    if (cell >= params.grid.w) { return; }      // the same for the whole workgroup
    let bounds = cell_run(cell);
    let first = bounds.x;
    let end = bounds.y;
    if (lid == 0u) { run_length = end - first; }
    let n = workgroupUniformLoad(&run_length);
    if (n <= 1u) { return; }
    if (n > CAPACITY) {
        sort_run_by_workgroup(first, n, lid, WORKGROUP_SIZE);
        return;
    }
    for (var q = lid; q < n; q += WORKGROUP_SIZE) { run[q] = cell_particles[first + q]; }
    workgroupBarrier();
    for (var q = lid; q < n; q += WORKGROUP_SIZE) {
        let v = run[q];
        var rank = 0u;
        for (var t = 0u; t < n; t++) { rank += u32(run[t] < v); }
        cell_particles[first + rank] = v;
    }
}
