// emitter/update.wgsl  --  pass `<entity>:emitter:update`
//
// Ages and integrates every alive particle: per substep h = fixed_dt / substeps,
// a = gravity - drag v + sum of the forces (attractors, fields, vector fields); v += a h;
// x += v h (semi-implicit Euler); then, with HAS_COLLISIONS, out of every solid it entered with
// the collision response (emitter/collide.wgsl). A particle in a kill zone or an attractor's
// kill radius dies, and one that touched a collider loses its material's lifetime share (or
// dies, with kill). With EVENT_KINDS, its death, collision and age events of the step are
// marked for the sub-emitters (emitter/event_marks.wgsl). An emitter's `update` modifier runs
// after each substep's integration (and collisions), its `init` after every birth here
// (emitter/modifiers.wgsl: no-ops without modifiers).
// Dead slots are then handled by ALLOCATION:
//   0 ordered: set the slot's bit in free_mask and count the block's free slots in block_free;
//              common/scan_*.wgsl ranks them and emitter/spawn.wgsl gives births to the lowest
//   1 atomic:  take one unit of the step's budget with atomicSub, undoing an underflow
//   2 ticket:  take a monotonic ticket with atomicAdd; born while ticket < budget
// In modes 1 and 2 the births happen here, so this pass also writes the alive mask and the
// block's alive count that the compaction (scan + emitter/compact.wgsl) reads.
//
// One dispatch serves a whole batch of like emitters (EmitterParams in emitter/types.wgsl): a
// workgroup finds its block's emitter in block_owner and works in that emitter's slot numbers
// (births and modifiers see the same slots as the emitter would alone).
// Workgroup size 256 = one block of 8 mask words; dispatch one workgroup per block of the batch,
// folded into (x, y) past the per-dimension limit (block = y * nx + x, slot = block * 256 + lid).
// Bindings (group 0): 0 emitters (read: EmitterParams per emitter of the batch),
//                     1 particles (rw, the batch's arena), 2 counters (rw: Counters per emitter),
//                     3 mask (rw: free bits in mode 0, alive bits otherwise; 8 words per block),
//                     4 block_count (rw: free or alive slots per block),
//                     5 forces (read: MAX_FORCES Force records per emitter, common/forces.wgsl),
//                     6 block_owner (read: the emitter of each block),
//                     7 collision (read: CollisionSet), 8 colliders (read: SolidCollider),
//                     9 volume_refs (read: VolumeRef), 10 volumes (read: packed samples),
//                     11 scene_depth (texture_depth_2d: what the last render drew),
//                     12 event_marks (rw: GPU events of this step, emitter/event_marks.wgsl)
//                     group 1: 0 attributes (rw, only with custom attributes: generated code)

//! include common/dispatch.wgsl
//! include common/random.wgsl
//! include emitter/fields.wgsl
//! include emitter/collide.wgsl
//! include emitter/types.wgsl
//! include emitter/event_marks.wgsl
//! include emitter/modifiers.wgsl

// Allocation modes (override ALLOCATION); the host maps the scene's allocation by name.
const ALLOCATION_ORDERED: u32 = 0u;
const ALLOCATION_ATOMIC: u32 = 1u;
const ALLOCATION_TICKET: u32 = 2u;
override ALLOCATION: u32 = ALLOCATION_ORDERED;
// false when the scene has no force entities: the force loop is compiled out (CPU backends run
// the straight-line update several times faster)
override HAS_FORCES: bool = true;
// false unless the emitter has a collision material and colliders act on it
override HAS_COLLISIONS: bool = false;

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read_write> counters: array<Counters>;
@group(0) @binding(3) var<storage, read_write> mask: array<u32>;
@group(0) @binding(4) var<storage, read_write> block_count: array<u32>;
@group(0) @binding(5) var<storage, read> forces: array<Force>;
@group(0) @binding(6) var<storage, read> block_owner: array<u32>;
// bindings 7, 8, 11: what particles touch (declared in emitter/collide.wgsl); 9, 10: the
// volumes vector fields and SDFs sample (common/volumes.wgsl)

var<workgroup> block_mask: array<atomic<u32>, BLOCK_WORDS>;
// this workgroup's emitter: its record and its index in the batch (private, so that modifier
// code reads `params` as it would a uniform)
var<private> params: EmitterParams;
var<private> owner: u32;

fn take_budget() -> bool {
    if (ALLOCATION == ALLOCATION_ATOMIC) {
        let before = atomicSub(&counters[owner].budget, 1u);
        // Valid only if a unit was there: 1 <= before <= budget. Once some invocation has taken
        // the counter below zero it wraps to ~4e9 until that invocation's undo lands, and anyone
        // subtracting meanwhile sees such a value, so a test of "before == 0" alone would
        // let them through; the upper bound catches it, and they undo too.
        if (before == 0u || before > params.budget) {
            atomicAdd(&counters[owner].budget, 1u);
            return false;
        }
        return true;
    }
    let ticket = atomicAdd(&counters[owner].tickets, 1u);
    return ticket < params.budget;
}

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);   // in the batch
    owner = block_owner[min(block, arrayLength(&block_owner) - 1u)];
    params = emitters[owner];
    let local_block = block - params.first_block;   // in the emitter (past its end: no slots)
    if (lid < BLOCK_WORDS) { atomicStore(&block_mask[lid], 0u); }
    clear_events(lid);
    workgroupBarrier();

    let i = local_block * BLOCK + lid;   // the emitter's slot
    let g = block * BLOCK + lid;         // the arena's
    if (i < params.capacity) {
        let p = particles[g];
        let lifetime = p.velocity_lifetime.w;
        var alive = p.position_age.w < lifetime;
        if (alive) {
            let drag = params.gravity.w;
            let h = params.h / f32(params.substeps);
            var x = p.position_age.xyz;
            var v = p.velocity_lifetime.xyz;
            var killed = false;
            var collided = false;   // touched a collider during this step
            var life = lifetime;
            var age_shift = 0.0;    // seconds the update modifier added to the age
            if (HAS_UPDATE) { begin_update(i); }
            if ((!HAS_FORCES || params.force_count == 0u) && !HAS_COLLISIONS) {
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
                    if (HAS_FORCES) {
                        for (var k = 0u; k < params.accelerate_end; k++) {
                            a += emitter_force(forces[params.force_base + k], x, v);
                        }
                    }
                    v += a * h;
                    x += v * h;
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
                            killed = killed || force_kills(forces[params.force_base + k], x);
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
            alive = age < life;
            mark_events(lid, !alive, collided, p.position_age.w, age, params.age_event_rate);
        }
        if (!alive && ALLOCATION != ALLOCATION_ORDERED && take_budget()) {
            particles[g] = born_particle(spawn_particle(params, i), i, params);
            atomicAdd(&counters[owner].born, 1u);
            alive = true;
        }
        // mode 0 marks free slots (births come later); modes 1, 2 mark the final alive slots
        if (alive == (ALLOCATION != ALLOCATION_ORDERED)) {
            atomicOr(&block_mask[lid / 32u], 1u << (lid % 32u));
        }
    }

    workgroupBarrier();
    if (local_block < params.block_count) {
        if (lid < BLOCK_WORDS) { mask[block * BLOCK_WORDS + lid] = atomicLoad(&block_mask[lid]); }
        if (lid == 0u) {
            var n = 0u;
            for (var k = 0u; k < BLOCK_WORDS; k++) { n += countOneBits(atomicLoad(&block_mask[k])); }
            block_count[block] = n;
        }
    }
    store_events(local_block, lid, params.block_count);
}
