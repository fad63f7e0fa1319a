// life/trail.wgsl  --  pass `<entity>:life:trail` (SIMULATE phase, after the step's generations)
//
// Ages the trail once per simulation step, so that the picture depends on the steps taken and
// never on how often it is drawn (a PNG after N steps equals frame N of the video of that run).
// Each texel keeps a brightness in `trail`: 1 while the cell it shows lives, then multiplied by
// trail_fade every step after it dies. The pass is only scheduled while the layer has a trail.
// Workgroup size (16, 16); dispatch (ceil(tex_w / 16), ceil(tex_h / 16), 1).
// Bindings (group 0): 0 params (uniform LifeParams), 1 look (uniform LifeLook), 2 state (read),
//                     3 trail (rw, one f32 per texel)

//! include life/swar.wgsl
//! include life/look.wgsl

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<uniform> look: LifeLook;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> trail: array<f32>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    if (gid.x >= look.texture.x || gid.y >= look.texture.y) { return; }
    let x = scale(gid.x, params.width, look.texture.x);
    let y = scale(gid.y, params.height, look.texture.y);
    let alive = ((state[y * params.stride + x / 32u] >> (x % 32u)) & 1u) == 1u;
    let t = gid.y * look.texture.x + gid.x;
    trail[t] = select(trail[t] * look.trail_fade, 1.0, alive);
}
