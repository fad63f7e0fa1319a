// emitter/update_ranked.wgsl  --  pass `<entity>:emitter:update` (ordered allocation, one pass)
//
// The ordered step in one pass, but for the births' particles: every slot is stepped
// (emitter/integrate.wgsl), then the tile's free slots are ranked among the emitter's free slots
// by a decoupled look-back across workgroups, and which slots are born and the alive list follow
// from the ranks with the arithmetic of emitter/spawn.wgsl (F = the emitter's free slots before
// the tile, budget = Counters.budget):
//   free_rank   = F + free slots before it in its tile; born when free_rank < budget, which
//                 lists the slot in birth_slots at its free rank (emitter/births.wgsl, the next
//                 pass, gives it its particle) or, with BIRTHS_HERE, gives it its particle here
//   alive_rank  = slots before the tile - F + min(budget, F)
//                 + slots before it in the tile - free_before + min(free_before, budget - F)
// The emitter's last block publishes its alive count and draw arguments
// (emitter/publish_alive.wgsl) and adds its births to Counters.born. With the births pass,
// particles, alive list, counters and draw arguments come out exactly as from the multi-pass
// step (update, scans, count, spawn, prepare), which every adapter can run.
//
// A tile is TILE_BLOCKS consecutive blocks of one emitter (the host gives tiles of several
// blocks only to an emitter alone that sends no events; batches and event sources take tiles of
// one block, which never span two emitters). A workgroup takes tiles by ticket (tiles[TICKET])
// until none is left: it steps a tile, publishes the tile's free count, and ranks the tile
// either at once or (RANK_AFTER_NEXT) after it stepped its next tile, holding the two tiles'
// free masks in workgroup memory.
// Look-back (one state word per tile in `tiles`, past CONTROL_WORDS control words): a tile
// publishes its free count as an aggregate as soon as it is stepped; ranking it reads the words
// of up to BLOCK tiles before it at a time (one per invocation; LOOK_FIRST_LANES in the first
// round), adding aggregates until it meets an inclusive prefix (or its emitter's first tile),
// and publishes its own inclusive prefix.
// Every tile a rank waits for was taken by ticket earlier, by a workgroup that is running, and
// is published once stepped, which waits for nothing: numbering tiles by workgroup_id instead
// could wait for a workgroup that never started.
// WebGPU promises nothing about one workgroup's progress while another spins, so the host runs
// this pass only on adapters where resident workgroups keep running (systems/emitter/step.py
// says which); a wait longer than MAX_ROUNDS rounds gives up, counts itself in tiles[STALLS] and
// in the emitter's Counters.tickets (unused by ordered allocation; cleared by the host each
// step) and leaves a wrong step, which the emitter's stats then report (look_back_stalls).
// State word: value (free slots) in bits [0, 27), flag in [27, 29) (1 aggregate, 2 inclusive,
// 0 not yet), the dispatch's epoch modulo 8 in [29, 32): words of the previous dispatch read as
// not yet. The last block to finish resets the ticket and the finish count and advances the
// epoch, so the control words need no clearing between steps and start from zeros.
//
// Workgroup size 256 = one block; dispatch at most one workgroup per tile (ceil(batch blocks /
// TILE_BLOCKS)), folded into (x, y) past the per-dimension limit (the tile is the ticket, not
// the workgroup's place); fewer workgroups each take more tiles.
// Overrides: HAS_FORCES, HAS_COLLISIONS (emitter/integrate.wgsl), TILE_BLOCKS (1 to
// MAX_TILE_BLOCKS), RANK_AFTER_NEXT, BIRTHS_HERE, MAX_ROUNDS, PUBLISH_INCLUSIVE,
// PREFETCH_PARTICLES, LOOK_FIRST_LANES (1 to BLOCK).
// Bindings (group 0): 1 counters (rw: Counters per emitter), 3 alive_list (rw, the batch's:
//                     values are the emitter's own slots), 4 alive_totals (rw: word 0 of each
//                     emitter's record), 13 tiles (rw: CONTROL_WORDS control words, then one
//                     state word per tile of the batch), 15 birth_slots (rw, the batch's: the born
//                     slots by free rank, from each emitter's first slot in the arena),
//                     and those of emitter/integrate.wgsl: 0 emitters,
//                     2 particles, 5 forces, 6 block_owner, 7-11 what particles touch,
//                     12 event_marks;
//                     group 1: 0 draw_args (rw: 5 words at the start of each emitter's record;
//                       declared in emitter/publish_alive.wgsl)
//                     group 2: 0 attributes (rw, only with custom attributes: generated code;
//                       group 1 is the draw arguments')

//! include common/dispatch.wgsl
//! include emitter/integrate.wgsl
//! include emitter/publish_alive.wgsl

