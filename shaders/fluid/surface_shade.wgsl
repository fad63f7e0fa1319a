// fluid/surface_shade.wgsl  --  pass `<entity>:fluid:surface:shade` (render phase, compute)
//
// The water composited into the scene image. Per pixel with water (smoothed t > 0): the
// surface point on the pixel's ray; it is hidden where the scene's depth is nearer by more than
// DEPTH_MARGIN (what was drawn in front of the water stays; where the water is nearest, the
// scene depth holds its own surface, written by fluid/surface_depth.wgsl before this pass). Its
// normal comes from the smoothed depth: the cross product of the differences to the row's and
// the column's neighbours, each taken on the side whose t is closer (so an edge does not bend
// it), facing the camera; it is also written to `normals` (xyz, w = 1 where water is seen, 0
// elsewhere). Shading: Schlick's Fresnel mixes a reflected sky gradient (params.horizon,
// zenith, ground) with the refracted background: the scene image before the water
// (`background`), read between pixels at an offset along the normal's screen part scaled by the
// thickness and (1 - 1/ior) (at most params.smoothing.z pixels), where what lies there is behind
// the water (the scene depth there is farther, or the water's own). Beer-Lambert absorption
// tint^(absorption x thickness) filters it, the tint lit by the scene light fills in what was
// absorbed, and a Blinn-Phong highlight of the scene's directional light is added. The point
// lights of the pixel's tile (common/point_lights.wgsl) light the tint too. The silhouette fades
// (fluid/surface_cover.wgsl).
// Workgroup size (16, 16); dispatch (ceil(w / 16), ceil(h / 16), 1).
// Bindings (group 0): 0 frame (uniform Frame), 1 params (uniform SurfaceParams),
//   2 surface (read vec2f per pixel: t, thickness), 3 background (texture_2d<f32>),
//   4 scene_depth (texture_depth_2d), 5 normals (rw vec4f per pixel),
//   6 output_image (texture_storage_2d<rgba16float, write>: the scene image), 7 linear_sampler
//   (sampler: the background read between pixels), 8 point_lights (read), 9 light_tiles (read)

//! include common/frame.wgsl
//! include fluid/surface_types.wgsl
//! include common/point_lights.wgsl
//! include fluid/surface_cover.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: SurfaceParams;
@group(0) @binding(2) var<storage, read> surface: array<vec2f>;
@group(0) @binding(3) var background: texture_2d<f32>;
@group(0) @binding(4) var scene_depth: texture_depth_2d;
@group(0) @binding(5) var<storage, read_write> normals: array<vec4f>;
@group(0) @binding(6) var output_image: texture_storage_2d<rgba16float, write>;
@group(0) @binding(7) var linear_sampler: sampler;
@group(0) @binding(8) var<storage, read> point_lights: array<PointLight>;
@group(0) @binding(9) var<storage, read> light_tiles: array<u32>;

const SHININESS: f32 = 180.0;      // the highlight's Blinn-Phong exponent
const HIGHLIGHT: f32 = 1.6;        // its strength, times the light's colour
const SCATTER: f32 = 0.3;          // how much of the lit tint fills in absorbed light

// The difference of the surface point at `pixel` to its neighbour along `step`, taken on the
// side whose t is closer to the pixel's (a side without water is skipped); zero: neither side.
fn tangent(pixel: vec2i, t: f32, p: vec3f, step: vec2i) -> vec3f {
    let limit = vec2i(params.size) - 1;
    let a = clamp(pixel + step, vec2i(0), limit);
    let b = clamp(pixel - step, vec2i(0), limit);
    let ta = surface[u32(a.y) * params.size.x + u32(a.x)].x;
    let tb = surface[u32(b.y) * params.size.x + u32(b.x)].x;
    let da = select(1e30, abs(ta - t), ta > 0.0 && any(a != pixel));
    let db = select(1e30, abs(tb - t), tb > 0.0 && any(b != pixel));
    if (min(da, db) > 1e29) { return vec3f(0.0); }
    if (da <= db) { return surface_point(a, ta) - p; }
    return p - surface_point(b, tb);
}

