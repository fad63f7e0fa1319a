// emitter/spawn.wgsl  --  pass `<entity>:emitter:spawn` (ordered allocation only)
//
// Births and compaction in one pass. A free slot is born when its rank among all free slots (in
// slot order) is below the step's budget; every slot alive afterwards writes itself into the
// alive list at its rank among alive slots. Both ranks are arithmetic on the scanned free counts
// per block (F = free_offset; ranks and F below count from the emitter's first block):
//   free_rank   = F[b] + free slots before it in its block
//   born_before = min(free_before, budget - F[b])   (births take the lowest free ranks)
//   alive_rank  = slots before block b - F[b] + min(budget, F[b])   (alive slots before b)
//                 + slots before it in the block - free_before + born_before
// so the pass needs no atomics, no alive mask and no alive scan; the alive list comes out in
// slot order.
// The budget is the counters' word (the host's budget plus what events add on the GPU). The
// host's births take the lowest ranks; with EVENT_TARGET, rank r >= inbox.host_budget belongs to
// the link whose births [birth_base, birth_base + stored x count) hold it, and is born from
// record record_base + (r - birth_base) / count: its shape centred where the parent was, with
// inherit x the parent's velocity added (emitter/event_types.wgsl). Every birth then goes through
// born_particle (emitter/modifiers.wgsl: attributes zeroed, birth expressions, `init`).
//
// The scans run over a whole batch of emitters: ranks count from the emitter's first block,
// births use the emitter's own slot numbers, and its alive list starts at alive_base.
//
// Workgroup size 256 = one block (8 free-mask words); dispatch one workgroup per block of the
// batch, folded into (x, y) past the per-dimension limit (block = y * nx + x).
// Bindings (group 0): 0 emitters (read: EmitterParams per emitter of the batch),
//                     1 particles (rw, the batch's arena),
//                     2 free_mask (read), 3 free_offset (read: F, the exclusive scan of the
//                       free slots per block), 4 alive_list (rw, the batch's: values are the
//                       emitter's own slots), 5 block_owner (read: the emitter of each block),
//                     6 budget (read: the counters, RECORD_WORDS words per emitter, word 0 =
//                       Counters.budget),
//                     7 inbox (read: EventInbox), 8 event_records (read: EventRecord array);
//                     7 and 8 are read only with EVENT_TARGET (8: one record otherwise)
//                     group 1: 0 attributes (rw, only with custom attributes: generated code)

//! include common/dispatch.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/event_types.wgsl
//! include emitter/modifiers.wgsl

// true when events of other emitters spawn into this one
override EVENT_TARGET: bool = false;

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> free_mask: array<u32>;
@group(0) @binding(3) var<storage, read> free_offset: array<u32>;
@group(0) @binding(4) var<storage, read_write> alive_list: array<u32>;
@group(0) @binding(5) var<storage, read> block_owner: array<u32>;
// a plain view of Counters (whose atomics a read-only binding cannot declare)
@group(0) @binding(6) var<storage, read> budget: array<u32>;
@group(0) @binding(7) var<storage, read> inbox: EventInbox;
@group(0) @binding(8) var<storage, read> event_records: array<EventRecord>;

var<workgroup> word_free: array<u32, BLOCK_WORDS>;   // free slots per mask word of this block
// the emitter of a birth (private, so that modifier code reads `params` as a uniform); loaded
// only where a slot is born: the other slots need four of its words, not all 64
var<private> params: EmitterParams;

// The birth of free rank `rank`: the host's (centred on the emitter) below inbox.host_budget,
// else from the event record the rank belongs to. One call of spawn_particle_at either way (a
// second inlined copy of the births made lavapipe's spawn markedly slower).
fn birth(p: EmitterParams, slot: u32, rank: u32) -> Particle {
    var origin = p.origin.xyz;
    var added = p.inherit.xyz;
    if (EVENT_TARGET && rank >= inbox.host_budget) {
        for (var l = 0u; l < inbox.link_count; l++) {
            let link = inbox.links[l];
            let offset = rank - link.birth_base;   // wraps past every range when rank < birth_base
            if (rank >= link.birth_base && offset < link.stored * link.count) {
                let record = event_records[link.record_base + offset / link.count];
                origin = record.position.xyz;
                added = link.inherit * record.velocity.xyz;
                break;
            }
        }
    }
    return born_particle(spawn_particle_at(p, slot, origin, added), slot, p);
}

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);   // in the batch
    let owner = block_owner[min(block, arrayLength(&block_owner) - 1u)];
    let batch_blocks = emitters[owner].batch_blocks;
    let first_block = emitters[owner].first_block;
    if (lid < BLOCK_WORDS && block < batch_blocks) {
        word_free[lid] = countOneBits(free_mask[block * BLOCK_WORDS + lid]);
    }
    workgroupBarrier();

    let i = (block - first_block) * BLOCK + lid;   // the emitter's slot
    if (block >= batch_blocks || i >= emitters[owner].capacity) { return; }
    let g = block * BLOCK + lid;                          // the arena's
    let word = free_mask[g / 32u];
    let bit = 1u << (g % 32u);
    var free_before = countOneBits(word & (bit - 1u));
    for (var k = 0u; k < lid / 32u; k++) { free_before += word_free[k]; }
    let first_rank = free_offset[block] - free_offset[first_block];
    let births = budget[owner * RECORD_WORDS];
    var born_before = 0u;   // births in this block before this slot
    if (births > first_rank) {
        born_before = min(free_before, births - first_rank);
    }
    var alive = (word & bit) == 0u;
    let rank = first_rank + free_before;
    if (!alive && rank < births) {
        params = emitters[owner];
        particles[g] = birth(params, i, rank);
        alive = true;
    }
    if (alive) {   // alive slots before the block: its slots, less the free, plus their births
        let alive_rank = (block - first_block) * BLOCK - first_rank + min(births, first_rank);
        alive_list[emitters[owner].alive_base + alive_rank + lid - free_before + born_before] = i;
    }
}