// control words at the start of `tiles`
const TICKET: u32 = 0u;     // tiles begun in this dispatch
const FINISHED: u32 = 1u;   // workgroups done in this dispatch
const EPOCH: u32 = 2u;      // dispatches done, modulo 2^32
const STALLS: u32 = 3u;     // waits that gave up, since the buffer was made
const CONTROL_WORDS: u32 = 4u;
// a state word
const VALUE_BITS: u32 = 27u;
const VALUE_MASK: u32 = (1u << VALUE_BITS) - 1u;
const FLAG_AGGREGATE: u32 = 1u << VALUE_BITS;
const FLAG_INCLUSIVE: u32 = 2u << VALUE_BITS;
const FLAG_MASK: u32 = 3u << VALUE_BITS;
const EPOCH_SHIFT: u32 = 29u;
const MAX_TILE_BLOCKS: u32 = 32u;
override TILE_BLOCKS: u32 = 1u;
// rounds of waiting before a tile gives up. llvmpipe leaves any loop after 65535 iterations, so
// software adapters keep the default.
override MAX_ROUNDS: u32 = 30000u;
// true: a workgroup ranks a tile only after it stepped its next tile, so that by then the tiles
// before have most likely published their counts and the look-back waits less (waiting for the
// slowest tile before is most of a large pool's look-back)
override RANK_AFTER_NEXT: bool = false;
// true: the born slots get their particles here, and no births pass follows (its launch is
// saved; the birth code's registers may cost the whole update occupancy)
override BIRTHS_HERE: bool = false;
// false (tests): tiles past their emitter's first publish only aggregates, so that every
// look-back walks back to the first tile, through as many rounds as it takes
override PUBLISH_INCLUSIVE: bool = true;
// true: each block's particle is loaded while the block before is stepped (two loads in
// flight); false: when its turn comes. Neither wins at every size; the host picks by pool size
// and forces (systems/emitter/tuning.py, TILE_BLOCKS_FROM).
override PREFETCH_PARTICLES: bool = true;
// tiles the look-back reads in its first round, one per lane (later rounds read one while the
// tile before is not yet published, and BLOCK once it is): a warp's worth covers the tiles most
// likely published by then without a second round.
override LOOK_FIRST_LANES: u32 = 32u;

@group(0) @binding(3) var<storage, read_write> alive_list: array<u32>;
@group(0) @binding(13) var<storage, read_write> tiles: array<atomic<u32>>;
@group(0) @binding(15) var<storage, read_write> birth_slots: array<u32>;

// Two tiles' free masks: with RANK_AFTER_NEXT, the tile held for ranking and the one stepped
const TILE_WORDS: u32 = MAX_TILE_BLOCKS * BLOCK_WORDS;   // at most BLOCK: one word per lane
var<workgroup> free_bits: array<atomic<u32>, 2u * TILE_WORDS>;
var<workgroup> tile_free: atomic<u32>;   // free slots of the tile being stepped
// the in-tile scan of the free slots per mask word (two rows, read one and write the other)
var<workgroup> word_scan: array<u32, 2u * BLOCK>;
var<workgroup> ticket: u32;           // the tile this workgroup steps next
var<workgroup> epoch_now: u32;        // the dispatch's epoch modulo 8
// the look-back: next tile to read + 1, sum so far, done, and the lanes reading this round
var<workgroup> look: vec4u;
// a round of the look-back: the first lane that saw a tile not yet published (or the round's
// lane count), the first that saw an inclusive prefix (BLOCK: none), the sum of the lanes
// before the stop
var<workgroup> first_waiting: atomic<u32>;
var<workgroup> first_inclusive: atomic<u32>;
var<workgroup> round_sum: atomic<u32>;

