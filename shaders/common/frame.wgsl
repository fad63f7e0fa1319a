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
};
