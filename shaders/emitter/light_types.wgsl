// emitter/light_types.wgsl: what an emitter with emit_light keeps to choose its brightest
// particles as point lights each render (no pass of its own; systems/emitter/emit_light.py).
//
// A particle's brightness is the luminance (Rec. 709) of its colour over life (linear rgb, the
// looks baked by systems/emitter/looks.py) times that colour's alpha. Brightnesses from
// 2^LIGHT_LOG_LOW up fall in LIGHT_BINS bins, LIGHT_BINS_PER_OCTAVE per octave (the top bin takes
// everything brighter); a particle of brightness 0 makes no light.
// The passes: emitter/light_histogram.wgsl counts the particles per bin;
// emitter/light_threshold.wgsl finds the bin at which max_lights are reached and reserves the
// emitter's room in the scene's lights (common/point_light_types.wgsl); emitter/light_mark.wgsl
// counts, per block of BLOCK alive-list entries, the particles above that bin and those in it,
// which a PrefixScan turns into offsets; emitter/light_append.wgsl writes every particle above
// the bin and the first `room` of the bin, in alive-list order, so the same state gives the same
// lights in the same order.

//! include emitter/types.wgsl

const LIGHT_BINS: u32 = 1024u;
const LIGHT_BINS_PER_OCTAVE: f32 = 32.0;
const LIGHT_LOG_LOW: f32 = -16.0;
const NO_BIN: u32 = 0xffffffffu;

struct EmitLightParams {
    intensity: f32,     // the light's colour is the particle's rgb x alpha x intensity
    range: f32,         // world units
    max_lights: u32,    // the most lights the emitter makes
    pad: u32,
};

// per emitter, zeroed each render up to `slots`
struct LightSelect {
    histogram: array<atomic<u32>, LIGHT_BINS>,
    threshold: u32,   // the bin where the brightest max_lights end (NO_BIN: take all)
    room: u32,        // how many particles of the threshold bin are taken
    used: u32,        // lights made this render: min(particles with a bin, max_lights)
    base: u32,        // the first of them in the scene's lights, after the scene's own
    slots: array<u32>,   // the particle slot of each light made, in alive-list order
};

// Rec. 709 luminance of a linear colour times its alpha.
fn light_brightness(color: vec4f) -> f32 {
    return dot(color.rgb, vec3f(0.2126, 0.7152, 0.0722)) * max(color.a, 0.0);
}

// The histogram bin of brightness `b`, NO_BIN for none.
fn light_bin(b: f32) -> u32 {
    if (!(b > 0.0)) { return NO_BIN; }
    let x = floor((log2(b) - LIGHT_LOG_LOW) * LIGHT_BINS_PER_OCTAVE);
    return u32(clamp(x, 0.0, f32(LIGHT_BINS - 1u)));
}
