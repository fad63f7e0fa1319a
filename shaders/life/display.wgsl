// life/display.wgsl  --  pass `<entity>:life:display` (RENDER phase, before the draw)
//
// Colours one texel per invocation into an rgba8 storage texture of at most 4096 per side; a
// larger grid is sampled, texel (tx, ty) showing cell (tx * width / tex_w, ty * height / tex_h)
// (seed 001). With a trail, each texel keeps a brightness in `trail` that is 1 while the cell
// lives and fades by trail_fade per displayed frame after it dies.
// Workgroup size (16, 16); dispatch (ceil(tex_w / 16), ceil(tex_h / 16), 1).
// Bindings (group 0): 0 params (uniform LifeParams), 1 look (uniform LifeLook), 2 state (read),
//                     3 trail (rw, one f32 per texel), 4 image (texture_storage_2d<rgba8unorm, write>)

//! include life/swar.wgsl

struct LifeLook {
    alive: vec4f,       // linear colours
    dead: vec4f,
    trail: vec4f,       // w = 1 when the trail is on
    texture: vec2u,     // texture size in texels
    trail_fade: f32,
};

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<uniform> look: LifeLook;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> trail: array<f32>;
@group(0) @binding(4) var image: texture_storage_2d<rgba8unorm, write>;

// floor(t * n / m) without overflowing u32 (t < m <= 4096)
fn scale(t: u32, n: u32, m: u32) -> u32 {
    return t * (n / m) + (t * (n % m)) / m;
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    if (gid.x >= look.texture.x || gid.y >= look.texture.y) { return; }
    let x = scale(gid.x, params.width, look.texture.x);
    let y = scale(gid.y, params.height, look.texture.y);
    let alive = ((state[y * params.stride + x / 32u] >> (x % 32u)) & 1u) == 1u;
    var color = select(look.dead, look.alive, alive);
    if (look.trail.w > 0.0) {
        let t = gid.y * look.texture.x + gid.x;
        let glow = select(trail[t] * look.trail_fade, 1.0, alive);
        trail[t] = glow;
        if (!alive) { color = mix(look.dead, look.trail, glow); }
    }
    textureStore(image, vec2i(gid.xy), vec4f(color.rgb, 1.0));
}
