// emitter/types.wgsl: the emitter's shared structs and birth function (no pass of its own).
//
// Included by every emitter pass. Python reads these struct declarations (emberfx.layout) to size
// and pack buffers, so they are the only description of the layout.

//! include common/random.wgsl
//! include emitter/shape_hook.wgsl
//! include emitter/life_hook.wgsl

// Two vec4s rather than vec3 + f32 pairs: each half is one 16-byte load/store.
struct Particle {
    position_age: vec4f,       // xyz: world units; w: seconds since birth
    velocity_lifetime: vec4f,  // xyz: world units per second; w: lifetime, seconds (0 if unused)
};                             // the slot is alive while age < lifetime

// One record per emitter. The simulation passes (update, count, spawn, prepare) bind a batch's
// records as `var<storage, read> emitters: array<EmitterParams>` and find a block's emitter in
// `block_owner`; the draws bind one emitter's record as `var<uniform> params` (a view into that
// array). A batch of like emitters shares one arena per buffer: emitter k owns the blocks
// [first_block, first_block + block_count) of the particles and masks and the entries
// [alive_base, alive_base + capacity) of the alive list. A lone emitter is a batch of one.
// Births read the record from storage: lavapipe (Mesa 22.x) inlines the uniform values that
// the births' branches read and JIT-compiles a new copy of the shader at every dispatch that
// rebinds its group, never freeing one; it never inlines storage values.
// The record is RECORD_WORDS words long, so that each emitter's record is a bindable view.
struct EmitterParams {
    origin: vec4f,           // xyz: the emitter's centre
    direction: vec4f,        // xyz: unit cone axis (and shape axis); w: cos(spread half-angle)
    gravity: vec4f,          // xyz: m/s^2; w: linear drag, 1/s
    inherit: vec4f,          // xyz: velocity added to every birth (share of the emitter's own)
    shape_size: vec4f,       // xyz: box half extents; w: ring inner radius
    shape: vec4f,            // x: radius; y: tan(cone angle); z: size variation; w: colour variation
    speed_range: vec2f,      // m/s
    lifetime_range: vec2f,   // s
    capacity: u32,           // slots in the pool
    budget: u32,             // births allowed this step
    frame: u32,              // simulation step index (seeds births)
    seed: u32,               // scene seed
    entity: u32,             // entity index in the scene (seeds births)
    block_count: u32,        // ceil(capacity / BLOCK): one mask block (BLOCK_WORDS) per workgroup
    h: f32,                  // seconds per step
    size: f32,               // billboard edge: world units, or pixels when size_in_pixels = 1
    shape_kind: u32,         // SHAPE_* below
    shape_surface: u32,      // 1: on the surface only
    radial: u32,             // initial direction: 0 around `direction`, 1 outward from the
                             // shape's centre, 2 along the mesh's surface normal
    size_in_pixels: u32,
    substeps: u32,           // integration substeps per step
    force_count: u32,        // records in the forces array
    accelerate_end: u32,     // forces[0 .. accelerate_end) accelerate particles
    kill_start: u32,         // forces[kill_start .. force_count) can kill them
    age_event_rate: f32,     // 1 / on_age.every (0 without on_age): age events per second of age
    time: f32,               // seconds: scene time at the start of this step (modifiers' ctx.time)
    first_block: u32,        // the emitter's first block in its batch's arena
    alive_base: u32,         // its first entry in the batch's alive list
    batch_blocks: u32,       // blocks in the whole batch (the scans' length)
    force_base: u32,         // its first record in the batch's forces array
    shape_x: vec4f,          // mesh shape: the rows of scale x rotation (xyz) and the offset
    shape_y: vec4f,          // (w) taking mesh coordinates to offsets from `origin`
    shape_z: vec4f,          // (emitter/mesh_shape.wgsl); the record is RECORD_WORDS words
};

// Words per emitter record in a batch arena (EmitterParams, Counters, draw args, alive total):
// 256 bytes, the largest storage and uniform offset alignment, so each is a bindable view.
const RECORD_WORDS: u32 = 64u;

