// emitter/update.wgsl  --  pass `<entity>:emitter:update`
//
// Steps every alive particle (emitter/integrate.wgsl: ageing, forces, collisions, events,
// modifiers). Dead slots are then handled by ALLOCATION:
//   0 ordered: set the slot's bit in free_mask and count the block's free slots in block_free;
//              common/scan_*.wgsl ranks them and emitter/spawn.wgsl gives births to the lowest
//              (emitter/update_ranked.wgsl does all of that in this pass where the adapter
//              allows)
//   1 atomic:  take one unit of the step's budget with atomicSub, undoing an underflow
//   2 ticket:  take a monotonic ticket with atomicAdd; born while ticket < budget
// In modes 1 and 2 the births happen here, so this pass also writes the alive mask and the
// block's alive count that the compaction (scan + emitter/compact.wgsl) reads, and an emitter's
// `init` modifier runs after every birth here.
//
// One dispatch serves a whole batch of like emitters: a workgroup finds its block's emitter in
// block_owner and works in that emitter's slot numbers.
// Workgroup size 256 = one block of 8 mask words; dispatch one workgroup per block of the batch,
// folded into (x, y) past the per-dimension limit (block = y * nx + x, slot = block * 256 + lid).
// Bindings (group 0): 1 counters (rw: Counters per emitter),
//                     3 mask (rw: free bits in mode 0, alive bits otherwise; 8 words per block),
//                     4 block_count (rw: free or alive slots per block),
//                     and those of emitter/integrate.wgsl: 0 emitters, 2 particles, 5 forces,
//                     6 block_owner, 7-11 what particles touch, 12 event_marks;
//                     group 1: 0 attributes (rw, only with custom attributes: generated code)

//! include common/dispatch.wgsl
//! include emitter/integrate.wgsl

// Allocation modes (override ALLOCATION); the host maps the scene's allocation by name.
const ALLOCATION_ORDERED: u32 = 0u;
const ALLOCATION_ATOMIC: u32 = 1u;
const ALLOCATION_TICKET: u32 = 2u;
override ALLOCATION: u32 = ALLOCATION_ORDERED;

@group(0) @binding(1) var<storage, read_write> counters: array<Counters>;
@group(0) @binding(3) var<storage, read_write> mask: array<u32>;
@group(0) @binding(4) var<storage, read_write> block_count: array<u32>;

var<workgroup> block_mask: array<atomic<u32>, BLOCK_WORDS>;

fn take_budget() -> bool {
    if (ALLOCATION == ALLOCATION_ATOMIC) {
        let before = atomicSub(&counters[owner].budget, 1u);
        // Valid only if a unit was there: 1 <= before <= budget. Once some invocation has taken
        // the counter below zero it wraps to ~4e9 until that invocation's undo lands, and anyone
        // subtracting meanwhile sees such a value, so a test of "before == 0" alone would
        // let them through; the upper bound catches it, and they undo too.
        if (before == 0u || before > params.budget) {
            atomicAdd(&counters[owner].budget, 1u);
            return false;
        }
        return true;
    }
    let ticket = atomicAdd(&counters[owner].tickets, 1u);
    return ticket < params.budget;
}

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);   // in the batch
    let local_block = enter_block(block);
    load_forces(lid);
    if (lid < BLOCK_WORDS) { atomicStore(&block_mask[lid], 0u); }
    clear_events(lid);
    workgroupBarrier();

    let i = local_block * BLOCK + lid;   // the emitter's slot
    let g = block * BLOCK + lid;         // the arena's
    if (i < params.capacity) {
        var alive = integrate_slot(lid, i, g, particles[g]);
        if (!alive && ALLOCATION != ALLOCATION_ORDERED && take_budget()) {
            particles[g] = born_particle(spawn_particle(params, i), i, params);
            atomicAdd(&counters[owner].born, 1u);
            alive = true;
        }
        // mode 0 marks free slots (births come later); modes 1, 2 mark the final alive slots
        if (alive == (ALLOCATION != ALLOCATION_ORDERED)) {
            atomicOr(&block_mask[lid / 32u], 1u << (lid % 32u));
        }
    }

    workgroupBarrier();
    if (local_block < params.block_count) {
        if (lid < BLOCK_WORDS) { mask[block * BLOCK_WORDS + lid] = atomicLoad(&block_mask[lid]); }
        if (lid == 0u) {
            var n = 0u;
            for (var k = 0u; k < BLOCK_WORDS; k++) { n += countOneBits(atomicLoad(&block_mask[k])); }
            block_count[block] = n;
        }
    }
    store_events(local_block, lid, params.block_count);
}
