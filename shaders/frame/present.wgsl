// frame/present.wgsl  --  pass `scene:frame:present` (render, POST phase)
//
// Copies the frame's final linear HDR image into the output (a window's surface or the offscreen
// image), clamping to [0, 1]. That image is the scene target, or the post chain's scratch image
// after an odd number of post effects. The output's sRGB format does the encoding;
// ENCODE_SRGB = true encodes by hand for a non-sRGB output format. Alpha is written as 1.
// TRANSPARENT = true (renders for compositing; the scene target was cleared to 0): the image holds
// premultiplied colour; additive draws add light without alpha, so alpha is the larger of the
// drawn alpha and the brightest channel, and the output is straight (unpremultiplied) colour.
// Draw: 3 vertices (one full-screen triangle), 1 instance.
// Bindings (group 0): 0 scene (texture_2d<f32>: the final image, read with textureLoad, no
//                     filtering)

override ENCODE_SRGB: bool = false;
override TRANSPARENT: bool = false;

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
    let texel = textureLoad(scene, vec2i(pixel.xy), 0);
    var rgb = clamp(texel.rgb, vec3f(0.0), vec3f(1.0));
    var alpha = 1.0;
    if (TRANSPARENT) {
        alpha = max(clamp(texel.a, 0.0, 1.0), max(rgb.r, max(rgb.g, rgb.b)));
        rgb = select(vec3f(0.0), min(rgb / alpha, vec3f(1.0)), alpha > 0.0);
    }
    if (ENCODE_SRGB) { rgb = linear_to_srgb(rgb); }
    return vec4f(rgb, alpha);
}
