// emitter/light_append.wgsl  --  pass `<entity>:emitter:light_append` (compute, RENDER phase;
// emitters with emit_light, alone)
//
// Makes the emitter's brightest alive particles point lights: those whose bin is above the
// threshold (emitter/light_threshold.wgsl), and of the threshold bin the first `room` to ask.
// Each light is appended to the scene's lights (common/point_lights.wgsl) after the scene's own,
// while LIGHT_CAPACITY allows, at the particle's position, with the emitter's range and the
// particle's colour over life x alpha x intensity; its slot is recorded in light_select.slots.
// Workgroup size BLOCK; dispatch one invocation per pool slot (folded); those past the alive
// count return.
// Bindings (group 0): 0 emitters (read), 1 particles (read), 2 alive_list (read),
// 3 alive_totals (read), 4 looks (read), 5 light_select (read_write), 6 light_params (uniform),
// 7 point_lights (read_write), 8 light_counts (read_write: `appended` counts the lights added).

//! include common/dispatch.wgsl
//! include common/point_light_types.wgsl
//! include emitter/light_types.wgsl
//! include emitter/looks_over_life.wgsl

struct AppendCounts {
    scene: u32,
    appended: atomic<u32>,
};

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> alive_list: array<u32>;
@group(0) @binding(3) var<storage, read> alive_totals: array<u32>;
@group(0) @binding(5) var<storage, read_write> light_select: LightSelect;
@group(0) @binding(6) var<uniform> light_params: EmitLightParams;
@group(0) @binding(7) var<storage, read_write> point_lights: array<PointLight>;
@group(0) @binding(8) var<storage, read_write> light_counts: AppendCounts;

@compute @workgroup_size(BLOCK)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
    let k = folded_invocation(wid, groups, BLOCK, lid);
    let params = emitters[0];
    if (k >= alive_totals[0]) { return; }
    let slot = alive_list[params.alive_base + k];
    let p = particles[params.first_block * BLOCK + slot];
    let color = look_color(p.position_age.w / max(p.velocity_lifetime.w, 1e-6));
    let bin = light_bin(light_brightness(color));
    if (bin == NO_BIN) { return; }
    let threshold = atomicLoad(&light_select.threshold);
    var taken = threshold == NO_BIN || bin > threshold;
    if (!taken && bin == threshold) {
        taken = atomicAdd(&light_select.ticket, 1u) < atomicLoad(&light_select.room);
    }
    if (!taken) { return; }
    let made = atomicAdd(&light_select.used, 1u);
    light_select.slots[made] = slot;
    let index = light_counts.scene + atomicAdd(&light_counts.appended, 1u);
    if (index >= LIGHT_CAPACITY) { return; }
    var light: PointLight;
    light.position_range = vec4f(p.position_age.xyz, light_params.range);
    light.color = vec4f(color.rgb * max(color.a, 0.0) * light_params.intensity, 0.0);
    point_lights[index] = light;
}
