// common/frame.wgsl: the per-frame uniform every render pass reads (no pass of its own).
//
// Written once per displayed frame by the Engine (runtime/engine/engine.py packs it through
// emberfx.layout.struct_dtype("common/frame.wgsl", "Frame"), so this declaration is the only copy).

struct Frame {
    view_proj: mat4x4f,        // world -> clip, column vectors
    camera_right: vec4f,       // world-space unit vectors for camera-facing billboards
    camera_up: vec4f,
    camera_position: vec4f,    // xyz; w = 1 for perspective, 0 for orthographic
    viewport: vec2f,           // render size in pixels
    time: f32,                 // simulated seconds
    frame: u32,                // simulation steps taken
    light_direction: vec4f,    // xyz: unit world vector toward the scene's [light]; w = 0
    light_color: vec4f,        // rgb: linear colour x intensity; w: ambient fraction
    inverse_view_proj: mat4x4f,   // clip -> world (soft particles unproject the scene depth)
    light_view_proj: mat4x4f,     // world -> the shadow map's clip space (runtime/core/shadows.py)
    shadow: vec4f,                // x: 1 when the map holds casters; y: PCF radius in texels;
                                  // z: 1 / map resolution; w: world size of one texel
};

// The scene light of frame `f` on a surface of linear colour `base` with unit normal `n`, the
// directional term times `visibility` (1: lit, 0: in shadow; common/shadow.wgsl), the ambient
// not (runtime/model/light.py states the formula).
fn scene_lit(f: Frame, base: vec3f, n: vec3f, visibility: f32) -> vec3f {
    let lambert = max(dot(n, f.light_direction.xyz), 0.0);
    return base * (f.light_color.w + f.light_color.rgb * lambert * visibility);
}
