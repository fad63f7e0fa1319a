// post/bloom_combine.wgsl  --  pass `<entity>:post:bloom_combine` (POST phase)
//
// Adds intensity x the blurred bright part (bilinear from half size) to the image.
// Workgroup size (16, 16); dispatch over the full-size image.
// Bindings (group 0): 0 settings (uniform BloomSettings), 1 source (texture_2d<f32>, full size),
//   2 bloom (texture_2d<f32>, half size), 3 linear_sampler,
//   4 output_image (texture_storage_2d<rgba16float, write>, full size)

//! include post/bloom_types.wgsl

@group(0) @binding(0) var<uniform> settings: BloomSettings;
@group(0) @binding(1) var source: texture_2d<f32>;
@group(0) @binding(2) var bloom: texture_2d<f32>;
@group(0) @binding(3) var linear_sampler: sampler;
@group(0) @binding(4) var output_image: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let size = textureDimensions(source);
    if (gid.x >= size.x || gid.y >= size.y) { return; }
    let uv = (vec2f(gid.xy) + 0.5) / vec2f(size);
    let glow = textureSampleLevel(bloom, linear_sampler, uv, 0.0).rgb;
    let color = textureLoad(source, vec2i(gid.xy), 0);
    textureStore(output_image, vec2i(gid.xy), vec4f(color.rgb + settings.intensity * glow, color.a));
}
