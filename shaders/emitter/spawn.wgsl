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
// host's births take the lowest ranks; with EVENT_TARGET, rank r >= the emitter's
// inbox.host_budget belongs to the link whose births [birth_base, birth_base + stored x count)
// hold it, and is born from record records_base + record_base + (r - birth_base) / count: its
// shape centred where the parent was, with
// inherit x the parent's velocity added (emitter/event_types.wgsl). Every birth then goes through
// born_particle (emitter/modifiers.wgsl: attributes zeroed, birth expressions, `init`).
//
// The scans run over a whole batch of emitters: ranks count from the emitter's first block,
// births use the emitter's own slot numbers, and its alive list starts at alive_base.
//
// Workgroup size 256 = one block (8 free-mask words); each workgroup takes BLOCKS_PER_GROUP
// consecutive blocks of the batch, one after the other; dispatch ceil(batch blocks /
// BLOCKS_PER_GROUP) workgroups, folded into (x, y) past the per-dimension limit (group = y * nx
// + x). Why several blocks: a workgroup of one block does too little to pay for its launch and
// barrier (at 16M slots, 65536 of them).
// Override: BLOCKS_PER_GROUP (the host's choice, >= 1).
// Bindings (group 0): 0 emitters (read: EmitterParams per emitter of the batch),
//                     1 particles (rw, the batch's arena),
//                     2 free_mask (read), 3 free_offset (read: F, the exclusive scan of the
//                       free slots per block), 4 alive_list (rw, the batch's: values are the
//                       emitter's own slots), 5 block_owner (read: the emitter of each block),
//                     6 budget (read: the counters, RECORD_WORDS words per emitter, word 0 =
//                       Counters.budget),
//                     7 inboxes (read: one EventInbox per emitter), 8 event_records (read:
//                       EventRecord array, each emitter's from its inbox.records_base);
//                     7 and 8 are read only with EVENT_TARGET (8: one record otherwise)
//                     group 1: 0 attributes (rw, only with custom attributes: generated code),
//                     1 particle_colors and 2 event_colors (only for an emitter carrying colour:
//                     systems/emitter/color.py)

//! include common/dispatch.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/event_types.wgsl
//! include emitter/modifiers.wgsl

// true when events of other emitters spawn into this one
override EVENT_TARGET: bool = false;
override BLOCKS_PER_GROUP: u32 = 1u;

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> free_mask: array<u32>;
@group(0) @binding(3) var<storage, read> free_offset: array<u32>;
@group(0) @binding(4) var<storage, read_write> alive_list: array<u32>;
@group(0) @binding(5) var<storage, read> block_owner: array<u32>;
// a plain view of Counters (whose atomics a read-only binding cannot declare)
@group(0) @binding(6) var<storage, read> budget: array<u32>;
@group(0) @binding(7) var<storage, read> inboxes: array<EventInbox>;
@group(0) @binding(8) var<storage, read> event_records: array<EventRecord>;

// free slots per mask word of this workgroup's blocks
var<workgroup> word_free: array<u32, BLOCKS_PER_GROUP * BLOCK_WORDS>;

// What every slot of a block needs of its emitter and the scans, loaded once per block
// before the slots run: the loads depend on each other (block -> owner -> its first block's
// scan), so one invocation per block fetching them side by side hides that chain's latency
// once per workgroup instead of once per block.
struct BlockSpan {
    owner: u32,
    live: u32,         // 1: the block lies in the batch
    first_block: u32,  // the owner's
    capacity: u32,
    first_rank: u32,   // free slots of the owner before this block
    births: u32,       // the owner's budget this step
    alive_base: u32,   // where the owner's alive list starts
};
var<workgroup> spans: array<BlockSpan, BLOCKS_PER_GROUP>;

