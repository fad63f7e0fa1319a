// post/bloom_extract.wgsl  --  pass `<entity>:post:bloom_extract` (POST phase)
//
// The bright part of the image at half resolution: each output texel averages a 2x2 block and
// keeps what exceeds the threshold (max(c - threshold, 0)).
// Workgroup size (16, 16); dispatch over the half-size texture.
// Bindings (group 0): 0 settings (uniform BloomSettings), 1 source (texture_2d<f32>, full size),
//                     2 output_image (texture_storage_2d<rgba16float, write>, half size)

//! include post/bloom_types.wgsl

@group(0) @binding(0) var<uniform> settings: BloomSettings;
@group(0) @binding(1) var source: texture_2d<f32>;
@group(0) @binding(2) var output_image: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let out_size = textureDimensions(output_image);
    if (gid.x >= out_size.x || gid.y >= out_size.y) { return; }
    let size = vec2i(textureDimensions(source));
    var sum = vec3f(0.0);
    for (var k = 0; k < 4; k++) {
        let p = clamp(vec2i(gid.xy) * 2 + vec2i(k % 2, k / 2), vec2i(0), size - 1);
        sum += textureLoad(source, p, 0).rgb;
    }
    textureStore(output_image, vec2i(gid.xy), vec4f(max(sum * 0.25 - settings.threshold, vec3f(0.0)), 1.0));
}