// The free slots of the emitter before tile `tile` (its `local_tile`-th), by look-back;
// `free_here`: the tile's own. Every invocation of the workgroup calls it (its loop holds
// barriers). The first round reads LOOK_FIRST_LANES tiles; after it a round reads one tile
// (lane 0) while the tile before is not yet published, and all BLOCK lanes' tiles once it found
// an aggregate there: waiting tiles then load one word a round, not BLOCK, and leave the memory
// system to the tiles still streaming particles.
fn free_before_tile(tile: u32, local_tile: u32, in_batch: bool, epoch: u32, free_here: u32,
                    lid: u32) -> u32 {
    let tag = epoch << EPOCH_SHIFT;
    let first_tile = tile - local_tile;
    if (lid == 0u) {
        look = vec4u(tile, 0u, u32(!in_batch || local_tile == 0u), LOOK_FIRST_LANES);
        atomicStore(&first_waiting, LOOK_FIRST_LANES);
        atomicStore(&first_inclusive, BLOCK);
        atomicStore(&round_sum, 0u);
    }
    var rounds = 0u;
    loop {
        let state = workgroupUniformLoad(&look);
        if (state.z == 1u) { break; }
        if (rounds == MAX_ROUNDS) {   // counted for the bench and, per step, for the host
            if (lid == 0u) {
                atomicAdd(&tiles[STALLS], 1u);
                atomicAdd(&counters[owner].tickets, 1u);
            }
            break;
        }
        rounds++;
        // lane k < state.w looks at the tile k + 1 before state.x; before the emitter's first
        // tile: an inclusive prefix of 0
        var word = tag | FLAG_INCLUSIVE;
        if (lid < state.w) {
            if (state.x >= first_tile + lid + 1u) {
                word = atomicLoad(&tiles[CONTROL_WORDS + state.x - lid - 1u]);
            }
            let flag = word & FLAG_MASK;
            if ((word >> EPOCH_SHIFT) != epoch || flag == 0u) { atomicMin(&first_waiting, lid); }
            else if (flag == FLAG_INCLUSIVE) { atomicMin(&first_inclusive, lid); }
        }
        workgroupBarrier();
        let waiting = atomicLoad(&first_waiting);
        let inclusive = atomicLoad(&first_inclusive);
        // done when an inclusive prefix comes before any tile not yet published: add the lanes
        // up to it; otherwise add the published aggregates before the first waiting tile
        let done = inclusive < waiting;
        let taken = select(waiting, inclusive + 1u, done);
        if (lid < taken) { atomicAdd(&round_sum, word & VALUE_MASK); }
        workgroupBarrier();
        if (lid == 0u) {
            // every lane read an aggregate: read wide; a tile not yet published: spin on it alone
            let lanes = select(1u, BLOCK, taken == state.w);
            look = vec4u(state.x - taken, state.y + atomicLoad(&round_sum), u32(done), lanes);
            atomicStore(&first_waiting, lanes);
            atomicStore(&first_inclusive, BLOCK);
            atomicStore(&round_sum, 0u);
        }
    }
    let exclusive = workgroupUniformLoad(&look).y;
    if (PUBLISH_INCLUSIVE && lid == 0u && in_batch && local_tile > 0u) {
        atomicStore(&tiles[CONTROL_WORDS + tile], tag | FLAG_INCLUSIVE | (exclusive + free_here));
    }
    return exclusive;
}

// Steps the batch's tile `tile` (its free slots into free_bits from `half`) and publishes its
// free count: an inclusive prefix for its emitter's first tile, an aggregate for the others.
// Nothing here waits for another workgroup.
fn step_tile(tile: u32, half: u32, lid: u32) {
    workgroupBarrier();   // the tile ranked before in this half has been read
    for (var w = lid; w < TILE_BLOCKS * BLOCK_WORDS; w += BLOCK) {
        atomicStore(&free_bits[half + w], 0u);
    }
    clear_events(lid);
    if (lid == 0u) { atomicStore(&tile_free, 0u); }
    workgroupBarrier();
    let first_block = tile * TILE_BLOCKS;
    let local_first = enter_block(first_block);   // the tile's first block in its emitter
    load_forces(lid);
    let in_batch = first_block < params.batch_blocks && local_first < params.block_count;

    let bit = 1u << (lid % 32u);
    // with PREFETCH_PARTICLES each block's particle is loaded before the previous one is
    // stored (two loads in flight); otherwise when its block's turn comes
    let last = min(params.batch_blocks * BLOCK, arrayLength(&particles)) - 1u;
    var next = Particle();
    if (PREFETCH_PARTICLES) { next = particles[min(first_block * BLOCK + lid, last)]; }
    for (var j = 0u; j < TILE_BLOCKS; j++) {
        let i = (local_first + j) * BLOCK + lid;   // the emitter's slot
        let g = (first_block + j) * BLOCK + lid;   // the arena's
        var p = next;
        if (!PREFETCH_PARTICLES) { p = particles[min(g, last)]; }
        else if (j + 1u < TILE_BLOCKS) { next = particles[min(g + BLOCK, last)]; }
        if (in_batch && i < params.capacity && !integrate_slot(lid, i, g, p)) {
            atomicOr(&free_bits[half + j * BLOCK_WORDS + lid / 32u], bit);
        }
    }
    workgroupBarrier();
    if (lid < TILE_BLOCKS * BLOCK_WORDS) {
        let free = countOneBits(atomicLoad(&free_bits[half + lid]));
        if (free > 0u) { atomicAdd(&tile_free, free); }
    }
    store_events(local_first, lid, params.block_count);
    workgroupBarrier();
    if (lid == 0u && in_batch) {   // the emitter's first tile knows its inclusive prefix at once
        let flag = select(FLAG_AGGREGATE, FLAG_INCLUSIVE, local_first == 0u);
        atomicStore(&tiles[CONTROL_WORDS + tile],
                    (epoch_now << EPOCH_SHIFT) | flag | atomicLoad(&tile_free));
    }
}

