// emitter/cull_compact.wgsl  --  pass `<batch>:emitter:cull_compact` (RENDER phase, after
// emitter/cull.wgsl and the PrefixScan of its block counts)
//
// Writes each emitter's drawn list: the entries of its alive list that emitter/cull.wgsl kept,
// in their order, packed from the emitter's alive_base, so
// that the draw binds it in place of the alive list and starts at the same first_instance.
// An entry's place: the kept entries of the emitter's earlier blocks (drawn_offset[block] -
// drawn_offset[first block]) plus the kept entries before it in its own block (its mask's lower
// bits). The first lane of each emitter's first block writes its drawIndexedIndirect arguments:
// the 6 indices of runtime/blocks/sprites.py's SPRITE_INDICES x kept count from instance
// alive_base (index count, instance count, first index, base vertex, first instance), and the kept count to word 0 of its drawn total, which a back-to-
// front sort of the drawn list reads as it would read the alive total.
//
// Workgroup size BLOCK; dispatch as emitter/cull.wgsl.
// Bindings: group 0: 1 emitters (read: EmitterParams per emitter), 3 alive_list (read),
//                    9 list_owner (read), 10 alive_totals (read), 11 drawn_mask (read),
//                    12 drawn_offset (read: the scanned block counts), 13 drawn_sum (read:
//                    word 0 is the sum of all block counts), 14 drawn_list (rw),
//                    15 drawn_totals (rw: word 0 of each emitter's record);
//           group 1: 0 drawn_args (rw: 5 words at the start of each emitter's record; alone in
//                    its group, as the indirect draw may not see it bound as storage).

//! include common/dispatch.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(1) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(3) var<storage, read> alive_list: array<u32>;
@group(0) @binding(9) var<storage, read> list_owner: array<u32>;
@group(0) @binding(10) var<storage, read> alive_totals: array<u32>;
@group(0) @binding(11) var<storage, read> drawn_mask: array<u32>;
@group(0) @binding(12) var<storage, read> drawn_offset: array<u32>;
@group(0) @binding(13) var<storage, read> drawn_sum: array<u32>;
@group(0) @binding(14) var<storage, read_write> drawn_list: array<u32>;
@group(0) @binding(15) var<storage, read_write> drawn_totals: array<u32>;
@group(1) @binding(0) var<storage, read_write> drawn_args: array<u32>;

// The kept entries of blocks [0, block): the scan's offset, or its total past the last block.
fn kept_before(block: u32) -> u32 {
    if (block < arrayLength(&list_owner)) { return drawn_offset[block]; }
    return drawn_sum[0];
}

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);
    if (block >= arrayLength(&list_owner)) { return; }
    let owner = list_owner[block];
    let base = emitters[owner].alive_base;
    let first = base / BLOCK;
    if (block == first && lid == 0u) {
        let alive = alive_totals[owner * RECORD_WORDS];
        let kept = kept_before(first + (alive + BLOCK - 1u) / BLOCK) - kept_before(first);
        let args = owner * RECORD_WORDS;
        drawn_args[args] = 6u;
        drawn_args[args + 1u] = kept;
        drawn_args[args + 2u] = 0u;
        drawn_args[args + 3u] = 0u;
        drawn_args[args + 4u] = base;
        drawn_totals[args] = kept;
    }
    let word = lid / 32u;
    let bits = drawn_mask[block * BLOCK_WORDS + word];
    let bit = 1u << (lid % 32u);
    if ((bits & bit) == 0u) { return; }
    var rank = kept_before(block) - kept_before(first) + countOneBits(bits & (bit - 1u));
    for (var w = 0u; w < word; w++) { rank += countOneBits(drawn_mask[block * BLOCK_WORDS + w]); }
    drawn_list[base + rank] = alive_list[block * BLOCK + lid];
}
