// emitter/light_mark.wgsl  --  pass `<entity>:emitter:light_mark` (compute, RENDER phase;
// emitters with emit_light, alone)
//
// Per block of BLOCK alive-list entries, how many of its particles are brighter than the
// threshold bin (light_blocks[b]) and how many are in it (light_blocks[blocks + b]), for the
// PrefixScan over both halves that emitter/light_append.wgsl reads its offsets from.
// Workgroup size BLOCK; dispatch one workgroup per block of the pool (folded), `blocks` of them.
// Bindings (group 0): 0-4 as emitter/light_particles.wgsl, 5 light_select (read_write: read
// only here, it holds atomics), 6 light_blocks (read_write: 2 x blocks counts).

//! include common/dispatch.wgsl
//! include emitter/light_particles.wgsl

@group(0) @binding(5) var<storage, read_write> light_select: LightSelect;
@group(0) @binding(6) var<storage, read_write> light_blocks: array<u32>;

var<workgroup> counts: array<atomic<u32>, 2>;

@compute @workgroup_size(BLOCK)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
    let block = folded_workgroup(wid, groups);
    let blocks = emitters[0].block_count;
    if (lid < 2u) { atomicStore(&counts[lid], 0u); }
    workgroupBarrier();
    let e = light_entry(block * BLOCK + lid);
    let threshold = light_select.threshold;
    if (e.bin != NO_BIN && block < blocks) {
        if (threshold == NO_BIN || e.bin > threshold) {
            atomicAdd(&counts[0], 1u);
        } else if (e.bin == threshold) {
            atomicAdd(&counts[1], 1u);
        }
    }
    workgroupBarrier();
    if (lid == 0u && block < blocks) {
        light_blocks[block] = atomicLoad(&counts[0]);
        light_blocks[blocks + block] = atomicLoad(&counts[1]);
    }
}
