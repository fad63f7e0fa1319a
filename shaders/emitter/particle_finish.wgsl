// emitter/particle_finish.wgsl  --  pass `<e>:emitter:particles:finish` of an emitter's particle
// collision (systems/emitter/neighbours_feature.py)
//
// After the projection sweeps (emitter/particle_project.wgsl), each live particle (slot s of the
// grid, in cell order) takes its projected position x, and from the push p = x - x0 (x0, v0: its
// position and velocity after the step's update, the grid's snapshot) loses the speed v0 had
// against it, up to |p| / h: the velocity position-based dynamics gives (v0 + p / h) where the
// push undoes this step's motion, and no more where it resolves an overlap left from earlier
// steps, which would otherwise turn into speed and keep a pile boiling. Then, against each particle it touches (closer than contact x 1.01, at
// the projected positions), with the update's velocities: the approaching normal speed vn < 0
// comes back as restitution x |vn| / 2, and friction x the relative sliding velocity / 2 is
// removed, both averaged over its contacts; against a collider it touches (its sphere within 1%
// of the surface), the speed into it goes and friction x the sliding speed too. Age and lifetime stay. The speed the push took away
// is kept as the particle's support (emitter/neighbours.wgsl gives it back in the next update).
// Workgroup size 64; dispatch ceil(slots / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 nb_params (uniform NeighbourParams), 1 emitters (read: EmitterParams,
//   the step h), 2 positions (read, one vec4f per slot: the last sweep's), 3 particles (rw),
//   4 support (rw, a vec4f per particle); 7, 8, 9, 10, 11 the colliders' (common/collide.wgsl);
//   group 1: the grid's (common/neighbours_query.wgsl; its snapshot holds x0 and v0)

//! include common/dispatch.wgsl
//! include common/collide.wgsl
//! include common/neighbours_query.wgsl
//! include emitter/neighbour_types.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> nb_params: NeighbourParams;
@group(0) @binding(1) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(2) var<storage, read> positions: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(4) var<storage, read_write> support: array<vec4f>;

override HAS_COLLISIONS: bool = false;
const WORKGROUP_SIZE: u32 = 64u;
// a contact supports a particle where its normal is within about 72 degrees of up
const SUPPORTING: f32 = 0.3;

// Whether x's sphere of `radius` rests on a collider: touches it (within 1% of the surface)
// where the surface faces up.
fn supported_by_solid(x: vec3f, radius: f32, up: vec3f) -> bool {
    for (var k = 0u; k < collision.count; k++) {
        var s = solid_surface(k, x);
        if (s.distance == NO_CONTACT) { continue; }
        if (colliders[k].inside == 1u) { s = Surface(-s.distance, -s.normal); }
        if (s.distance <= radius * 1.01 && dot(s.normal, up) > SUPPORTING) { return true; }
    }
    return false;
}

// v less friction x its sliding speed along every collider that x touches (within `radius`
// x 1.01 of the surface), and less the speed into it.
fn on_solids(x: vec3f, v_in: vec3f, radius: f32) -> vec3f {
    var v = v_in;
    for (var k = 0u; k < collision.count; k++) {
        var s = solid_surface(k, x);
        if (s.distance == NO_CONTACT) { continue; }
        if (colliders[k].inside == 1u) { s = Surface(-s.distance, -s.normal); }
        if (s.distance > radius * 1.01) { continue; }
        let vn = dot(v, s.normal);
        let sliding = v - vn * s.normal;
        v = sliding * (1.0 - nb_params.friction) + max(vn, 0.0) * s.normal;
    }
    return v;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let s = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (s >= nb_cell_start[nb_grid.grid.w]) { return; }   // past the live particles
    let h = emitters[0].h;
    let x = positions[s].xyz;
    let v0 = neighbour_record(s, 1u).xyz;
    var v = v0;
    let push = x - neighbour_position(s);
    let pushed = length(push);
    var held = vec3f(0.0);
    if (h > 0.0 && pushed > 0.0) {
        let n = push / pushed;
        held = n * min(pushed / h, max(0.0, -dot(v0, n)));
        v += held;
    }
    let reach = nb_params.contact * 1.01;
    var change = vec3f(0.0);
    var pairs = 0u;
    let g = emitters[0].gravity.xyz;
    var up = vec3f(0.0);
    if (length(g) > 0.0) { up = -g / length(g); }
    var below = false;   // touches a particle or a collider under it
    var walk = neighbour_walk(x);
    while (neighbour_next(&walk)) {
        let t = walk.slot;
        if (t == s) { continue; }
        let d = x - positions[t].xyz;
        let dist = length(d);
        if (!(dist < reach) || dist == 0.0) { continue; }
        let n = d / dist;
        let relative = v0 - neighbour_record(t, 1u).xyz;
        let vn = dot(relative, n);
        if (vn < 0.0) { change -= 0.5 * nb_params.restitution * vn * n; }
        below = below || dot(n, up) > SUPPORTING;
        change -= 0.5 * nb_params.friction * (relative - vn * n);
        pairs += 1u;
    }
    if (pairs > 0u) { v += change / f32(pairs); }
    var touching = below;
    if (HAS_COLLISIONS) {
        let before = v;
        v = on_solids(x, v, 0.5 * nb_params.contact);
        touching = touching || supported_by_solid(x, 0.5 * nb_params.contact, up);
    }
    let i = neighbour_index(s);
    let p = particles[i];
    let weight = length(g) * h;   // the speed gravity adds in a step
    var lift = 0.0;
    if (touching && weight > 0.0) {
        var kept = 0.0;
        if (p.position_age.w > 0.0) { kept = dot(support[i].xyz, up); }
        lift = clamp(kept + dot(held, up), 0.0, weight) * f32(touching);
        support[i] = vec4f(lift * up, 0.0);
    } else {
        support[i] = vec4f(0.0);
    }
    particles[i] = Particle(vec4f(x, p.position_age.w), vec4f(v, p.velocity_lifetime.w));
}
