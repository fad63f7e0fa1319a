// emitter/ranks.wgsl  --  pass `<batch>:emitter:ranks` (ordered allocation)
//
// Everything between the update and the births, for a whole batch, in ONE workgroup: the free
// scan, the births per emitter and the draw arguments (the multi-pass path runs the free scan,
// emitter/count.wgsl, the alive scan and emitter/prepare.wgsl for the same results). One
// workgroup, because WebGPU promises no forward progress between workgroups: nothing here waits
// on another workgroup, so it cannot deadlock on any adapter.
//  1. free_offset holds each block's free slots (the update's counts). It becomes their exclusive
//     prefix sum F in place, in rounds of THREADS x PER_INVOCATION blocks; the last round's
//     running total is F past the batch's last block.
//  2. Emitter e owns blocks [first_block, first_block + block_count); its free slots are
//     free = F[end] - F[first_block]. Births take the lowest free ranks, so with the step's
//     budget (the host's plus what events added, counters.budget)
//       born = min(budget, free), alive = capacity - free + born
//     (the sum over its blocks of the count pass's slots_b - free_b + births_b). born is added
//     to counters.born; alive goes where emitter/prepare.wgsl puts it (publish_alive.wgsl).
// emitter/spawn.wgsl then gives births and writes the alive list from F and the budget alone.
//
// Workgroup size THREADS (the host's choice, at most MAX_THREADS); dispatch exactly one workgroup.
// Bindings: group 0: 0 emitters (read: EmitterParams per emitter of the batch),
//                    1 counters (rw: Counters per emitter; reads budget, writes born and alive),
//                    2 free_offset (rw, one word per block: free slots in, exclusive prefix out),
//                    4 alive_totals (rw: word 0 of each emitter's record);
//           group 1: 0 draw_args (rw: 4 words at the start of each emitter's record).
// draw_args sits alone in group 1 as in emitter/prepare.wgsl: the indirect draw may not see it
// bound as storage.

//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/publish_alive.wgsl

override THREADS: u32 = 256u;
const MAX_THREADS: u32 = 1024u;
// blocks per invocation and round: consecutive words, so each invocation sums its own first
const PER_INVOCATION: u32 = 8u;

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(2) var<storage, read_write> free_offset: array<u32>;
// 1 counters, 4 alive_totals, group 1 draw_args: declared in emitter/publish_alive.wgsl

var<workgroup> sums: array<u32, MAX_THREADS>;
var<workgroup> batch_free: u32;   // F past the last block: every free slot of the batch

@compute @workgroup_size(THREADS)
fn main(@builtin(local_invocation_index) lid: u32) {
    let n = emitters[0].batch_blocks;
    var carried = 0u;   // F at this round's first block (the same in every invocation)
    for (var start = 0u; start < n; start += THREADS * PER_INVOCATION) {
        let first = start + lid * PER_INVOCATION;
        var own: array<u32, PER_INVOCATION>;
        var total = 0u;
        for (var k = 0u; k < PER_INVOCATION; k++) {
            let i = first + k;
            own[k] = select(0u, free_offset[min(i, n - 1u)], i < n);
            total += own[k];
        }
        sums[lid] = total;
        workgroupBarrier();
        for (var offset = 1u; offset < THREADS; offset <<= 1u) {   // Hillis-Steele, inclusive
            var add = 0u;
            if (lid >= offset) { add = sums[lid - offset]; }
            workgroupBarrier();
            sums[lid] += add;
            workgroupBarrier();
        }
        var running = carried + sums[lid] - total;
        for (var k = 0u; k < PER_INVOCATION; k++) {
            let i = first + k;
            if (i < n) { free_offset[i] = running; }
            running += own[k];
        }
        carried += sums[THREADS - 1u];
        workgroupBarrier();   // every invocation has read sums before the next round writes it
    }
    if (lid == 0u) { batch_free = carried; }
    storageBarrier();     // F of every block, written by any invocation, is visible below
    workgroupBarrier();

    for (var e = lid; e < arrayLength(&emitters); e += THREADS) {
        let p = emitters[e];
        let end = p.first_block + p.block_count;
        var stop = batch_free;
        if (end < n) { stop = free_offset[end]; }
        var start = batch_free;
        if (p.first_block < n) { start = free_offset[p.first_block]; }
        let free = stop - start;
        let born = min(atomicLoad(&counters[e].budget), free);
        if (born > 0u) { atomicAdd(&counters[e].born, born); }
        publish_alive(e, p, p.capacity - free + born);
    }
}