// Slots per block: one workgroup of the update, spawn and compact passes, one bit each in
// BLOCK_WORDS mask words. The host reads these (systems/emitter/params.py).
const BLOCK: u32 = 256u;
const BLOCK_WORDS: u32 = BLOCK / 32u;

// Emission shapes (EmitterParams.shape_kind); the host maps the scene's shape.kind by name.
const SHAPE_POINT: u32 = 0u;
const SHAPE_SPHERE: u32 = 1u;
const SHAPE_BOX: u32 = 2u;
const SHAPE_DISK: u32 = 3u;
const SHAPE_CONE: u32 = 4u;
const SHAPE_RING: u32 = 5u;
const SHAPE_MESH: u32 = 6u;   // emitter/mesh_shape.wgsl, in the passes that give births
const SHAPE_LIFE: u32 = 7u;   // emitter/life_shape.wgsl, in the passes that give births

// Appearance over life, baked by the host (systems/emitter/system.py) into LOOK_SAMPLES evenly spaced
// samples: linear rgb + alpha, and the size multiplier (4 per vec4).
const LOOK_SAMPLES: u32 = 128u;

struct Looks {
    color: array<vec4f, 128>,
    size: array<vec4f, 32>,
};

struct Counters {
    budget: atomic<u32>,   // births allowed this step: written by the host (rate, bursts, scripts);
                           // ordered mode: events spawning here add theirs on the GPU
                           // (emitter/event_tally.wgsl); atomic mode: births left this step
    tickets: atomic<u32>,  // ticket mode: births asked for this step
    born: atomic<u32>,     // births this step
    alive: atomic<u32>,    // alive after this step (copied from the compaction scan's total)
    events: array<u32, 4>,        // events this emitter sent this step, by kind (EVENT_* in
                                  // emitter/event_types.wgsl; the fourth is unused)
    event_totals: array<u32, 4>,  // events sent since the pool was made, by kind: never cleared
                                  // (wraps at 2^32), so the host's differences lose none
    reserved: array<vec4u, 13>,   // pads the record to RECORD_WORDS words
};

// A unit vector within a cone of half-angle acos(cos_spread) around `axis`, from two uniforms.
fn cone_direction(axis: vec3f, cos_spread: f32, u: f32, v: f32) -> vec3f {
    let cos_theta = 1.0 - u * (1.0 - cos_spread);
    let sin_theta = sqrt(max(0.0, 1.0 - cos_theta * cos_theta));
    let phi = 6.2831853 * v;
    var helper = vec3f(0.0, 1.0, 0.0);
    if (abs(axis.y) > 0.999) { helper = vec3f(1.0, 0.0, 0.0); }
    let tangent = normalize(cross(helper, axis));
    let bitangent = cross(axis, tangent);
    return (tangent * cos(phi) + bitangent * sin(phi)) * sin_theta + axis * cos_theta;
}

struct ShapeSample {
    offset: vec3f,    // from the emitter's centre
    outward: vec3f,   // unit direction for radial velocity (the cone's own direction for cones)
};

