// emitter/types.wgsl: the emitter's shared structs and birth function (no pass of its own).
//
// Included by every emitter pass. Python reads these struct declarations (emberfx.layout) to size
// and pack buffers, so they are the only description of the layout.

//! include common/random.wgsl

// Two vec4s rather than vec3 + f32 pairs: each half is one 16-byte load/store.
struct Particle {
    position_age: vec4f,       // xyz: world units; w: seconds since birth
    velocity_lifetime: vec4f,  // xyz: world units per second; w: lifetime, seconds (0 if unused)
};                             // the slot is alive while age < lifetime

struct EmitterParams {
    origin: vec4f,           // xyz: where particles are born
    direction: vec4f,        // xyz: unit cone axis; w: cos(spread half-angle)
    gravity: vec4f,          // xyz: m/s^2; w: linear drag, 1/s
    speed_range: vec2f,      // m/s
    lifetime_range: vec2f,   // s
    capacity: u32,           // slots in the pool
    budget: u32,             // births allowed this step
    frame: u32,              // simulation step index (seeds births)
    seed: u32,               // scene seed
    entity: u32,             // entity index in the scene (seeds births)
    block_count: u32,        // ceil(capacity / 256): one mask block (8 words) per workgroup
    h: f32,                  // seconds per step
    size: f32,               // billboard edge, world units
    color_count: u32,        // stops used in colors
    substeps: u32,           // integration substeps per step
    force_count: u32,        // records in the forces array
    colors: array<vec4f, 8>, // linear rgb + alpha, evenly spaced over life
};

struct Counters {
    budget: atomic<u32>,   // atomic mode: births left this step (written by the host)
    tickets: atomic<u32>,  // ticket mode: births asked for this step
    born: atomic<u32>,     // births this step
    alive: atomic<u32>,    // alive after this step (copied from the compaction scan's total)
};

// A new particle for pool slot `slot`, from (seed, entity, slot, frame) only: never from the order
// in which invocations won the budget, so a run replays exactly.
fn spawn_particle(params: EmitterParams, slot: u32) -> Particle {
    let key = birth_key(params.seed, params.entity, slot, params.frame);
    let cos_theta = 1.0 - random01(key, 0u) * (1.0 - params.direction.w);
    let sin_theta = sqrt(max(0.0, 1.0 - cos_theta * cos_theta));
    let phi = 6.2831853 * random01(key, 1u);
    let axis = params.direction.xyz;
    var helper = vec3f(0.0, 1.0, 0.0);
    if (abs(axis.y) > 0.999) { helper = vec3f(1.0, 0.0, 0.0); }
    let tangent = normalize(cross(helper, axis));
    let bitangent = cross(axis, tangent);
    let dir = (tangent * cos(phi) + bitangent * sin(phi)) * sin_theta + axis * cos_theta;
    let speed = mix(params.speed_range.x, params.speed_range.y, random01(key, 2u));
    let lifetime = mix(params.lifetime_range.x, params.lifetime_range.y, random01(key, 3u));
    return Particle(vec4f(params.origin.xyz, 0.0), vec4f(dir * speed, lifetime));
}
