// common/fullscreen.wgsl: one triangle that covers the whole target (no pass of its own, no
// bindings). A draw of 3 vertices calls fullscreen_position with its vertex index: vertices at
// clip (-1, -1), (3, -1) and (-1, 3), so every pixel centre is inside exactly once.

fn fullscreen_position(vertex: u32) -> vec4f {
    let uv = vec2f(f32((vertex << 1u) & 2u), f32(vertex & 2u));
    return vec4f(uv * 2.0 - 1.0, 0.0, 1.0);
}
