// life/display.wgsl  --  pass `<entity>:life:display` (RENDER phase, before the draw)
//
// Colours one texel per invocation into an rgba8 storage texture of at most 4096 per side; a
// larger grid is sampled (life/look.wgsl's scale()). With a trail, a dead cell's colour is mixed
// from dead towards the trail colour by the brightness that life/trail.wgsl keeps per texel. It
// only reads the state and the trail, so drawing any number of times never changes the picture.
// Workgroup size (16, 16); dispatch (ceil(tex_w / 16), ceil(tex_h / 16), 1).
// Bindings (group 0): 0 params (uniform LifeParams), 1 look (uniform LifeLook), 2 state (read),
//                     3 trail (read, one f32 per texel),
//                     4 image (texture_storage_2d<rgba8unorm, write>)

//! include life/swar.wgsl
//! include life/look.wgsl

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<uniform> look: LifeLook;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read> trail: array<f32>;
@group(0) @binding(4) var image: texture_storage_2d<rgba8unorm, write>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    if (gid.x >= look.texture.x || gid.y >= look.texture.y) { return; }
    let x = scale(gid.x, params.width, look.texture.x);
    let y = scale(gid.y, params.height, look.texture.y);
    let alive = ((state[y * params.stride + x / 32u] >> (x % 32u)) & 1u) == 1u;
    var color = select(look.dead, look.alive, alive);
    if (look.trail.w > 0.0 && !alive) {
        color = mix(look.dead, look.trail, trail[gid.y * look.texture.x + gid.x]);
    }
    textureStore(image, vec2i(gid.xy), vec4f(color.rgb, 1.0));
}
