// particle_life/sort_gather_half.wgsl  --  pass `<entity>:particle_life:order`
// (grid_kernel = "gathered", precision = "half")
//
// The order pass of the particle-life neighbour grid (emberfx.blocks.neighbours, given as its own
// order shader) with the 8-byte record of particle_life/half_positions.wgsl in place of the
// block's snapshot of 16-byte positions: each cell's run of particle indices is sorted
// ascending, and
// gathered_half[n] = the record (16-bit fixed-point coordinates, species) of particle
// cell_particles[n]. One workgroup per cell, sorting as common/neighbours_runs.wgsl does
// (ranks in workgroup memory, or the bitonic network past CAPACITY), then copying.
// Workgroup size 32; dispatch one workgroup per cell (grid.w), folded into (x, y) past the limit.
// Bindings (group 0): 0 grid (read: GridParams), 1 cell_start (read, exclusive scan of counts),
//   2 cell_particles (rw), 3 particles_in (read), 4 gathered_half (rw, count vec2u), 5 params
//   (uniform PLParams)

//! include common/dispatch.wgsl
//! include common/neighbours_runs.wgsl
//! include particle_life/half_positions.wgsl

// bindings 0 grid, 1 cell_start, 2 cell_particles: declared in common/neighbours_runs.wgsl
@group(0) @binding(3) var<storage, read> particles_in: array<LifeParticle>;
@group(0) @binding(4) var<storage, read_write> gathered_half: array<vec2u>;
@group(0) @binding(5) var<uniform> params: PLParams;

const WORKGROUP_SIZE: u32 = 32u;

fn record(particle: u32, coords: vec3u, corner: vec3f) -> vec2u {
    let p = particles_in[particle].position;
    return pack_record(p.xyz, u32(p.w), coords, corner, params);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let cell = folded_workgroup(wid, groups);
    if (cell >= grid.grid.w) { return; }      // the same for the whole workgroup
    let bounds = cell_run(cell);
    let first = bounds.x;
    let end = bounds.y;
    let coords = cell_coords_of(cell, params);
    let corner = vec3f(coords) * params.cell_size.xyz;
    let n = uniform_length(first, end, lid);
    if (n > CAPACITY) {
        sort_run_by_workgroup(first, n, lid, WORKGROUP_SIZE);   // ends on a storage barrier
        for (var k = first + lid; k < end; k += WORKGROUP_SIZE) {
            gathered_half[k] = record(cell_particles[k], coords, corner);
        }
        return;
    }
    load_run(first, n, lid, WORKGROUP_SIZE);
    for (var q = lid; q < n; q += WORKGROUP_SIZE) {
        let v = run[q];
        let rank = rank_in_run(v, n);
        cell_particles[first + rank] = v;
        gathered_half[first + rank] = record(v, coords, corner);
    }
}
