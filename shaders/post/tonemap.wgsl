// post/tonemap.wgsl  --  pass `<entity>:post:tonemap` (POST phase)
//
// Maps linear HDR colour into [0, 1]: colour * exposure through ACES (Narkowicz's fit) or
// Reinhard (c / (1 + c)), then an optional extra power 1 / gamma. The output's sRGB encoding
// (frame/present.wgsl) comes after.
// Workgroup size (16, 16); dispatch (ceil(w / 16), ceil(h / 16), 1).
// Bindings (group 0): 0 settings (uniform TonemapSettings), 1 source (texture_2d<f32>),
//                     2 output_image (texture_storage_2d<rgba16float, write>)

struct TonemapSettings {
    exposure: f32,
    inverse_gamma: f32,
    aces: u32,
};

@group(0) @binding(0) var<uniform> settings: TonemapSettings;
@group(0) @binding(1) var source: texture_2d<f32>;
@group(0) @binding(2) var output_image: texture_storage_2d<rgba16float, write>;

fn aces(x: vec3f) -> vec3f {
    return clamp((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), vec3f(0.0), vec3f(1.0));
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let size = textureDimensions(source);
    if (gid.x >= size.x || gid.y >= size.y) { return; }
    let color = textureLoad(source, vec2i(gid.xy), 0);
    let c = max(color.rgb, vec3f(0.0)) * settings.exposure;
    var mapped = c / (1.0 + c);
    if (settings.aces == 1u) { mapped = aces(c); }
    textureStore(output_image, vec2i(gid.xy), vec4f(pow(mapped, vec3f(settings.inverse_gamma)), color.a));
}
