// particle_life/grid_step_io.wgsl: the bindings every grid forces pass shares (forces.wgsl,
// forces_per_particle.wgsl, forces_gathered.wgsl, forces_half.wgsl, forces_tiled.wgsl; no pass
// of its own). The step reads one particle and id buffer and writes the other (ping-pong), and
// finds neighbours through the cell grid the grid build made.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles_in (read), 2 particles_out (rw),
//   3 ids_in (read), 4 ids_out (rw), 5 matrix (read, species^2 attractions), 6 cell_start (read,
//   exclusive scan of the cell counts), 7 cell_particles (read, particle indices cell by cell)

//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> particles_in: array<LifeParticle>;
@group(0) @binding(2) var<storage, read_write> particles_out: array<LifeParticle>;
@group(0) @binding(3) var<storage, read> ids_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> ids_out: array<u32>;
@group(0) @binding(5) var<storage, read> matrix: array<f32>;
@group(0) @binding(6) var<storage, read> cell_start: array<u32>;
@group(0) @binding(7) var<storage, read> cell_particles: array<u32>;
