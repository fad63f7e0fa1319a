// emitter/light_append.wgsl  --  pass `<entity>:emitter:light_append` (compute, RENDER phase;
// emitters with emit_light, alone)
//
// Makes the emitter's brightest alive particles point lights: those whose bin is above the
// threshold (emitter/light_threshold.wgsl), and of the threshold bin the first `room` in
// alive-list order. Entry k's light is number (particles above the bin before k) + min(particles
// in the bin before k, room) of the emitter's, from light_select.base in the scene's lights
// (common/point_light_types.wgsl), while LIGHT_CAPACITY allows: at the particle's position, with
// the emitter's range, coloured by the particle's colour over life x alpha x intensity. Its slot
// goes to light_select.slots at the same number. "Before k": the block offsets scanned from
// emitter/light_mark.wgsl's counts, plus a workgroup scan of the block's own.
// Workgroup size BLOCK; dispatch one workgroup per block of the pool (folded).
// Bindings (group 0): 0-4 as emitter/light_particles.wgsl, 5 light_select (read_write),
// 6 light_blocks (read: exclusive prefix sums over [above counts, in-bin counts]),
// 7 light_params (uniform), 8 point_lights (read_write).

//! include common/dispatch.wgsl
//! include common/point_light_types.wgsl
//! include emitter/light_particles.wgsl

@group(0) @binding(5) var<storage, read_write> light_select: LightSelect;
@group(0) @binding(6) var<storage, read> light_blocks: array<u32>;
@group(0) @binding(7) var<uniform> light_params: EmitLightParams;
@group(0) @binding(8) var<storage, read_write> point_lights: array<PointLight>;

// per entry of the block: (above) | (in the bin) << 16, scanned inclusively in place
var<workgroup> ranks: array<u32, BLOCK>;

@compute @workgroup_size(BLOCK)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
    let block = folded_workgroup(wid, groups);
    let blocks = emitters[0].block_count;
    let e = light_entry(block * BLOCK + lid);
    let threshold = light_select.threshold;
    let valid = e.bin != NO_BIN && block < blocks;
    let above = valid && (threshold == NO_BIN || e.bin > threshold);
    let tied = valid && !above && e.bin == threshold;
    let mine = select(0u, 1u, above) | (select(0u, 1u, tied) << 16u);
    ranks[lid] = mine;
    workgroupBarrier();
    for (var offset = 1u; offset < BLOCK; offset <<= 1u) {   // Hillis-Steele, inclusive
        var add = 0u;
        if (lid >= offset) { add = ranks[lid - offset]; }
        workgroupBarrier();
        ranks[lid] += add;
        workgroupBarrier();
    }
    if (!(above || tied)) { return; }
    let before = ranks[lid] - mine;   // exclusive within the block
    let above_before = light_blocks[block] + (before & 0xffffu);
    let tied_before = light_blocks[blocks + block] - light_blocks[blocks] + (before >> 16u);
    if (tied && tied_before >= light_select.room) { return; }
    let n = above_before + min(tied_before, light_select.room);
    light_select.slots[n] = e.slot;
    let index = light_select.base + n;
    if (index >= LIGHT_CAPACITY) { return; }
    var light: PointLight;
    light.position_range = vec4f(e.position, light_params.range);
    light.color = vec4f(e.color.rgb * max(e.color.a, 0.0) * light_params.intensity, 0.0);
    point_lights[index] = light;
}
