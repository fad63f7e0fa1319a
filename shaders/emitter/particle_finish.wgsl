// emitter/particle_finish.wgsl  --  pass `<e>:emitter:particles:finish` of an emitter's particle
// collision (systems/emitter/neighbours_feature.py)
//
// After the projection sweeps (emitter/particle_project.wgsl), each live particle (slot s of the
// grid, in cell order) takes its projected position x, and from the push p = x - x0 (x0, v0: its
// position and velocity after the step's update, the grid's snapshot) loses the speed v0 had
// against it, up to |p| / h: the velocity position-based dynamics gives (v0 + p / h) where the
// push undoes this step's motion, and no more where it resolves an overlap left from earlier
// steps, which would otherwise turn into speed and keep a pile boiling. Against each particle it
// touches (closer than contact x 1.01), the approaching normal speed vn < 0 comes back as
// restitution x |vn| / 2 (averaged over its contacts); against a collider it touches, the speed
// into it goes. Age and lifetime stay.
// Its bed is the contacts under it (particles or colliders whose normal at it points up within
// about 72 degrees): along the bed's mean normal it keeps a support, the speed the push took away
// added to the last step's, between 0 and g h cos(the bed's slope): what holds a particle at rest
// against gravity's pull into the bed, and never more; with as much of gravity's pull along the
// slope as static friction holds (at most friction x the normal part) in the same share
// (emitter/neighbours.wgsl gives the support back in the next update; without a bed, or newborn,
// it is 0). A particle that slides loses friction x the speed taken along the normal (Coulomb),
// down to 0. So a heap stands at a slope of about atan(friction).
// Workgroup size 64; dispatch ceil(slots / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 nb_params (read: NeighbourParams), 1 emitters (read: EmitterParams,
//   the step h), 2 positions (read, one vec4f per slot: the last sweep's), 3 particles (rw),
//   4 support (rw, a vec4f per particle); 7, 8, 9, 10, 11 the colliders' (common/collide.wgsl);
//   group 1: the grid's (common/neighbours_query.wgsl; its snapshot holds x0 and v0)

//! include common/dispatch.wgsl
//! include common/collide.wgsl
//! include common/neighbours_query.wgsl
//! include emitter/neighbour_types.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<storage, read> nb_params: NeighbourParams;
@group(0) @binding(1) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(2) var<storage, read> positions: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(4) var<storage, read_write> support: array<vec4f>;

override HAS_COLLISIONS: bool = false;
const WORKGROUP_SIZE: u32 = 64u;
// a contact supports a particle where its normal is within about 72 degrees of up
const SUPPORTING: f32 = 0.3;

// The sum of the normals of the colliders x's sphere of `radius` rests on: touches (within 1%
// of the surface) where the surface faces up.
fn solid_bed(x: vec3f, radius: f32, up: vec3f) -> vec3f {
    var bed = vec3f(0.0);
    for (var k = 0u; k < collision.count; k++) {
        var s = solid_surface(k, x);
        if (s.distance == NO_CONTACT) { continue; }
        if (colliders[k].inside == 1u) { s = Surface(-s.distance, -s.normal); }
        if (s.distance <= radius * 1.01 && dot(s.normal, up) > SUPPORTING) { bed += s.normal; }
    }
    return bed;
}

// v without its speed into every collider x's sphere of `radius` touches.
fn off_solid_speed(x: vec3f, v_in: vec3f, radius: f32) -> vec3f {
    var v = v_in;
    for (var k = 0u; k < collision.count; k++) {
        var s = solid_surface(k, x);
        if (s.distance == NO_CONTACT) { continue; }
        if (colliders[k].inside == 1u) { s = Surface(-s.distance, -s.normal); }
        if (s.distance <= radius * 1.01) { v -= min(0.0, dot(v, s.normal)) * s.normal; }
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
    var bed = vec3f(0.0);   // the sum of the normals of the contacts under it
    var walk = neighbour_walk(x);
    while (neighbour_next(&walk)) {
        let t = walk.slot;
        if (t == s) { continue; }
        let d = x - positions[t].xyz;
        let dist = length(d);
        if (!(dist < reach) || dist == 0.0) { continue; }
        let n = d / dist;
        let vn = dot(v0 - neighbour_record(t, 1u).xyz, n);
        if (vn < 0.0) { change -= 0.5 * nb_params.restitution * vn * n; }
        if (dot(n, up) > SUPPORTING) { bed += n; }
        pairs += 1u;
    }
    if (pairs > 0u) { v += change / f32(pairs); }
    if (HAS_COLLISIONS) {
        v = off_solid_speed(x, v, 0.5 * nb_params.contact);
        bed += solid_bed(x, 0.5 * nb_params.contact, up);
    }
    let i = neighbour_index(s);
    let p = particles[i];
    let weight = length(g) * h;   // the speed gravity adds in a step
    var carried = 0.0;            // the support along the bed's normal
    if (weight > 0.0 && dot(bed, bed) > 0.0) {
        let normal = normalize(bed);
        let holds = weight * max(0.0, dot(normal, up));   // gravity's pull into the bed
        var kept = 0.0;
        if (p.position_age.w > 0.0) { kept = max(0.0, dot(support[i].xyz, normal)); }
        carried = clamp(kept + dot(held, normal), 0.0, holds);
        // and along the slope, what static friction holds: at most friction x the normal part
        var along = weight * up - holds * normal;
        let slope = length(along);
        if (slope > nb_params.friction * holds) { along *= nb_params.friction * holds / slope; }
        var share = 0.0;
        if (holds > 0.0) { share = carried / holds; }
        support[i] = vec4f(share * (holds * normal + along), 0.0);
    } else {
        support[i] = vec4f(0.0);
    }
    particles[i] = Particle(vec4f(x, p.position_age.w), vec4f(v, p.velocity_lifetime.w));
}
