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
// Free ranks are the emitter's own: the scans run over the whole batch, so the emitter's ranks
// start at free_offset[first_block], and a block's births count from there.
//
// Workgroup size 256; dispatch ceil(batch blocks / 256) workgroups (one invocation per block).
// Bindings (group 0): 0 emitters (read: EmitterParams per emitter of the batch),
//                     1 free_offset (read, one word per block), 2 free_total (read, word 0),
//                     3 block_alive (rw, one word per block),
//                     4 counters (rw: Counters per emitter; reads budget, born += births_b),
//                     5 block_owner (read: the emitter of each block)

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read> free_offset: array<u32>;
@group(0) @binding(2) var<storage, read> free_total: array<u32>;
@group(0) @binding(3) var<storage, read_write> block_alive: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<Counters>;
@group(0) @binding(5) var<storage, read> block_owner: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let b = gid.x;
    let owner = block_owner[min(b, arrayLength(&block_owner) - 1u)];
    let params = emitters[owner];
    if (b >= params.batch_blocks) { return; }
    var next = free_total[0];
    if (b + 1u < params.batch_blocks) { next = free_offset[b + 1u]; }
    let free = next - free_offset[b];
    let first_slot = (b - params.first_block) * BLOCK;   // the block's first slot in the emitter
    var slots = 0u;
    if (first_slot < params.capacity) { slots = min(BLOCK, params.capacity - first_slot); }
    let rank = free_offset[b] - free_offset[params.first_block];   // the emitter's free ranks
    let budget = atomicLoad(&counters[owner].budget);
    var births = 0u;
    if (budget > rank) { births = min(free, budget - rank); }
    block_alive[b] = slots - free + births;
    if (births > 0u) { atomicAdd(&counters[owner].born, births); }
}
