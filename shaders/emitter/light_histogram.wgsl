// emitter/light_histogram.wgsl  --  pass `<entity>:emitter:light_histogram` (compute, RENDER
// phase; emitters with emit_light, alone)
//
// Counts the emitter's alive particles per brightness bin (emitter/light_types.wgsl).
// Workgroup size BLOCK; dispatch one invocation per pool slot (folded, common/dispatch.wgsl);
// invocations past the alive count return.
// Bindings (group 0): 0 emitters (read: its EmitterParams), 1 particles (read), 2 alive_list
// (read), 3 alive_totals (read: word 0 is the alive count), 4 looks (read Looks),
// 5 light_select (read_write LightSelect).

//! include common/dispatch.wgsl
//! include emitter/light_types.wgsl
//! include emitter/looks_over_life.wgsl

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> alive_list: array<u32>;
@group(0) @binding(3) var<storage, read> alive_totals: array<u32>;
@group(0) @binding(5) var<storage, read_write> light_select: LightSelect;

@compute @workgroup_size(BLOCK)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
    let k = folded_invocation(wid, groups, BLOCK, lid);
    let params = emitters[0];
    if (k >= alive_totals[0]) { return; }
    let slot = alive_list[params.alive_base + k];
    let p = particles[params.first_block * BLOCK + slot];
    let bin = light_bin(light_brightness(look_color(p.position_age.w / max(p.velocity_lifetime.w, 1e-6))));
    if (bin != NO_BIN) { atomicAdd(&light_select.histogram[bin], 1u); }
}
