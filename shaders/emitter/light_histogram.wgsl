// emitter/light_histogram.wgsl  --  pass `<entity>:emitter:light_histogram` (compute, RENDER
// phase; emitters with emit_light, alone)
//
// Counts the emitter's alive particles per brightness bin (emitter/light_types.wgsl).
// Workgroup size BLOCK; dispatch one invocation per pool slot (folded, common/dispatch.wgsl);
// invocations past the alive count add nothing.
// Bindings (group 0): 0-4 as emitter/light_particles.wgsl, 5 light_select (read_write).

//! include common/dispatch.wgsl
//! include emitter/light_particles.wgsl

@group(0) @binding(5) var<storage, read_write> light_select: LightSelect;

@compute @workgroup_size(BLOCK)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
    let e = light_entry(folded_invocation(wid, groups, BLOCK, lid));
    if (e.bin != NO_BIN) { atomicAdd(&light_select.histogram[e.bin], 1u); }
}
