// emitter/looks_over_life.wgsl: the emitter's looks baked over life, read by its draws (no pass of
// its own): emitter/billboard.wgsl (sprites) and meshes/draw.wgsl (mesh particles).
//
// systems/emitter/looks.py bakes LOOK_SAMPLES colours (linear rgb, straight alpha) and sizes
// evenly over a particle's life, t = age / lifetime in 0..1; these read them, linearly
// interpolated, for emitter look_owner (a draw of a batch's emitters sets it; alone: 0).
// Bindings (group 0) of every pass including it: 4 looks (read: Looks per emitter).

//! include emitter/types.wgsl

@group(0) @binding(4) var<storage, read> looks: array<Looks>;
var<private> look_owner: u32;

fn look_color(t: f32) -> vec4f {
    let x = clamp(t, 0.0, 1.0) * f32(LOOK_SAMPLES - 1u);
    let k = min(u32(x), LOOK_SAMPLES - 2u);
    return mix(looks[look_owner].color[k], looks[look_owner].color[k + 1u], x - f32(k));
}

fn look_size(t: f32) -> f32 {
    let x = clamp(t, 0.0, 1.0) * f32(LOOK_SAMPLES - 1u);
    let k = min(u32(x), LOOK_SAMPLES - 2u);
    let a = looks[look_owner].size[k / 4u][k % 4u];
    let b = looks[look_owner].size[(k + 1u) / 4u][(k + 1u) % 4u];
    return mix(a, b, x - f32(k));
}
