// emitter/compact.wgsl  --  pass `<entity>:emitter:compact` (atomic and ticket allocation)
//
// Writes the alive slots, in slot order, into alive_list (the draw's instances):
// alive_list[block_alive_offset[slot / 256] + alive bits before the slot in its block] = slot.
// block_alive_offset is the exclusive scan (common/scan_*.wgsl) of the per-block alive counts, so
// the list is dense, ordered and the same on every run; its length is the scan's total.
//
// Workgroup size 256 = one block; dispatch ceil(capacity / 256) workgroups, folded into (x, y)
// past the per-dimension limit (slot = (y * nx + x) * 256 + lid).
// Bindings (group 0): 0 params (uniform EmitterParams), 1 alive_mask (read),
//                     2 block_alive_offset (read), 3 alive_list (rw)

//! include common/dispatch.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read> alive_mask: array<u32>;
@group(0) @binding(2) var<storage, read> block_alive_offset: array<u32>;
@group(0) @binding(3) var<storage, read_write> alive_list: array<u32>;

var<workgroup> word_alive: array<u32, BLOCK_WORDS>;   // alive slots per mask word of this block

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);
    if (lid < BLOCK_WORDS && block < params.block_count) {
        word_alive[lid] = countOneBits(alive_mask[block * BLOCK_WORDS + lid]);
    }
    workgroupBarrier();
    let i = block * BLOCK + lid;
    if (i >= params.capacity) { return; }
    let word = alive_mask[i / 32u];
    let bit = 1u << (i % 32u);
    if ((word & bit) == 0u) { return; }
    var rank = block_alive_offset[block] + countOneBits(word & (bit - 1u));
    for (var k = 0u; k < lid / 32u; k++) { rank += word_alive[k]; }
    alive_list[rank] = i;
}
