// common/point_lights.wgsl: the light a lit surface receives from the point lights (records:
// common/point_light_types.wgsl; no pass of its own).
//
// The lights live in one storage array (runtime/core/point_lights.py, resource "lights/list"):
// the scene's [entity.point_light] lights first, then the lights emitters with emit_light append
// each render. lights/cull.wgsl lists, per LIGHT_TILE x LIGHT_TILE pixel tile of the image, the
// lights whose sphere of influence meets the tile's frustum (resource "lights/tiles": per tile a
// count, then up to TILE_LIGHTS indices in increasing order).
//
// A receiving pass declares, besides `frame`,
//   var<storage, read> point_lights: array<PointLight>;
//   var<storage, read> light_tiles: array<u32>;
// (runtime/core/shadows.py receiver_bindings binds them), and calls point_light_sum.
//
// Falloff: a light of linear colour x intensity `color` at distance d (world units) gives
//   color x max(N.L, 0) / max(d^2, LIGHT_MIN_DISTANCE^2) x window(d),
//   window(d) = clamp(1 - (d / range)^4, 0, 1)^2
// (inverse square, times a window that reaches 0 at `range` smoothly).

//! include common/point_light_types.wgsl

// The inverse square times the range window for squared distance `d2` and range `range`.
fn point_light_falloff(d2: f32, range: f32) -> f32 {
    let x = d2 / (range * range);
    let window = clamp(1.0 - x * x, 0.0, 1.0);
    return window * window / max(d2, LIGHT_MIN_DISTANCE * LIGHT_MIN_DISTANCE);
}

// The tile of the pixel at framebuffer position `pixel` (a fragment's @builtin(position).xy).
fn light_tile_of(viewport: vec2f, pixel: vec2f) -> u32 {
    let columns = (u32(viewport.x) + LIGHT_TILE - 1u) / LIGHT_TILE;
    let rows = (u32(viewport.y) + LIGHT_TILE - 1u) / LIGHT_TILE;
    let at = min(vec2u(max(pixel, vec2f(0.0))) / LIGHT_TILE, vec2u(columns - 1u, rows - 1u));
    return at.y * columns + at.x;
}

// The light falling on world point `world` with unit normal `n` at pixel `pixel` from the
// lights listed for its tile: sum of color x N.L x falloff (N.L taken as 1 when `n` is zero:
// a billboard lit as a surface facing each light). Multiply by the surface's linear colour.
fn point_light_sum(f: Frame, world: vec3f, n: vec3f, pixel: vec2f) -> vec3f {
    let base = light_tile_of(f.viewport, pixel) * TILE_STRIDE;
    let count = min(light_tiles[base], TILE_LIGHTS);
    let facing = all(n == vec3f(0.0));
    var sum = vec3f(0.0);
    for (var k = 0u; k < count; k++) {
        let light = point_lights[light_tiles[base + 1u + k]];
        let to_light = light.position_range.xyz - world;
        let d2 = dot(to_light, to_light);
        let cosine = select(max(dot(n, to_light), 0.0) * inverseSqrt(max(d2, 1e-20)), 1.0,
                            facing);
        sum += light.color.rgb * (cosine * point_light_falloff(d2, light.position_range.w));
    }
    return sum;
}