// Whether the scene depth at `at` is at or in front of NDC depth `depth` and is not the water's
// own surface there (which fluid/surface_depth.wgsl wrote; the background holds what is behind).
fn opaque_in_front(at: vec2i, depth: f32) -> bool {
    let drawn = textureLoad(scene_depth, at, 0);
    if (drawn > depth) { return false; }
    let t = surface[u32(at.y) * params.size.x + u32(at.x)].x;
    return t == 0.0 || drawn < hiding_depth(at, t);
}

fn sky_color(r: vec3f) -> vec3f {
    if (r.y < 0.0) {
        return mix(params.horizon.rgb, params.ground.rgb, smoothstep(0.0, 0.3, -r.y));
    }
    return mix(params.horizon.rgb, params.zenith.rgb, smoothstep(0.0, 0.7, r.y));
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let size = params.size;
    if (gid.x >= size.x || gid.y >= size.y) { return; }
    let k = gid.y * size.x + gid.x;
    let here = surface[k];
    normals[k] = vec4f(0.0);
    if (here.x == 0.0) { return; }
    let pixel = vec2i(gid.xy);
    let ray = pixel_ray(frame.inverse_view_proj, vec2f(pixel) + 0.5, size);
    let p = ray.origin + ray.direction * here.x;
    let depth = ndc_depth(p);
    // behind what was drawn in front of it (the water's own written depth does not hide it)
    if (textureLoad(scene_depth, pixel, 0) < hiding_depth(pixel, here.x)) { return; }

    let dx = tangent(pixel, here.x, p, vec2i(1, 0));
    let dy = tangent(pixel, here.x, p, vec2i(0, 1));
    var n = cross(dy, dx);
    let view = -ray.direction;
    if (dot(n, n) < 1e-20) { n = view; }
    n = normalize(n);
    if (dot(n, view) < 0.0) { n = -n; }
    normals[k] = vec4f(n, 1.0);

    let thickness = here.y;
    let ior = params.optics.x;
    let f0 = params.optics.y;
    let facing = clamp(dot(n, view), 0.0, 1.0);
    let fresnel = f0 + (1.0 - f0) * pow(1.0 - facing, 5.0);

    // refraction: the background displaced along the normal's screen part
    let width = pixel_width(frame.inverse_view_proj, vec2f(pixel) + 0.5, size, here.x);
    let screen_normal = vec2f(dot(n, frame.camera_right.xyz), -dot(n, frame.camera_up.xyz));
    let shift = screen_normal * (thickness * (1.0 - 1.0 / ior) / max(width, 1e-9));
    let offset = shift * min(1.0, params.smoothing.z / max(length(shift), 1e-9));
    var seen = vec2f(pixel) + 0.5 + offset;
    let nearest = clamp(vec2i(floor(seen)), vec2i(0), vec2i(size) - 1);
    // what lies at the offset is in front of the water: the background straight behind instead
    if (opaque_in_front(nearest, depth)) { seen = vec2f(pixel) + 0.5; }
    let behind = textureSampleLevel(background, linear_sampler, seen / vec2f(size), 0.0);
    let transmitted = pow(max(params.tint.rgb, vec3f(1e-4)), vec3f(params.tint.w * thickness));
    let lit_tint = scene_lit(frame, params.tint.rgb, n, 1.0)
                   + params.tint.rgb * point_light_sum(frame, p, n, vec2f(pixel) + 0.5);
    let refracted = behind.rgb * transmitted + SCATTER * lit_tint * (1.0 - transmitted);

    let reflected = sky_color(reflect(ray.direction, n));
    let light = frame.light_direction.xyz;
    let halfway = normalize(light + view);
    let highlight = pow(max(dot(n, halfway), 0.0), SHININESS) * HIGHLIGHT
                    * frame.light_color.rgb * step(0.0, dot(n, light));
    // the silhouette fades over EDGE pixels, so the spheres' outline does not show as a row of
    // lit rims
    let edge = edge_fade(pixel);
    let straight = textureLoad(background, pixel, 0);
    let color = mix(straight.rgb, mix(refracted, reflected, fresnel) + highlight, edge);
    let cover = (1.0 - dot(transmitted, vec3f(1.0 / 3.0)) * (1.0 - fresnel)) * edge;
    textureStore(output_image, pixel, vec4f(color, max(straight.a, cover)));
}
