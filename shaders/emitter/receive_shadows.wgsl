// emitter/receive_shadows.wgsl: the light a sprite receives when its emitter has
// receive_shadows = true, in place of emitter/receive.wgsl in its draws (no pass of its own).
//
// A billboard has no normal: its colour is scaled by the scene light at its centre as a surface
// facing the light would get it, ambient + color x intensity x visibility, visibility looked up
// in the shadow map and the opacity layers at the centre (common/shadow.wgsl), so a sprite in
// the shadow of a solid keeps the ambient share, and a smoke column's far side from the light,
// behind its own opacity, is darker.
// The point lights of the tile under the centre (common/point_lights.wgsl) add to it, each as
// on a surface facing it (N.L = 1).
// Bindings (group 0), added to the draw's: 10 shadow_map (depth texture), 11 shadow_opacity
// (the particles' opacity layers), 12 point_lights (read), 13 light_tiles (read)

//! include common/shadow.wgsl
//! include common/point_lights.wgsl

@group(0) @binding(10) var shadow_map: texture_depth_2d;
@group(0) @binding(11) var shadow_opacity: texture_2d<f32>;
@group(0) @binding(12) var<storage, read> point_lights: array<PointLight>;
@group(0) @binding(13) var<storage, read> light_tiles: array<u32>;

fn received_light(centre: vec3f) -> vec3f {
    let visibility = shadow_visibility_at(frame, shadow_map, shadow_opacity, centre);
    let clip = frame.view_proj * vec4f(centre, 1.0);
    var points = vec3f(0.0);
    if (clip.w > 0.0) {   // the centre's pixel picks the tile
        let ndc = clip.xy / clip.w;
        let pixel = vec2f(0.5 + 0.5 * ndc.x, 0.5 - 0.5 * ndc.y) * frame.viewport;
        points = point_light_sum(frame, centre, vec3f(0.0), pixel);
    }
    return vec3f(frame.light_color.w) + frame.light_color.rgb * visibility + points;
}
