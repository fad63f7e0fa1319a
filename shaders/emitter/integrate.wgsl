// emitter/integrate.wgsl: one step of one particle slot (no pass of its own). Included by the
// passes that step an emitter: emitter/update.wgsl (every allocation mode, ranks in later
// passes) and emitter/update_ranked.wgsl (ordered allocation ranked in the same pass).
//
// Ages and integrates an alive particle: per substep h = fixed_dt / substeps,
// a = gravity - drag v + sum of the forces (attractors, fields, vector fields); v += a h;
// x += v h (semi-implicit Euler); then, with HAS_COLLISIONS, out of every solid it entered with
// the collision response (common/collide.wgsl). A particle in a kill zone or an attractor's
// kill radius dies, and one that touched a collider loses its material's lifetime share (or
// dies, with kill). With EVENT_KINDS, its death, collision and age events of the step are
// marked for the sub-emitters (emitter/event_marks.wgsl). An emitter's `update` modifier runs
// after each substep's integration (and collisions) (emitter/modifiers.wgsl: no-ops without
// modifiers). With an emitter's neighbours feature (emitter/neighbour_hooks.wgsl says what it
// swaps in), other particles accelerate it each substep (boids), and its flock box and speed
// limit hold after each substep's integration.
//
// A workgroup serves one block of BLOCK slots of a batch of like emitters (EmitterParams in
// emitter/types.wgsl): it finds its block's emitter in block_owner (enter_block) and works in
// that emitter's slot numbers, so births and modifiers see the same slots as the emitter would
// alone.
// Bindings (group 0): 0 emitters (read: EmitterParams per emitter of the batch),
//                     2 particles (rw, the batch's arena),
//                     5 forces (read: MAX_FORCES Force records per emitter, common/forces.wgsl),
//                     6 block_owner (read: the emitter of each block),
//                     7 collision (read: CollisionSet), 8 colliders (read: SolidCollider),
//                     9 volume_refs (read: VolumeRef), 10 volumes (read: packed samples),
//                     11 scene_depth (texture_depth_2d: what the last render drew),
//                     12 event_marks (rw: GPU events of this step, emitter/event_marks.wgsl)
//                     group 1 or 2 (the including pass says): 0 attributes (rw, only with
//                     custom attributes: generated code)

//! include common/random.wgsl
//! include emitter/fields.wgsl
//! include common/collide.wgsl
//! include emitter/types.wgsl
//! include emitter/event_marks.wgsl
//! include emitter/modifiers.wgsl
//! include emitter/neighbour_hooks.wgsl

// false when the scene has no force entities: the force loop is compiled out (CPU backends run
// the straight-line update several times faster)
override HAS_FORCES: bool = true;
// false unless the emitter has a collision material and colliders act on it
override HAS_COLLISIONS: bool = false;

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(2) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(5) var<storage, read> forces: array<Force>;
@group(0) @binding(6) var<storage, read> block_owner: array<u32>;
// bindings 7, 8, 11: what particles touch (declared in common/collide.wgsl); 9, 10: the
// volumes vector fields and SDFs sample (common/volumes.wgsl)

// this workgroup's emitter: its record and its index in the batch (private, so that modifier
// code reads `params` as it would a uniform)
var<private> params: EmitterParams;
var<private> owner: u32;

// The force records of the workgroup's emitter, copied from `forces` by load_forces: the force
// loop reads them here for every particle of the tile rather than from the storage buffer,
// whose lines the particles streaming through the cache would evict (docs/performance.md has
// the figures).
var<workgroup> forces_here: array<Force, MAX_FORCES>;

// Makes the batch's block `block` this workgroup's (its emitter in `params` and `owner`);
// returns the block's number in that emitter (past its last block: no slots).
fn enter_block(block: u32) -> u32 {
    owner = block_owner[min(block, arrayLength(&block_owner) - 1u)];
    params = emitters[owner];
    return block - params.first_block;
}

// Copies the forces acting on the workgroup's emitter (entered with enter_block) into
// forces_here; every invocation of the workgroup calls it, and it ends with a barrier.
fn load_forces(lid: u32) {
    if (HAS_FORCES) {
        for (var k = lid; k < params.force_count; k += BLOCK) {
            forces_here[k] = forces[params.force_base + k];
        }
    }
    workgroupBarrier();
}

// One step of the emitter's slot i (arena slot g, lane lid of the block; load_forces ran),
// whose particle the caller loaded (`p`, so that it may load the next one before this one's
// store): the particle is written back if it was alive at the start. Returns whether it is alive
// after the step (births are the caller's).
fn integrate_slot(lid: u32, i: u32, g: u32, p: Particle) -> bool {
    let lifetime = p.velocity_lifetime.w;
    if (!(p.position_age.w < lifetime)) { return false; }
    let drag = params.gravity.w;
    let h = params.h / f32(params.substeps);
    var x = p.position_age.xyz;
    var v = p.velocity_lifetime.xyz;
    var killed = false;
    var collided = false;   // touched a collider during this step
    var life = lifetime;
    var age_shift = 0.0;    // seconds the update modifier added to the age
    if (HAS_UPDATE) { begin_update(i); }
    if ((!HAS_FORCES || params.force_count == 0u) && !HAS_COLLISIONS && !HAS_NEIGHBOURS) {
        // without forces or colliders: no loops at all (far faster on CPU backends)
        for (var s = 0u; s < params.substeps; s++) {
            v += (params.gravity.xyz - drag * v) * h;
            x += v * h;
            if (HAS_UPDATE) {
                update_particle(i, &x, &v, &life, &age_shift,
                                p.position_age.w + f32(s + 1u) * h, s, h);
            }
        }
    } else {
        for (var s = 0u; s < params.substeps && !killed; s++) {
            var a = params.gravity.xyz - drag * v;
            if (HAS_NEIGHBOURS) { a += neighbour_acceleration(g, x, v); }
            if (HAS_FORCES) {
                for (var k = 0u; k < params.accelerate_end; k++) {
                    a += emitter_force(forces_here[k], x, v);
                }
            }
            v += a * h;
            x += v * h;
            if (HAS_NEIGHBOURS) { neighbour_constrain(&x, &v); }
            if (HAS_COLLISIONS) {   // back out of solids, then the response
                let moved = collide_particle(x, v);
                x = moved.position;
                v = moved.velocity;
                collided = collided || moved.collided;
            }
            if (HAS_UPDATE) {
                update_particle(i, &x, &v, &life, &age_shift,
                                p.position_age.w + f32(s + 1u) * h, s, h);
            }
            if (HAS_FORCES) {
                for (var k = params.kill_start; k < params.force_count; k++) {
                    killed = killed || force_kills(forces_here[k], x);
                }
            }
        }
    }
    if (HAS_UPDATE) { end_update(i); }
    let age = p.position_age.w + params.h + age_shift;
    if (HAS_COLLISIONS && collided) {   // the material: lifetime loss, death on contact
        life -= collision.material.z * life;
        killed = killed || collision.material.w > 0.5;
    }
    if (killed) { life = min(life, age); }   // dead from now on: age >= lifetime
    particles[g] = Particle(vec4f(x, age), vec4f(v, life));
    let alive = age < life;
    mark_events(lid, !alive, collided, p.position_age.w, age, params.age_event_rate);
    return alive;
}
