// emitter/count.wgsl  --  pass `<entity>:emitter:count` (ordered allocation only)
//
// Alive slots per 256-slot block after this step's births, without looking at a single slot:
// births go to the free slots of lowest rank, so block b gets
//   births_b = clamp(budget - free_offset[b], 0, free_b)
// where budget is counters.budget: the host's budget plus the births of the events spawning into
// this emitter this step (emitter/event_tally.wgsl adds them before this pass).
// and alive_b = slots_b - free_b + births_b. free_offset is the exclusive scan of the per-block
// free counts (free_b = free_offset[b + 1] - free_offset[b], the scan total for the last block).
// The alive counts are then scanned too, so emitter/spawn.wgsl can place every alive slot in the
// alive list in the same pass that gives births.
//
// Workgroup size 256; dispatch ceil(block_count / 256) workgroups (one invocation per block).
// Bindings (group 0): 0 params (uniform EmitterParams), 1 free_offset (read, block_count words),
//                     2 free_total (read, word 0), 3 block_alive (rw, block_count words),
//                     4 counters (rw: reads budget; born += births_b for blocks with births)

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read> free_offset: array<u32>;
@group(0) @binding(2) var<storage, read> free_total: array<u32>;
@group(0) @binding(3) var<storage, read_write> block_alive: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: Counters;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let b = gid.x;
    if (b >= params.block_count) { return; }
    var next = free_total[0];
    if (b + 1u < params.block_count) { next = free_offset[b + 1u]; }
    let free = next - free_offset[b];
    let slots = min(BLOCK, params.capacity - b * BLOCK);
    let budget = atomicLoad(&counters.budget);
    var births = 0u;
    if (budget > free_offset[b]) { births = min(free, budget - free_offset[b]); }
    block_alive[b] = slots - free + births;
    if (births > 0u) { atomicAdd(&counters.born, births); }
}
