// emitter/light_particles.wgsl: an alive particle as the emit_light passes see it (no pass of its
// own): its slot, position, colour over life and brightness bin (emitter/light_types.wgsl).
// Bindings (group 0) of every pass including it: 0 emitters (read: its EmitterParams),
// 1 particles (read), 2 alive_list (read), 3 alive_totals (read: word 0 is the alive count),
// 4 looks (read Looks, emitter/looks_over_life.wgsl).

//! include emitter/light_types.wgsl
//! include emitter/looks_over_life.wgsl

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> alive_list: array<u32>;
@group(0) @binding(3) var<storage, read> alive_totals: array<u32>;

struct LightEntry {
    slot: u32,
    bin: u32,          // NO_BIN: past the alive count, or black
    position: vec3f,
    color: vec4f,      // colour over life: linear rgb, alpha
};

// Alive-list entry `k` of the emitter.
fn light_entry(k: u32) -> LightEntry {
    var e: LightEntry;
    e.bin = NO_BIN;
    if (k >= alive_totals[0]) { return e; }
    let params = emitters[0];
    e.slot = alive_list[params.alive_base + k];
    let p = particles[params.first_block * BLOCK + e.slot];
    e.position = p.position_age.xyz;
    e.color = look_color(p.position_age.w / max(p.velocity_lifetime.w, 1e-6));
    e.bin = light_bin(light_brightness(e.color));
    return e;
}
