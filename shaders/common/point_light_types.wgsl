// common/point_light_types.wgsl: the point lights' records, counts and tile layout (no pass of
// its own; common/point_lights.wgsl says how they light, runtime/core/point_lights.py reads the
// layouts and constants from here).

const LIGHT_CAPACITY: u32 = 1024u;   // lights in lights/list: the scene's, then the particles'
const LIGHT_TILE: u32 = 16u;         // pixels along a tile's edge
const TILE_LIGHTS: u32 = 256u;       // the most lights a tile's list holds
const TILE_STRIDE: u32 = 257u;       // words per tile in lights/tiles: the count, then the list
const LIGHT_MIN_DISTANCE: f32 = 0.01;   // world units: nearer points take the light at this

struct PointLight {
    position_range: vec4f,   // xyz: world position; w: range, world units (no light beyond)
    color: vec4f,            // rgb: linear colour x intensity; w: unused (0)
};

// lights/count as its readers see it
struct LightCounts {
    scene: u32,       // the scene's lights, at the start of lights/list
    appended: u32,    // lights appended after them this render (may exceed the room left)
};

// lights/count as a pass that appends lights sees it: it reserves entries with an atomicAdd on
// `appended`, from index scene + the value returned
struct AppendCounts {
    scene: u32,
    appended: atomic<u32>,
};
