// emitter/event_color_write.wgsl: the colour an event record carries to a target that carries a
// colour per particle (in emitter/event_write.wgsl, in place of emitter/event_color.wgsl; no pass
// of its own).
//
// Each record the write pass stores gets a colour at the same index of the target's
// `event_colors`, which the target's spawn gives the children born from that record
// (systems/emitter/color.py). Over a link with inherit_color (bit l of INHERIT_COLORS) it is the
// colour the parent shows at the event, as emitter/billboard.wgsl draws it: its look at t = age /
// lifetime (the colour over life, interpolated as emitter/looks_over_life.wgsl does), times its
// carried colour (emitter/carried_color.wgsl: white unless the source carries one), rgb times
// its colour variation; over other links, white.
// Override: INHERIT_COLORS (bit l: link l of the pass inherits the parent's colour).
// Bindings (group 1): 0 source_looks (read: the source's Looks), 1 event_colors (rw: one vec4f
// per record of the target), 2 source_colors (read, only when the source carries colour:
// emitter/carried_color_read.wgsl).

//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/carried_color.wgsl

override INHERIT_COLORS: u32 = 0u;

@group(1) @binding(0) var<storage, read> source_looks: Looks;
@group(1) @binding(1) var<storage, read_write> event_colors: array<vec4f>;

// The colour source slot `slot` shows (linear rgb, straight alpha); `params` is the source's.
fn shown_color(slot: u32, particle: Particle) -> vec4f {
    let lifetime = particle.velocity_lifetime.w;
    let t = particle.position_age.w / max(lifetime, 1e-6);
    let x = clamp(t, 0.0, 1.0) * f32(LOOK_SAMPLES - 1u);
    let k = min(u32(x), LOOK_SAMPLES - 2u);
    let look = mix(source_looks.color[k], source_looks.color[k + 1u], x - f32(k));
    let key = pcg_hash(slot ^ bitcast<u32>(lifetime));
    let shade = 1.0 + params.shape.w * (2.0 * random01(key, 1u) - 1.0);
    let color = look * carried_color(slot);
    return vec4f(color.rgb * shade, color.a);
}

fn write_event_color(slot: u32, particle: Particle, record: u32, l: u32) {
    var color = vec4f(1.0);
    if ((INHERIT_COLORS & (1u << l)) != 0u) { color = shown_color(slot, particle); }
    event_colors[record] = color;
}