// A birth position on (surface) or in the emitter's shape, from the key's draws 4..8.
fn sample_shape(params: EmitterParams, key: u32) -> ShapeSample {
    let axis = params.direction.xyz;
    let sphere_dir = cone_direction(vec3f(0.0, 0.0, 1.0), -1.0, random01(key, 4u), random01(key, 5u));
    let surface = params.shape_surface == 1u;
    let radius = params.shape.x;
    var out: ShapeSample;
    switch params.shape_kind {
        case SHAPE_SPHERE: {   // sphere: uniform in the ball (cube-root radius) or on the shell
            var r = radius;
            if (!surface) { r = radius * pow(random01(key, 6u), 1.0 / 3.0); }
            out.offset = sphere_dir * r;
            out.outward = sphere_dir;
        }
        case SHAPE_BOX: {   // box: uniform in the volume, or on a face chosen by its area
            let half = params.shape_size.xyz;
            var p = (vec3f(random01(key, 4u), random01(key, 5u), random01(key, 6u)) * 2.0 - 1.0) * half;
            if (surface) {
                let areas = vec3f(half.y * half.z, half.x * half.z, half.x * half.y);
                let pick = random01(key, 7u) * (areas.x + areas.y + areas.z);
                let side = select(-1.0, 1.0, random01(key, 8u) < 0.5);
                if (pick < areas.x) { p.x = side * half.x; }
                else if (pick < areas.x + areas.y) { p.y = side * half.y; }
                else { p.z = side * half.z; }
            }
            out.offset = p;
            out.outward = select(sphere_dir, normalize(p), dot(p, p) > 0.0);
        }
        case SHAPE_DISK, SHAPE_CONE, SHAPE_RING: {   // disk, cone (base disk), ring: in the plane across the axis
            var helper = vec3f(0.0, 1.0, 0.0);
            if (abs(axis.y) > 0.999) { helper = vec3f(1.0, 0.0, 0.0); }
            let tangent = normalize(cross(helper, axis));
            let bitangent = cross(axis, tangent);
            let phi = 6.2831853 * random01(key, 5u);
            let radial = tangent * cos(phi) + bitangent * sin(phi);
            var rho = radius;
            if (!surface) {
                let inner = select(0.0, params.shape_size.w, params.shape_kind == SHAPE_RING);
                rho = sqrt(mix(inner * inner, radius * radius, random01(key, 4u)));
            }
            out.offset = radial * rho;
            out.outward = radial;
            if (params.shape_kind == SHAPE_CONE) {   // cone: directions open up towards the rim
                let spread = params.shape.y * select(0.0, rho / radius, radius > 0.0);
                out.outward = normalize(axis + radial * spread);
            }
        }
        default: {   // point (a mesh without emitter/mesh_shape.wgsl: HAS_MESH_SHAPE is false)
            out.offset = vec3f(0.0);
            out.outward = sphere_dir;
        }
    }
    // a mesh: only the passes that give births to mesh emitters compile this in
    if (HAS_MESH_SHAPE && params.shape_kind == SHAPE_MESH) {
        out = sample_mesh_shape(params, key);
    }
    // a Life layer's cells: likewise only in the passes that give births to such emitters
    if (HAS_LIFE_SHAPE && params.shape_kind == SHAPE_LIFE) {
        out = sample_life_shape(params, key);
    }
    return out;
}

// A new particle for pool slot `slot`, from (seed, entity, slot, frame) only: never from the order
// in which invocations won the budget, so a run replays exactly.
fn spawn_particle(params: EmitterParams, slot: u32) -> Particle {
    return spawn_particle_at(params, slot, params.origin.xyz, params.inherit.xyz);
}

// The same, with the shape centred on `origin` and `added_velocity` on top of the sampled one
// (a birth from an event: where the parent particle was, a share of its velocity).
fn spawn_particle_at(params: EmitterParams, slot: u32, origin: vec3f,
                     added_velocity: vec3f) -> Particle {
    let key = birth_key(params.seed, params.entity, slot, params.frame);
    let where_ = sample_shape(params, key);
    var axis = params.direction.xyz;
    if (params.radial != 0u || params.shape_kind == SHAPE_CONE) { axis = where_.outward; }
    let dir = cone_direction(axis, params.direction.w, random01(key, 0u), random01(key, 1u));
    let speed = mix(params.speed_range.x, params.speed_range.y, random01(key, 2u));
    var lifetime = mix(params.lifetime_range.x, params.lifetime_range.y, random01(key, 3u));
    // a Life shape with no eligible cell this step: the birth is dropped (born dead)
    if (HAS_LIFE_SHAPE && params.shape_kind == SHAPE_LIFE && life_shape_empty()) { lifetime = 0.0; }
    return Particle(vec4f(origin + where_.offset, 0.0),
                    vec4f(dir * speed + added_velocity, lifetime));
}
