// common/mip.wgsl  --  one mip level of a sprite texture (render, runtime/blocks/textures.py)
//
// Draw: 3 vertices (one triangle covering the target level), 1 instance, one render pass per
// level. Each target texel averages the 2x2 source texels at twice its coordinates (an odd
// size's last row or column is left out, as floor(size / 2) levels imply), colour weighted by alpha: texels keep straight alpha, and a transparent
// texel's colour must not bleed into its neighbours. textureLoad decodes sRGB to linear and the
// render target encodes it again, so the average is taken in linear light.
// Bindings (group 0): 0 source (texture_2d<f32>, the level above)

@group(0) @binding(0) var source: texture_2d<f32>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4f {
    let uv = vec2f(f32((vertex << 1u) & 2u), f32(vertex & 2u));
    return vec4f(uv * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn fs_main(@builtin(position) position: vec4f) -> @location(0) vec4f {
    let last = vec2i(textureDimensions(source)) - 1;
    let base = vec2i(position.xy) * 2;
    var weighted = vec3f(0.0);
    var alpha = 0.0;
    var plain = vec3f(0.0);
    for (var k = 0; k < 4; k++) {
        let texel = textureLoad(source, min(base + vec2i(k & 1, k >> 1), last), 0);
        weighted += texel.rgb * texel.a;
        alpha += texel.a;
        plain += texel.rgb;
    }
    // where all four are transparent the colour is unseen; keep their plain mean
    let rgb = select(plain * 0.25, weighted / max(alpha, 1e-6), alpha > 0.0);
    return vec4f(rgb, alpha * 0.25);
}
