// emitter/draw.wgsl  --  pass `<entity>:emitter:draw` (render, drawIndirect)
//
// Billboards (emitter/billboard.wgsl's vertex stage). Untextured sprites ("dot") use the soft
// round falloff of common/sprite.wgsl's fragment entry points; textured ones use fs_textured_*
// below. Soft particles draw through emitter/draw_soft.wgsl instead.
// Draw: 6 vertices x alive-count instances from the emitter's first alive-list entry, indirect
// (one per emitter of a batch). Bindings (group 0): as emitter/billboard.wgsl.

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