// Ranks the tile `tile` stepped into free_bits from `half`: its free slots before it in its
// emitter (look-back), then its alive list entries and born slots, and for the emitter's last
// tile its alive count, draw arguments and births.
fn rank_tile(tile: u32, half: u32, lid: u32) {
    let first_block = tile * TILE_BLOCKS;
    let local_first = enter_block(first_block);
    let in_batch = first_block < params.batch_blocks && local_first < params.block_count;
    // free slots before each mask word of the tile: an inclusive scan over the words (one per
    // lane), row `row` of word_scan holding the latest
    let words = TILE_BLOCKS * BLOCK_WORDS;
    var own = 0u;
    if (lid < words) { own = countOneBits(atomicLoad(&free_bits[half + lid])); }
    word_scan[lid] = own;
    var row = 0u;
    for (var offset = 1u; offset < words; offset *= 2u) {
        workgroupBarrier();
        var sum = word_scan[row + lid];
        if (lid >= offset) { sum += word_scan[row + lid - offset]; }
        word_scan[BLOCK - row + lid] = sum;
        row = BLOCK - row;
    }
    workgroupBarrier();
    let free_here = word_scan[row + words - 1u];

    let local_tile = local_first / TILE_BLOCKS;
    let first_rank = free_before_tile(tile, local_tile, in_batch, epoch_now, free_here, lid);
    let births = atomicLoad(&counters[owner].budget);
    // alive slots of the emitter before the tile: its slots, less the free, plus their births
    let alive_base = params.alive_base + local_first * BLOCK - first_rank + min(births, first_rank);
    let bit = 1u << (lid % 32u);
    for (var j = 0u; j < TILE_BLOCKS; j++) {
        let i = (local_first + j) * BLOCK + lid;
        if (!in_batch || i >= params.capacity) { break; }
        let w = j * BLOCK_WORDS + lid / 32u;
        let word = atomicLoad(&free_bits[half + w]);
        // free slots of the tile before this one
        let free_before = word_scan[row + w] - countOneBits(word) + countOneBits(word & (bit - 1u));
        var born_before = 0u;   // births in the tile before this slot
        if (births > first_rank) { born_before = min(free_before, births - first_rank); }
        var alive = (word & bit) == 0u;
        if (!alive && first_rank + free_before < births) {
            if (BIRTHS_HERE) {   // the particle emitter/spawn.wgsl and births.wgsl give it
                particles[params.first_block * BLOCK + i] =
                    born_particle(spawn_particle(params, i), i, params);
            } else {             // emitter/births.wgsl gives it
                birth_slots[params.first_block * BLOCK + first_rank + free_before] = i;
            }
            alive = true;
        }
        if (alive) {
            alive_list[alive_base + j * BLOCK + lid - free_before + born_before] = i;
        }
    }
    if (lid == 0u && in_batch && local_first + TILE_BLOCKS >= params.block_count) {
        let free = first_rank + free_here;   // every free slot of the emitter
        let born = min(births, free);
        if (born > 0u) { atomicAdd(&counters[owner].born, born); }
        publish_alive(owner, params, params.capacity - free + born);
    }
}

// A workgroup takes tiles by ticket until none is left, and ranks each tile at once or
// (RANK_AFTER_NEXT) after it stepped the next one.
@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) groups: vec3u) {
    if (lid == 0u) { epoch_now = atomicLoad(&tiles[EPOCH]) % 8u; }
    let tile_count = (emitters[0].batch_blocks + TILE_BLOCKS - 1u) / TILE_BLOCKS;
    var held = 0u;            // the tile stepped and not yet ranked, + 1 (0: none)
    var half = 0u;            // where in free_bits the next tile goes
    loop {
        if (lid == 0u) { ticket = atomicAdd(&tiles[TICKET], 1u); }
        let tile = workgroupUniformLoad(&ticket);
        if (tile >= tile_count) { break; }
        step_tile(tile, half, lid);
        if (RANK_AFTER_NEXT) {
            half = TILE_WORDS - half;
            if (held > 0u) { rank_tile(held - 1u, half, lid); }
            held = tile + 1u;
        } else {
            rank_tile(tile, half, lid);
        }
    }
    if (held > 0u) { rank_tile(held - 1u, TILE_WORDS - half, lid); }
    if (lid == 0u) {   // the last workgroup out readies the control words for the next dispatch
        let done = atomicAdd(&tiles[FINISHED], 1u) + 1u;
        if (done == folded_workgroup_count(groups)) {
            atomicStore(&tiles[TICKET], 0u);
            atomicStore(&tiles[FINISHED], 0u);
            atomicAdd(&tiles[EPOCH], 1u);
        }
    }
}
