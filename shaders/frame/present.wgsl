// frame/present.wgsl  --  pass `scene:frame:present` (render, POST phase)
//
// Copies the linear HDR scene texture into the output (a window's surface or the offscreen image),
// clamping to [0, 1]. The output's sRGB format does the encoding; ENCODE_SRGB = true encodes by
// hand for a non-sRGB output format. Alpha is written as 1.
// Draw: 3 vertices (one full-screen triangle), 1 instance.
// Bindings (group 0): 0 scene (texture_2d<f32>, read with textureLoad, no filtering)

override ENCODE_SRGB: bool = false;

@group(0) @binding(0) var scene: texture_2d<f32>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4f {
    let uv = vec2f(f32((vertex << 1u) & 2u), f32(vertex & 2u));
    return vec4f(uv * 2.0 - 1.0, 0.0, 1.0);
}

fn linear_to_srgb(c: vec3f) -> vec3f {
    let low = c * 12.92;
    let high = 1.055 * pow(c, vec3f(1.0 / 2.4)) - 0.055;
    return select(high, low, c <= vec3f(0.0031308));
}

@fragment
fn fs_main(@builtin(position) pixel: vec4f) -> @location(0) vec4f {
    var rgb = clamp(textureLoad(scene, vec2i(pixel.xy), 0).rgb, vec3f(0.0), vec3f(1.0));
    if (ENCODE_SRGB) { rgb = linear_to_srgb(rgb); }
    return vec4f(rgb, 1.0);
}