// the emitter of a birth (private, so that modifier code reads `params` as a uniform); loaded
// only where a slot is born: the other slots need four of its words, not all 64
var<private> params: EmitterParams;
// the event record a birth comes from (NO_EVENT_RECORD: the host's), for modifier code: a target
// carrying colour gives the birth its record's colour (systems/emitter/color.py)
const NO_EVENT_RECORD: u32 = 0xffffffffu;
var<private> birth_record: u32;

// The birth of free rank `rank` of emitter `owner`: the host's (centred on the emitter) below
// its inbox's host_budget, else from the event record the rank belongs to (an emitter no events
// reach has no links). One call of spawn_particle_at either way (a second inlined copy of the
// births made lavapipe's spawn markedly slower).
fn birth(p: EmitterParams, owner: u32, slot: u32, rank: u32) -> Particle {
    var origin = p.origin.xyz;
    var added = p.inherit.xyz;
    birth_record = NO_EVENT_RECORD;
    if (EVENT_TARGET && rank >= inboxes[owner].host_budget) {
        let base = inboxes[owner].records_base;
        for (var l = 0u; l < inboxes[owner].link_count; l++) {
            let link = inboxes[owner].links[l];
            let offset = rank - link.birth_base;   // wraps past every range when rank < birth_base
            if (rank >= link.birth_base && offset < link.stored * link.count) {
                birth_record = base + link.record_base + offset / link.count;
                let record = event_records[birth_record];
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
    let first = folded_workgroup(wid, groups) * BLOCKS_PER_GROUP;   // the group's first block
    for (var b = lid; b < BLOCKS_PER_GROUP; b += BLOCK) {
        let block = first + b;
        let owner = block_owner[min(block, arrayLength(&block_owner) - 1u)];
        let first_block = emitters[owner].first_block;
        spans[b] = BlockSpan(owner, u32(block < emitters[owner].batch_blocks), first_block,
                             emitters[owner].capacity,
                             free_offset[min(block, arrayLength(&free_offset) - 1u)]
                                 - free_offset[first_block],
                             budget[owner * RECORD_WORDS], emitters[owner].alive_base);
    }
    for (var w = lid; w < BLOCKS_PER_GROUP * BLOCK_WORDS; w += BLOCK) {
        // a word past the mask is only read by blocks past the batch, which do nothing
        word_free[w] = countOneBits(free_mask[min(first * BLOCK_WORDS + w,
                                                  arrayLength(&free_mask) - 1u)]);
    }
    workgroupBarrier();
    for (var j = 0u; j < BLOCKS_PER_GROUP; j++) {
        spawn_slot(first + j, spans[j], j * BLOCK_WORDS, lid);
    }
}

// Slot lid of the batch's block `block`: born if its free rank is below the budget, then listed
// if alive. `words`: where the block's counts start in word_free.
fn spawn_slot(block: u32, span: BlockSpan, words: u32, lid: u32) {
    if (span.live == 0u) { return; }
    let i = (block - span.first_block) * BLOCK + lid;   // the emitter's slot
    if (i >= span.capacity) { return; }
    let g = block * BLOCK + lid;                          // the arena's
    let word = free_mask[g / 32u];
    let bit = 1u << (g % 32u);
    var free_before = countOneBits(word & (bit - 1u));
    for (var k = 0u; k < lid / 32u; k++) { free_before += word_free[words + k]; }
    let first_rank = span.first_rank;
    let births = span.births;
    var born_before = 0u;   // births in this block before this slot
    if (births > first_rank) {
        born_before = min(free_before, births - first_rank);
    }
    var alive = (word & bit) == 0u;
    let rank = first_rank + free_before;
    if (!alive && rank < births) {
        params = emitters[span.owner];
        particles[g] = birth(params, span.owner, i, rank);
        alive = true;
    }
    if (alive) {   // alive slots before the block: its slots, less the free, plus their births
        let alive_rank = (block - span.first_block) * BLOCK - first_rank + min(births, first_rank);
        alive_list[span.alive_base + alive_rank + lid - free_before + born_before] = i;
    }
}
