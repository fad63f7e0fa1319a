// common/shadow.wgsl: the directional light's shadow lookup for lit draws (no pass of its own).
//
// A receiving draw declares `shadow_map: texture_depth_2d`, `shadow_sampler:
// sampler_comparison` and `shadow_opacity: texture_2d<f32>` (runtime/core/shadows.py
// receiver_bindings) and passes them here with the frame (common/frame.wgsl: light_view_proj,
// shadow). The map holds, per texel, the depth of the caster nearest the light in the light's
// orthographic box (0 near, 1 far). The opacity layers (emitter/opacity.wgsl) hold, per texel
// of a map SHADOW_OPACITY_SCALE times coarser, the optical depth of the particles that cast, in
// four slabs of the box's depth (channels r, g, b, a, nearest the light first).
//
// PCF: SHADOW_TAPS x SHADOW_TAPS lookups spread evenly over a square of radius frame.shadow.y
// texels, each a bilinear blend of four comparisons (the sampler's linear filter), averaged.
// Slope-scaled bias: the point is compared a little nearer the light, by one texel's world size
// plus the depth the surface's slope (tan of the angle to the light) gains across the kernel,
// so a surface does not shadow itself (acne) while a caster resting on it stays grounded.
// Outside the box sideways nothing casts (1); beyond its far side the point compares as the
// far side, unbiased, so whatever was drawn there shadows it.

// Opacity: the light reaching the point is exp(-tau), tau the layers' optical depth in front of
// it: whole slabs nearer the light, and of the point's own slab the share in front of it (its
// particles taken as spread evenly through it), bilinear between the four nearest texels.

const SHADOW_TAPS: i32 = 4;
// the opacity map is this many times coarser than the depth map (runtime/core/shadows.py reads it)
const SHADOW_OPACITY_SCALE: u32 = 4u;
const SHADOW_LAYERS: f32 = 4.0;   // slabs of the light box's depth: the opacity map's channels
const SHADOW_MAX_SLOPE: f32 = 4.0;   // tan of the steepest angle the bias follows (76 degrees)

// The optical depth of the opacity layers at shadow-map coordinates `uv`, in front of light
// depth `depth` (0..1).
fn shadow_optical_depth(f: Frame, opacity: texture_2d<f32>, uv: vec2f, depth: f32) -> f32 {
    let size = vec2i(textureDimensions(opacity));
    let at = uv * vec2f(size) - 0.5;
    let corner = vec2i(floor(at));
    let w = at - floor(at);
    let low = vec2i(0);
    let high = size - 1;
    let a = textureLoad(opacity, clamp(corner, low, high), 0);
    let b = textureLoad(opacity, clamp(corner + vec2i(1, 0), low, high), 0);
    let c = textureLoad(opacity, clamp(corner + vec2i(0, 1), low, high), 0);
    let d = textureLoad(opacity, clamp(corner + vec2i(1, 1), low, high), 0);
    let layers = mix(mix(a, b, w.x), mix(c, d, w.x), w.y);
    let front = clamp(vec4f(depth * SHADOW_LAYERS) - vec4f(0.0, 1.0, 2.0, 3.0), vec4f(0.0),
                      vec4f(1.0));
    return dot(layers, front);
}

// 1 where the scene light reaches world point `world` with unit normal `n`, 0 in shadow; the
// share that passes the particles' opacity in between.
fn shadow_visibility(f: Frame, map: texture_depth_2d, cmp: sampler_comparison,
                     opacity: texture_2d<f32>, world: vec3f, n: vec3f) -> f32 {
    if (f.shadow.x < 0.5) { return 1.0; }
    let clip = f.light_view_proj * vec4f(world, 1.0);
    let uv = vec2f(0.5 + 0.5 * clip.x, 0.5 - 0.5 * clip.y);
    if (any(uv < vec2f(0.0)) || any(uv > vec2f(1.0))) { return 1.0; }
    // depth per world unit along the light: the length of the matrix's z row
    let m = f.light_view_proj;
    let depth_scale = length(vec3f(m[0].z, m[1].z, m[2].z));
    let cosine = clamp(abs(dot(n, f.light_direction.xyz)), 1e-3, 1.0);
    let slope = min(sqrt(1.0 - cosine * cosine) / cosine, SHADOW_MAX_SLOPE);
    let bias = f.shadow.w * (1.0 + (f.shadow.y + 1.0) * slope) * depth_scale;
    // beyond the far side every caster is nearer the light: compared unbiased as the far side
    let depth = select(max(clip.z, 0.0) - bias, 1.0, clip.z >= 1.0);
    let step = 2.0 * f.shadow.y / f32(SHADOW_TAPS - 1) * f.shadow.z;
    let first = uv - vec2f(f.shadow.y * f.shadow.z);
    var lit = 0.0;
    for (var i = 0; i < SHADOW_TAPS; i++) {
        for (var j = 0; j < SHADOW_TAPS; j++) {
            lit += textureSampleCompareLevel(map, cmp, first + step * vec2f(f32(i), f32(j)),
                                             depth);
        }
    }
    let tau = shadow_optical_depth(f, opacity, uv, clamp(clip.z, 0.0, 1.0));
    return lit / f32(SHADOW_TAPS * SHADOW_TAPS) * exp(-tau);
}

// The visibility at world point `point` with no surface there (a particle's centre): the map
// compared at the four texels around it with one texel's bias and blended bilinearly (textureLoad:
// no sampler, so a vertex stage may call it), times the opacity layers' exp(-tau).
fn shadow_visibility_at(f: Frame, map: texture_depth_2d, opacity: texture_2d<f32>,
                        point: vec3f) -> f32 {
    if (f.shadow.x < 0.5) { return 1.0; }
    let clip = f.light_view_proj * vec4f(point, 1.0);
    let uv = vec2f(0.5 + 0.5 * clip.x, 0.5 - 0.5 * clip.y);
    if (any(uv < vec2f(0.0)) || any(uv > vec2f(1.0))) { return 1.0; }
    let m = f.light_view_proj;
    let bias = f.shadow.w * length(vec3f(m[0].z, m[1].z, m[2].z));
    let depth = select(max(clip.z, 0.0) - bias, 1.0, clip.z >= 1.0);
    let size = vec2i(textureDimensions(map));
    let at = uv * vec2f(size) - 0.5;
    let corner = vec2i(floor(at));
    let w = at - floor(at);
    var lit = vec4f(0.0);
    let offsets = array<vec2i, 4>(vec2i(0, 0), vec2i(1, 0), vec2i(0, 1), vec2i(1, 1));
    for (var k = 0; k < 4; k++) {
        let texel = clamp(corner + offsets[k], vec2i(0), size - 1);
        lit[k] = select(0.0, 1.0, depth <= textureLoad(map, texel, 0));
    }
    let visible = mix(mix(lit.x, lit.y, w.x), mix(lit.z, lit.w, w.x), w.y);
    return visible * exp(-shadow_optical_depth(f, opacity, uv, clamp(clip.z, 0.0, 1.0)));
}
