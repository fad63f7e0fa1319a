// post/edge_detect_naive.wgsl  --  the same Sobel as post/edge_detect.wgsl without workgroup
// memory: every pixel loads its 3x3 neighbourhood from the texture. Kept as the reference the
// tiled version is tested against and benchmarked beside.
// Workgroup size (16, 16); dispatch (ceil(w / 16), ceil(h / 16), 1).
// Bindings (group 0): 0 settings (uniform EdgeSettings), 1 source (texture_2d<f32>),
//                     2 output_image (texture_storage_2d<rgba16float, write>)

//! include post/edge_types.wgsl

@group(0) @binding(0) var<uniform> settings: EdgeSettings;
@group(0) @binding(1) var source: texture_2d<f32>;
@group(0) @binding(2) var output_image: texture_storage_2d<rgba16float, write>;

fn lum(p: vec2i) -> f32 {
    let size = vec2i(textureDimensions(source));
    return luminance(textureLoad(source, clamp(p, vec2i(0), size - 1), 0).rgb);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let size = textureDimensions(source);
    if (gid.x >= size.x || gid.y >= size.y) { return; }
    let p = vec2i(gid.xy);
    let gx = (lum(p + vec2i(1, -1)) + 2.0 * lum(p + vec2i(1, 0)) + lum(p + vec2i(1, 1)))
           - (lum(p + vec2i(-1, -1)) + 2.0 * lum(p + vec2i(-1, 0)) + lum(p + vec2i(-1, 1)));
    let gy = (lum(p + vec2i(-1, 1)) + 2.0 * lum(p + vec2i(0, 1)) + lum(p + vec2i(1, 1)))
           - (lum(p + vec2i(-1, -1)) + 2.0 * lum(p + vec2i(0, -1)) + lum(p + vec2i(1, -1)));
    let edge = clamp(settings.strength * sqrt(gx * gx + gy * gy), 0.0, 1.0);
    let color = textureLoad(source, p, 0);
    var out = mix(color.rgb, settings.color.rgb, edge);
    if (settings.edges_only == 1u) { out = settings.color.rgb * edge; }
    textureStore(output_image, p, vec4f(out, color.a));
}
