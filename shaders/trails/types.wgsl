// trails/types.wgsl: the trail family's shared structs and ring addressing (no pass of its own).
//
// Included by every trail pass. Python reads these declarations (emberfx.layout) to size and
// pack the buffers, so they are the only description of the layout. The source's particles are
// read through emitter/types.wgsl's Particle, which the including pass brings in.

// One ring of `length` positions per source slot: slot s's sample k (0 = newest) sits at
// points[s * length + (head + length - k) % length]; every sample advances head by one.
// Every pass reads this record as `var<storage, read> params`, not as a uniform: the draw
// branches on it per vertex, and lavapipe (Mesa 22.x) inlines the uniform values a branch
// reads and compiles a new copy of the shader at every draw, never freeing one (0.5-0.8 MB a
// frame here); it never inlines storage values. For the same reason no branch reads `frame`.
struct TrailParams {
    capacity: u32,        // slots of the source's pool (= rings)
    length: u32,          // samples kept per slot
    head: u32,            // ring index of the newest sample
    vertices: u32,        // per ribbon: 6 per segment, (length - 1) segments
    elapsed: f32,         // seconds from the previous sample to this step's (sample pass)
    tolerance: f32,       // seconds: half a step, the slack of an age summed step by step
    since_sample: f32,    // seconds the source ran on after the newest sample (draw)
    pad: f32,
};

// Colour (linear rgb, straight alpha) and width (world units) over the trail, newest to oldest,
// baked by the host (systems/trails/system.py) into TRAIL_SAMPLES evenly spaced samples (widths 4 per
// vec4).
const TRAIL_SAMPLES: u32 = 64u;

struct TrailLooks {
    color: array<vec4f, 64>,
    width: array<vec4f, 16>,
};

fn ring_index(params: TrailParams, slot: u32, k: u32) -> u32 {
    return slot * params.length + (params.head + params.length - k) % params.length;
}

// Whether a particle (age, lifetime now) is a new one since the slot's sample (age, lifetime
// then) taken `elapsed` seconds earlier: alive now and dead then, or a new lifetime, or an age
// that advanced less than the time between (it restarted at 0 at the birth). The emitter adds
// the step's dt to the age of every alive particle, so the same particle's age advanced by
// exactly `elapsed` up to f32 rounding, far below `tolerance`.
fn born_since(age: f32, lifetime: f32, then: vec2f, elapsed: f32, tolerance: f32) -> bool {
    let alive = age < lifetime;
    let alive_then = then.x < then.y;
    return alive && (!alive_then || lifetime != then.y || age + tolerance < then.x + elapsed);
}
