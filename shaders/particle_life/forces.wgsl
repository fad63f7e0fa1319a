// particle_life/forces.wgsl  --  pass `<entity>:particle_life:forces` (neighbours = "grid")
//
// For the k-th particle in cell order, sums the seed-003 force of every particle in the 9 (2D)
// or 27 (3D) cells around its own (wrapped), at minimum-image distance d < r_max:
// acc = sum(f(d / r_max, matrix[s_i][s_j]) * (x_j - x_i) / d) * r_max * force; then integrates
// (friction, semi-implicit Euler, wrap). Writes to particles_out at the particle's own index, or
// at k on a reorder step (data then sits in cell order); ids travel along.
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles_in (read), 2 particles_out (rw),
//   3 ids_in (read), 4 ids_out (rw), 5 matrix (read, species^2 f32), 6 cell_start (read),
//   7 cell_particles (read)

//! include common/dispatch.wgsl
//! include particle_life/grid_step_io.wgsl

// bindings 0-7 (params ... cell_particles): declared in particle_life/grid_step_io.wgsl

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let k = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (k >= params.count) { return; }
    let i = cell_particles[k];
    let me = particles_in[i];
    let x = me.position.xyz;
    let row = u32(me.position.w) * params.species;
    let home = vec3i(cell_coords(x, params));
    let grid = vec3i(params.grid.xyz);
    // No z neighbours in 2D. A loop bound made of uniforms alone makes lavapipe (Mesa 22.x) JIT
    // and leak a new variant of this shader at every dispatch (see cloth/step.wgsl); the buffer
    // size, joined with `|` (`||` would branch on the uniform), keeps the bound out of its reach.
    let reach = select(1, 0, (params.dims == 2u) | (arrayLength(&matrix) == 0u));
    var acc = vec3f(0.0);
    for (var dz = -reach; dz <= reach; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            for (var dx = -1; dx <= 1; dx++) {
                let c = (home + vec3i(dx, dy, dz) + grid) % grid;
                let cell = cell_index(vec3u(c), params);
                var end = params.count;
                if (cell + 1u < params.grid.w) { end = cell_start[cell + 1u]; }
                for (var n = cell_start[cell]; n < end; n++) {
                    let j = cell_particles[n];
                    if (j == i) { continue; }
                    let other = particles_in[j];
                    acc += pair_term(x, other, matrix[row + u32(other.position.w)], params);
                }
            }
        }
    }
    acc *= params.r_max * params.force;
    let dst = select(i, k, params.reorder == 1u);
    particles_out[dst] = pl_integrate(me, acc, params);
    ids_out[dst] = ids_in[i];
}
