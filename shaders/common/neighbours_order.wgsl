// common/neighbours_order.wgsl  --  pass `<name>:order` of a neighbour grid with a snapshot
// (emberfx.blocks.neighbours, copy >= 1)
//
// common/neighbours_sort.wgsl (each cell's run of point indices sorted ascending) that also
// copies the first COPY (= the grid's copy) vec4f of each point's record into `snapshot` at the point's slot in
// cell order: snapshot[k * COPY + w] = points[cell_particles[k] * stride + w]. Queries then read
// a neighbour cell as one contiguous run, without an index lookup, from a copy that the step's
// own writes to the points cannot change (a snapshot: results do not depend on thread order).
// One workgroup per cell, sorting as common/neighbours_runs.wgsl does (ranks in workgroup
// memory, or the bitonic network past CAPACITY), then copying.
// Workgroup size 32; dispatch one workgroup per cell (grid.w), folded into (x, y) past the limit.
// Bindings (group 0): 0 grid (read: GridParams), 1 cell_start (read, exclusive scan of counts),
//   2 cell_particles (rw), 3 points (read, count * stride vec4f), 4 snapshot (rw, count * copy
//   vec4f)

//! include common/dispatch.wgsl
//! include common/neighbours_runs.wgsl

// bindings 0 grid, 1 cell_start, 2 cell_particles: declared in common/neighbours_runs.wgsl
@group(0) @binding(3) var<storage, read> points: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> snapshot: array<vec4f>;

// vec4f copied per point (the grid's `copy`, an override so the copy loop unrolls)
override COPY: u32 = 1u;
const WORKGROUP_SIZE: u32 = 32u;

fn copy_record(slot: u32, point: u32) {
    for (var w = 0u; w < COPY; w++) {
        snapshot[slot * COPY + w] = points[point * grid.stride + w];
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let cell = folded_workgroup(wid, groups);
    if (cell >= grid.grid.w) { return; }      // the same for the whole workgroup
    let bounds = cell_run(cell);
    let first = bounds.x;
    let end = bounds.y;
    let n = uniform_length(first, end, lid);
    if (n > CAPACITY) {
        sort_run_by_workgroup(first, n, lid, WORKGROUP_SIZE);   // ends on a storage barrier
        for (var k = first + lid; k < end; k += WORKGROUP_SIZE) {
            copy_record(k, cell_particles[k]);
        }
        return;
    }
    load_run(first, n, lid, WORKGROUP_SIZE);
    for (var q = lid; q < n; q += WORKGROUP_SIZE) {
        let v = run[q];
        let rank = rank_in_run(v, n);
        cell_particles[first + rank] = v;
        copy_record(first + rank, v);
    }
}
