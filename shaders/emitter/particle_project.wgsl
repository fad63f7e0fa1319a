// emitter/particle_project.wgsl  --  pass `<e>:emitter:particles:project:<k>`, sweep k of an
// emitter's particle collision (systems/emitter/neighbours_feature.py)
//
// One Jacobi sweep of position-based contact projection over the particles in cell order (slot
// s of the neighbour grid built after the step; dead slots are in no cell): every pair closer
// than `contact` (2 x radius) is pushed apart along the line between them; a particle moves by
// the sum of its pairs' pushes, at most a radius a sweep (the sum, not the mean of averaged
// Jacobi: a grain resting in a pocket of several others is lifted out of all of them in one
// sweep), then out of the emitter's colliders by its radius. A pair shares its overlap by
// the particles' heights against gravity (mass scaling, Macklin et al. 2014, "Unified Particle
// Physics for Real-Time Applications", 5.2): the upper one takes 1 / (1 + exp(-STACKING dh /
// contact)) of it, so a pile's support carries up through it in a few sweeps (half each without
// gravity, or at equal heights). The sweep reads positions_in and writes positions_out (slot order),
// so it does not depend on the order threads run in.
// Workgroup size 64; dispatch ceil(slots / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 nb_params (read: NeighbourParams), 1 positions_in (read, IN_STRIDE
//   vec4f per slot, the position first), 2 positions_out (rw, one vec4f per slot), 3 emitters
//   (read: EmitterParams, the gravity); 7, 8, 9, 10,
//   11 the colliders' (common/collide.wgsl); group 1: the grid's (common/neighbours_query.wgsl)

//! include common/dispatch.wgsl
//! include common/collide.wgsl
//! include common/neighbours_query.wgsl
//! include emitter/neighbour_types.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<storage, read> nb_params: NeighbourParams;
@group(0) @binding(1) var<storage, read> positions_in: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> positions_out: array<vec4f>;
@group(0) @binding(3) var<storage, read> emitters: array<EmitterParams>;

override IN_STRIDE: u32 = 1u;
override HAS_COLLISIONS: bool = false;
const STACKING: f32 = 3.0;
const WORKGROUP_SIZE: u32 = 64u;

// x kept out of every collider by `radius` (inside = 1 colliders: kept in).
fn off_solids(x_in: vec3f, radius: f32) -> vec3f {
    var x = x_in;
    for (var k = 0u; k < collision.count; k++) {
        var s = solid_surface(k, x);
        if (s.distance == NO_CONTACT) { continue; }
        if (colliders[k].inside == 1u) { s = Surface(-s.distance, -s.normal); }
        if (s.distance < radius) { x += (radius - s.distance) * s.normal; }
    }
    return x;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let s = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (s >= nb_cell_start[nb_grid.grid.w]) { return; }   // past the live particles
    let x = positions_in[s * IN_STRIDE].xyz;
    let contact = nb_params.contact;
    let g = emitters[0].gravity.xyz;
    let g_length = length(g);
    var up = vec3f(0.0);
    if (g_length > 0.0) { up = -g / g_length; }
    var push = vec3f(0.0);
    var walk = neighbour_walk(x);
    while (neighbour_next(&walk)) {
        let t = walk.slot;
        if (t == s) { continue; }
        let d = x - positions_in[t * IN_STRIDE].xyz;
        let dist = length(d);
        if (!(dist < contact)) { continue; }
        // coincident: apart along an axis the slot order picks
        var n = select(vec3f(0.0, -1.0, 0.0), vec3f(0.0, 1.0, 0.0), s > t);
        if (dist > 0.0) { n = d / dist; }
        let share = 1.0 / (1.0 + exp(-STACKING * dot(d, up) / contact));
        push += share * (contact - dist) * n;
    }
    var y = x;
    y += push * min(1.0, 0.5 * contact / max(length(push), 1e-30));   // at most a radius
    if (HAS_COLLISIONS) { y = off_solids(y, 0.5 * contact); }
    positions_out[s] = vec4f(y, 0.0);
}
