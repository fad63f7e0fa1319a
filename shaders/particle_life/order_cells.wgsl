// particle_life/order_cells.wgsl  --  pass `<entity>:particle_life:order`
//
// The scatter's atomics fill each cell in scheduling order; this pass sorts every cell's short
// run of particle indices ascending (insertion sort), so forces are summed in the same order on
// every run and the simulation replays bit for bit.
// Workgroup size 64; dispatch ceil(cells / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 cell_start (read, exclusive scan of counts),
//                     2 cell_particles (rw)

//! include common/dispatch.wgsl
//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> cell_start: array<u32>;
@group(0) @binding(2) var<storage, read_write> cell_particles: array<u32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let cell = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (cell >= params.grid.w) { return; }
    let first = cell_start[cell];
    var end = params.count;
    if (cell + 1u < params.grid.w) { end = cell_start[cell + 1u]; }
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
