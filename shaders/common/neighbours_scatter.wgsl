// common/neighbours_scatter.wgsl  --  pass `<name>:scatter` of a neighbour grid
// (emberfx.blocks.neighbours)
//
// Counting sort, step 3, without atomics: each point index goes to cell_start[cell] + the slot
// common/neighbours_assign.wgsl took for it, so cell_particles lists the points cell by cell (in
// scheduling order inside a cell until the order pass sorts each run).
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 grid (read: GridParams), 1 cell_of (read), 2 cell_start (read,
//   exclusive scan of the counts), 3 cell_slot (read), 4 cell_particles (rw, count words)

//! include common/dispatch.wgsl
//! include common/neighbours.wgsl

@group(0) @binding(0) var<storage, read> grid: GridParams;
@group(0) @binding(1) var<storage, read> cell_of: array<u32>;
@group(0) @binding(2) var<storage, read> cell_start: array<u32>;
@group(0) @binding(3) var<storage, read> cell_slot: array<u32>;
@group(0) @binding(4) var<storage, read_write> cell_particles: array<u32>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= grid.count) { return; }
    cell_particles[cell_start[cell_of[i]] + cell_slot[i]] = i;
}
