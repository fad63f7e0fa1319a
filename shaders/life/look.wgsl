// life/look.wgsl: what the Life display and trail passes share (no pass of its own): the colours
// and trail settings (LifeLook, one uniform per layer) and the texel -> cell mapping.
//
// The image and the trail are at most 4096 texels per side; a larger grid is sampled, texel
// (tx, ty) showing cell (scale(tx, width, tex_w), scale(ty, height, tex_h)).

struct LifeLook {
    alive: vec4f,       // linear colours
    dead: vec4f,
    trail: vec4f,       // w = 1 when the trail is on
    texture: vec2u,     // texture size in texels
    trail_fade: f32,    // trail brightness kept per simulation step
};

// floor(t * n / m) without overflowing u32 (t < m <= 4096)
fn scale(t: u32, n: u32, m: u32) -> u32 {
    return t * (n / m) + (t * (n % m)) / m;
}
