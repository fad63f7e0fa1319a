// common/sprite.wgsl: camera-facing sprites shared by every particle draw (no pass of its own).
//
// A draw shader includes this file and writes a vs_main that returns SpriteVertex for corner
// SPRITE_CORNERS[vertex_index] (6 vertices, two triangles); the fragment entry points here give
// the soft round falloff for each blend mode: fs_additive (one + one), fs_alpha (premultiplied
// alpha), fs_opaque (round cutout, for depth writes). runtime/blocks/sprites.py builds the pipelines.

struct SpriteVertex {
    @builtin(position) clip: vec4f,
    @location(0) corner: vec2f,   // -1..1 across the sprite
    @location(1) color: vec4f,    // linear rgb, straight alpha
};

fn sprite_corner(vertex: u32) -> vec2f {
    var corners = array<vec2f, 6>(vec2f(-1.0, -1.0), vec2f(1.0, -1.0), vec2f(1.0, 1.0),
                                  vec2f(-1.0, -1.0), vec2f(1.0, 1.0), vec2f(-1.0, 1.0));
    return corners[vertex];
}

fn sprite_falloff(corner: vec2f) -> f32 {
    let r2 = dot(corner, corner);
    if (r2 >= 1.0) { discard; }
    let s = 1.0 - r2;
    return s * s;
}

@fragment
fn fs_additive(in: SpriteVertex) -> @location(0) vec4f {
    let a = in.color.a * sprite_falloff(in.corner);
    return vec4f(in.color.rgb * a, 0.0);
}

@fragment
fn fs_alpha(in: SpriteVertex) -> @location(0) vec4f {
    let a = in.color.a * sprite_falloff(in.corner);
    return vec4f(in.color.rgb * a, a);
}

@fragment
fn fs_opaque(in: SpriteVertex) -> @location(0) vec4f {
    sprite_falloff(in.corner);
    return vec4f(in.color.rgb, 1.0);
}
