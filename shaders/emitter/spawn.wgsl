// emitter/spawn.wgsl  --  pass `<entity>:emitter:spawn` (ordered allocation only)
//
// A free slot whose rank among all free slots (in slot order) is below the step's budget is born.
// rank = block_free_offset[slot / 256] (the scanned per-block free counts) + the free bits before
// the slot in its block. Eight invocations (one per mask word) work out which bits of their word
// are born, the new alive word ((not free) or born) and its count; then the born slots are
// initialised and the block's alive count goes to block_alive, for the compaction. No atomics
// but one counter add per word with births.
//
// Workgroup size 256 = one block; dispatch ceil(capacity / 256) workgroups, folded into (x, y)
// past the per-dimension limit (block = y * nx + x, slot = block * 256 + lid).
// Bindings (group 0): 0 params (uniform EmitterParams), 1 particles (rw), 2 counters (rw),
//                     3 free_mask (read), 4 block_free_offset (read), 5 alive_mask (rw),
//                     6 block_alive (rw)

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read_write> counters: Counters;
@group(0) @binding(3) var<storage, read> free_mask: array<u32>;
@group(0) @binding(4) var<storage, read> block_free_offset: array<u32>;
@group(0) @binding(5) var<storage, read_write> alive_mask: array<u32>;
@group(0) @binding(6) var<storage, read_write> block_alive: array<u32>;

var<workgroup> born_bits: array<u32, 8>;    // per mask word: the slots born this step
var<workgroup> alive_bits: array<u32, 8>;   // per mask word: set bits of the new alive word

// The lowest `count` set bits of `word`.
fn lowest_set_bits(word: u32, count: u32) -> u32 {
    var rest = word;
    var out = 0u;
    for (var j = 0u; j < count; j++) {
        let low = rest & (~rest + 1u);
        out |= low;
        rest ^= low;
    }
    return out;
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = wid.y * groups.x + wid.x;
    // One invocation per mask word decides the whole word: the free slots of word k have the
    // consecutive ranks base, base + 1, ...; the first (budget - base) of them are born.
    if (lid < 8u && block < params.block_count) {
        let w = block * 8u + lid;
        var base = block_free_offset[block];
        for (var k = block * 8u; k < w; k++) { base += countOneBits(free_mask[k]); }
        let free = free_mask[w];
        var births = 0u;
        if (base < params.budget) { births = min(countOneBits(free), params.budget - base); }
        let born = lowest_set_bits(free, births);
        let first_slot = w * 32u;
        var valid = 0u;    // bits of slots that exist (the last word may be partial)
        if (first_slot < params.capacity) {
            let n = min(params.capacity - first_slot, 32u);
            valid = select((1u << n) - 1u, 0xffffffffu, n == 32u);
        }
        let alive = (~free & valid) | born;
        alive_mask[w] = alive;
        born_bits[lid] = born;
        alive_bits[lid] = countOneBits(alive);
        if (births > 0u) { atomicAdd(&counters.born, births); }
    }
    workgroupBarrier();

    let i = block * 256u + lid;
    if (i < params.capacity && (born_bits[lid / 32u] & (1u << (lid % 32u))) != 0u) {
        particles[i] = spawn_particle(params, i);
    }
    if (lid == 0u && block < params.block_count) {
        var n = 0u;
        for (var k = 0u; k < 8u; k++) { n += alive_bits[k]; }
        block_alive[block] = n;
    }
}
