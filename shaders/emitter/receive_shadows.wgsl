// emitter/receive_shadows.wgsl: the light a sprite receives when its emitter has
// receive_shadows = true, in place of emitter/receive.wgsl in its draws (no pass of its own).
//
// A billboard has no normal: its colour is scaled by the scene light at its centre as a surface
// facing the light would get it, ambient + color x intensity x visibility, visibility looked up
// in the shadow map and the opacity layers at the centre (common/shadow.wgsl), so a sprite in
// the shadow of a solid keeps the ambient share, and a smoke column's far side from the light,
// behind its own opacity, is darker.
// Bindings (group 0), added to the draw's: 10 shadow_map (depth texture), 11 shadow_opacity
// (the particles' opacity layers)

//! include common/shadow.wgsl

@group(0) @binding(10) var shadow_map: texture_depth_2d;
@group(0) @binding(11) var shadow_opacity: texture_2d<f32>;

fn received_light(centre: vec3f) -> vec3f {
    let visibility = shadow_visibility_at(frame, shadow_map, shadow_opacity, centre);
    return vec3f(frame.light_color.w) + frame.light_color.rgb * visibility;
}
