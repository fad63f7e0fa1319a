// emitter/draw.wgsl  --  pass `<entity>:emitter:draw` (render, drawIndirect)
//
// Billboards (emitter/billboard.wgsl's vertex stage). Untextured sprites ("dot") use the soft
// round falloff of common/sprite.wgsl's fragment entry points; textured ones use fs_textured_*
// below. Soft particles draw through emitter/draw_soft.wgsl instead.
// Draw: 6 vertices x alive-count instances, indirect. Bindings (group 0): 0 frame (uniform Frame),
// 1 params (uniform EmitterParams), 2 particles (read), 3 alive_list (read), 4 looks (read),
// 5 sprite_look (read: SpriteLook), 6 sprite_texture (texture_2d<f32>), 7 sprite_sampler

//! include emitter/billboard.wgsl

@fragment
fn fs_textured_additive(in: EmitterVertex) -> @location(0) vec4f {
    let texel = sprite_texel(in);
    return vec4f(in.color.rgb * texel.rgb * in.color.a, 0.0);
}

@fragment
fn fs_textured_alpha(in: EmitterVertex) -> @location(0) vec4f {
    let texel = sprite_texel(in);
    return vec4f(in.color.rgb * texel.rgb * in.color.a, texel.a * in.color.a);
}

@fragment
fn fs_textured_opaque(in: EmitterVertex) -> @location(0) vec4f {
    let texel = sprite_texel(in);
    if (texel.a < 0.5) { discard; }   // a cutout, as the dot's edge is
    return vec4f(in.color.rgb * texel.rgb / texel.a, 1.0);
}
