// particle_life/forces_all_pairs.wgsl  --  pass `<entity>:particle_life:forces` (all_pairs)
//
// The reference neighbour search: every particle against every other (O(n^2)), same force law
// and integration as particle_life/forces.wgsl. For checking the grid and for the crossover
// benchmark; the grid is the one to use.
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles_in (read), 2 particles_out (rw),
//   3 ids_in (read), 4 ids_out (rw), 5 matrix (read, species^2 f32)

//! include common/dispatch.wgsl
//! include particle_life/types.wgsl

@group(0) @binding(0) var<uniform> params: PLParams;
@group(0) @binding(1) var<storage, read> particles_in: array<LifeParticle>;
@group(0) @binding(2) var<storage, read_write> particles_out: array<LifeParticle>;
@group(0) @binding(3) var<storage, read> ids_in: array<u32>;
@group(0) @binding(4) var<storage, read_write> ids_out: array<u32>;
@group(0) @binding(5) var<storage, read> matrix: array<f32>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let me = particles_in[i];
    let x = me.position.xyz;
    let row = u32(me.position.w) * params.species;
    var acc = vec3f(0.0);
    for (var j = 0u; j < params.count; j++) {
        if (j == i) { continue; }
        let other = particles_in[j];
        acc += pair_term(x, other, matrix[row + u32(other.position.w)], params);
    }
    particles_out[i] = pl_integrate(me, acc * params.r_max * params.force, params);
    ids_out[i] = ids_in[i];
}
