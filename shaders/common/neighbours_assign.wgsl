// common/neighbours_assign.wgsl  --  pass `<name>:assign` of a neighbour grid
// (emberfx.blocks.neighbours)
//
// Counting sort, step 1: each point's cell (a hashed grid's bucket), the cell's count (atomicAdd), and the count the
// atomicAdd returned: the point's slot in its cell's run, so the scatter places it without
// atomics of its own (common/neighbours_scatter.wgsl). Slots follow scheduling order; the order
// pass sorts each run by point index afterwards, so the final order does not depend on it.
// A point that point_alive (common/neighbours_alive.wgsl, or the grid's own alive test swapped in
// for it) calls dead goes to the dead cell, index grid.w, past the last cell: the scan puts its
// run after every cell's, where no query looks.
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 grid (read: GridParams), 1 points (read, count * stride vec4f),
//   2 cell_of (rw, count words), 3 cell_slot (rw, count words), 4 cell_count (rw atomics, cells
//   words + the dead cell's; cleared before the pass)

//! include common/dispatch.wgsl
//! include common/neighbours.wgsl

@group(0) @binding(0) var<storage, read> grid: GridParams;
@group(0) @binding(1) var<storage, read> points: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> cell_of: array<u32>;
@group(0) @binding(3) var<storage, read_write> cell_slot: array<u32>;
@group(0) @binding(4) var<storage, read_write> cell_count: array<atomic<u32>>;

//! include common/neighbours_alive.wgsl

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= grid.count) { return; }
    var cell = grid.grid.w;
    if (point_alive(i)) {
        cell = grid_point_cell(points[i * grid.stride + grid.position].xyz, grid);
    }
    cell_of[i] = cell;
    cell_slot[i] = atomicAdd(&cell_count[cell], 1u);
}
