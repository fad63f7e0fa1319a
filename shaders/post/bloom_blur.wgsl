// post/bloom_blur.wgsl  --  passes `<entity>:post:bloom_blur_x`, `..._y` (POST phase)
//
// One direction of a separable Gaussian blur (sigma = radius / 2, taps -radius..radius) of the
// half-size bloom texture; run once horizontally and once vertically.
// Workgroup size (16, 16); dispatch over the half-size texture.
// Bindings (group 0): 0 settings (uniform BloomSettings), 1 source (texture_2d<f32>),
//                     2 output_image (texture_storage_2d<rgba16float, write>)

//! include post/bloom_types.wgsl

@group(0) @binding(0) var<uniform> settings: BloomSettings;
@group(0) @binding(1) var source: texture_2d<f32>;
@group(0) @binding(2) var output_image: texture_storage_2d<rgba16float, write>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let size = vec2i(textureDimensions(source));
    if (i32(gid.x) >= size.x || i32(gid.y) >= size.y) { return; }
    let r = i32(settings.radius);
    let sigma = max(f32(r) * 0.5, 0.5);
    let step = select(vec2i(0, 1), vec2i(1, 0), settings.horizontal == 1u);
    var sum = vec3f(0.0);
    var weight = 0.0;
    for (var k = -r; k <= r; k++) {
        let w = exp(-f32(k * k) / (2.0 * sigma * sigma));
        let p = clamp(vec2i(gid.xy) + step * k, vec2i(0), size - 1);
        sum += w * textureLoad(source, p, 0).rgb;
        weight += w;
    }
    textureStore(output_image, vec2i(gid.xy), vec4f(sum / weight, 1.0));
}
