// fluid/surface_cover.wgsl: where the screen-space water covers the image, shared by the passes
// that shade it and write its depth (no pass of its own).
//
// An including pass declares, besides `frame` (common/frame.wgsl),
//   var<uniform> params: SurfaceParams;          (fluid/surface_types.wgsl)
//   var<storage, read> surface: array<vec2f>;    (per pixel: t, thickness; t = 0: no water)
//
// The silhouette fades over EDGE pixels (edge_fade: the smoothstep of the share of the pixels
// around that have water), so the splatted spheres' outline does not show as a row of lit rims.
// The water counts as opaque, and writes its depth into the scene's, where that fade is at least
// one half (covers_opaquely): the faint outer fringe writes none.

const EDGE: i32 = 2;                 // pixels over which the silhouette fades
const DEPTH_MARGIN: f32 = 0.05;      // how far in front of the water an opaque surface must be to
                                     // hide it, in splatted radii (the water's own written depth
                                     // lies within float rounding of its surface)

// The surface point at distance t along the ray of `pixel`.
fn surface_point(pixel: vec2i, t: f32) -> vec3f {
    let ray = pixel_ray(frame.inverse_view_proj, vec2f(pixel) + 0.5, params.size);
    return ray.origin + ray.direction * t;
}

// NDC depth (0 near .. 1 far) of the world point `p` in the frame's view.
fn ndc_depth(p: vec3f) -> f32 {
    let clip = frame.view_proj * vec4f(p, 1.0);
    return clip.z / clip.w;
}

// The share of the pixels within EDGE of `pixel` (a square) that have water.
fn water_around(pixel: vec2i) -> f32 {
    let limit = vec2i(params.size) - 1;
    var found = 0.0;
    for (var j = -EDGE; j <= EDGE; j++) {
        for (var i = -EDGE; i <= EDGE; i++) {
            let at = clamp(pixel + vec2i(i, j), vec2i(0), limit);
            found += select(0.0, 1.0, surface[u32(at.y) * params.size.x + u32(at.x)].x > 0.0);
        }
    }
    let side = f32(2 * EDGE + 1);
    return found / (side * side);
}

// How much of the water's colour a pixel shows at the silhouette: 0 outside, 1 inside.
fn edge_fade(pixel: vec2i) -> f32 {
    return smoothstep(0.35, 0.75, water_around(pixel));
}

// Whether the water at `pixel` is opaque enough to write its depth (see the header).
fn covers_opaquely(pixel: vec2i) -> bool {
    return edge_fade(pixel) >= 0.5;
}

// The NDC depth an opaque surface must be nearer than to hide the water at distance t along the
// ray of `pixel` (DEPTH_MARGIN in front of it).
fn hiding_depth(pixel: vec2i, t: f32) -> f32 {
    return ndc_depth(surface_point(pixel, max(t - DEPTH_MARGIN * params.optics.z, 0.0)));
}
