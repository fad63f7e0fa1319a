// common/shadow.wgsl: the directional light's shadow lookup for lit draws (no pass of its own).
//
// A receiving draw declares `shadow_map: texture_depth_2d` and `shadow_sampler:
// sampler_comparison` (runtime/core/shadows.py receiver_bindings) and passes them here with the
// frame (common/frame.wgsl: light_view_proj, shadow). The map holds, per texel, the depth of the
// caster nearest the light in the light's orthographic box (0 near, 1 far).
//
// PCF: SHADOW_TAPS x SHADOW_TAPS lookups spread evenly over a square of radius frame.shadow.y
// texels, each a bilinear blend of four comparisons (the sampler's linear filter), averaged.
// Slope-scaled bias: the point is compared a little nearer the light, by one texel's world size
// plus the depth the surface's slope (tan of the angle to the light) gains across the kernel,
// so a surface does not shadow itself (acne) while a caster resting on it stays grounded.
// Outside the box sideways nothing casts (1); beyond its far side the point compares as the
// far side, unbiased, so whatever was drawn there shadows it.

const SHADOW_TAPS: i32 = 4;
const SHADOW_MAX_SLOPE: f32 = 4.0;   // tan of the steepest angle the bias follows (76 degrees)

// 1 where the scene light reaches world point `world` with unit normal `n`, 0 in shadow.
fn shadow_visibility(f: Frame, map: texture_depth_2d, cmp: sampler_comparison, world: vec3f,
                     n: vec3f) -> f32 {
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
    return lit / f32(SHADOW_TAPS * SHADOW_TAPS);
}
