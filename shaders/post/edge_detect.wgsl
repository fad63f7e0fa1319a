// post/edge_detect.wgsl  --  pass `<entity>:post:edge_detect` (POST phase)
//
// Sobel on luminance: each 16x16 workgroup loads its tile plus a
// one-pixel halo of luminance into workgroup memory (18x18), then every pixel reads its 3x3
// neighbourhood from there. Pixels beyond the image repeat the nearest edge pixel.
// overlay: mix(colour, edge colour, clamp(strength * |G|)); edges: edge colour * clamp(...).
// Workgroup size (16, 16); dispatch (ceil(w / 16), ceil(h / 16), 1).
// Bindings (group 0): 0 settings (uniform EdgeSettings), 1 source (texture_2d<f32>),
//                     2 output_image (texture_storage_2d<rgba16float, write>)

//! include post/edge_types.wgsl

@group(0) @binding(0) var<uniform> settings: EdgeSettings;
@group(0) @binding(1) var source: texture_2d<f32>;
@group(0) @binding(2) var output_image: texture_storage_2d<rgba16float, write>;

var<workgroup> tile: array<f32, 324>;   // 18 x 18 luminances

fn luminance_at(p: vec2i) -> f32 {
    let size = vec2i(textureDimensions(source));
    let c = textureLoad(source, clamp(p, vec2i(0), size - 1), 0).rgb;
    return luminance(c);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3u) {
    let origin = vec2i(wid.xy) * 16 - 1;   // the halo's top-left pixel
    for (var k = lid; k < 324u; k += 256u) {
        tile[k] = luminance_at(origin + vec2i(i32(k % 18u), i32(k / 18u)));
    }
    workgroupBarrier();
    let size = textureDimensions(source);
    if (gid.x >= size.x || gid.y >= size.y) { return; }
    let t = vec2u(gid.xy - wid.xy * 16u) + 1u;   // this pixel in the tile
    let at = t.y * 18u + t.x;
    let gx = (tile[at - 17u] + 2.0 * tile[at + 1u] + tile[at + 19u])
           - (tile[at - 19u] + 2.0 * tile[at - 1u] + tile[at + 17u]);
    let gy = (tile[at + 17u] + 2.0 * tile[at + 18u] + tile[at + 19u])
           - (tile[at - 19u] + 2.0 * tile[at - 18u] + tile[at - 17u]);
    let edge = clamp(settings.strength * sqrt(gx * gx + gy * gy), 0.0, 1.0);
    let color = textureLoad(source, vec2i(gid.xy), 0);
    var out = mix(color.rgb, settings.color.rgb, edge);
    if (settings.edges_only == 1u) { out = settings.color.rgb * edge; }
    textureStore(output_image, vec2i(gid.xy), vec4f(out, color.a));
}
