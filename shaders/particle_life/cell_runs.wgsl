// particle_life/cell_runs.wgsl: a cell's run of particle indices in cell_particles and the
// slow in-place sort of a run too long for workgroup memory, shared by the order passes
// (particle_life/order_cells.wgsl, sort_cells.wgsl, sort_gather.wgsl; no pass of its own).
// Bindings (group 0) of every pass including it: 0 params (uniform PLParams), 1 cell_start (read,
// exclusive scan of the cell counts), 2 cell_particles (rw).

//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> cell_start: array<u32>;
@group(0) @binding(2) var<storage, read_write> cell_particles: array<u32>;

// [first, end) of cell `cell` in cell_particles (cell_start is the exclusive scan of the counts).
fn cell_run(cell: u32) -> vec2u {
    var end = params.count;
    if (cell + 1u < params.grid.w) { end = cell_start[cell + 1u]; }
    return vec2u(cell_start[cell], end);
}

// Insertion sort of cell_particles[first, end) by one invocation: slow, but correct at any length.
fn sort_run_in_place(first: u32, end: u32) {
    for (var k = first + 1u; k < end; k++) {
        let v = cell_particles[k];
        var j = k;
        while (j > first && cell_particles[j - 1u] > v) {
            cell_particles[j] = cell_particles[j - 1u];
            j--;
        }
        cell_particles[j] = v;
    }
}
