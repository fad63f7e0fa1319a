// emitter/draw_soft.wgsl  --  pass `<entity>:emitter:draw` for an emitter with `soft` > 0
// (render, drawIndirect, in a render pass whose depth attachment is read-only)
//
// Soft particles: emitter/billboard.wgsl's billboards, whose alpha is multiplied by
// clamp((d_scene - d_particle) / soft, 0, 1), so a sprite fades where it meets opaque geometry
// instead of being cut by it. Both are linear view depths (distances along the camera's forward
// axis): d_particle from the fragment's world position, d_scene from the opaque depth already
// drawn this frame, read at the fragment's pixel and unprojected through the inverse view
// projection. The depth is bound as a texture while it is the pass's read-only attachment, which
// is why soft draws need a pass of their own, after every opaque draw (their order hint).
// Draw: 6 vertices x alive-count instances, indirect. Bindings (group 0): as emitter/draw.wgsl
// (0 frame, 1 emitters, 2 particles, 3 alive_list, 4 looks, 5 sprite_looks, 6 sprite_texture,
// 7 sprite_sampler, 9 list_owner), and 8 scene_depth (texture_depth_2d: the opaque depth of this frame).

//! include emitter/billboard.wgsl

@group(0) @binding(8) var scene_depth: texture_depth_2d;

// clamp((d_scene - d_particle) / soft, 0, 1) at this fragment.
fn soft_fade(in: EmitterVertex) -> f32 {
    let size = vec2f(textureDimensions(scene_depth));
    let depth = textureLoad(scene_depth, vec2i(in.clip.xy), 0);
    let ndc = vec4f(in.clip.x / size.x * 2.0 - 1.0, 1.0 - in.clip.y / size.y * 2.0, depth, 1.0);
    let seen = frame.inverse_view_proj * ndc;
    let forward = normalize(cross(frame.camera_up.xyz, frame.camera_right.xyz));
    let gap = dot(seen.xyz / seen.w - in.world, forward);
    return clamp(gap / sprite_looks[in.owner].soft, 0.0, 1.0);
}

@fragment
fn fs_soft_additive(in: EmitterVertex) -> @location(0) vec4f {
    let a = in.color.a * sprite_falloff(in.corner) * soft_fade(in);
    return vec4f(in.color.rgb * a, 0.0);
}

@fragment
fn fs_soft_alpha(in: EmitterVertex) -> @location(0) vec4f {
    let a = in.color.a * sprite_falloff(in.corner) * soft_fade(in);
    return vec4f(in.color.rgb * a, a);
}

@fragment
fn fs_soft_textured_additive(in: EmitterVertex) -> @location(0) vec4f {
    let texel = sprite_texel(in);
    return vec4f(in.color.rgb * texel.rgb * (in.color.a * soft_fade(in)), 0.0);
}

@fragment
fn fs_soft_textured_alpha(in: EmitterVertex) -> @location(0) vec4f {
    let texel = sprite_texel(in);
    let fade = in.color.a * soft_fade(in);
    return vec4f(in.color.rgb * texel.rgb * fade, texel.a * fade);
}
