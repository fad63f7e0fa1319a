// emitter/allocate.wgsl  --  pass `<entity>:emitter:allocate` (ordered allocation only)
//
// Exclusive prefix sum of free slots per 256-slot block: block_offset[b] = number of free slots in
// blocks 0..b-1. Each free slot's rank among all free slots (in slot order) is then its block's
// offset plus the free bits before it, so the step's budget goes to the lowest free slots, the
// same ones on every run.
//
// One workgroup of 256: each invocation sums a contiguous run of blocks, the 256 sums are scanned
// in workgroup memory (Hillis-Steele), then each invocation writes its run's offsets.
// Dispatch (1, 1, 1). Bindings (group 0): 0 params (uniform EmitterParams), 1 free_mask (read),
//                                         2 block_offset (rw, block_count words)

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read> free_mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_offset: array<u32>;

var<workgroup> sums: array<u32, 256>;

fn free_in_block(b: u32) -> u32 {
    var n = 0u;
    for (var k = 0u; k < 8u; k++) { n += countOneBits(free_mask[b * 8u + k]); }
    return n;
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
    let per = (params.block_count + 255u) / 256u;
    let first = min(lid * per, params.block_count);
    let last = min(first + per, params.block_count);
    var own = 0u;
    for (var b = first; b < last; b++) { own += free_in_block(b); }
    sums[lid] = own;
    workgroupBarrier();
    for (var offset = 1u; offset < 256u; offset *= 2u) {
        var add = 0u;
        if (lid >= offset) { add = sums[lid - offset]; }
        workgroupBarrier();
        sums[lid] += add;
        workgroupBarrier();
    }
    var running = sums[lid] - own;
    for (var b = first; b < last; b++) {
        block_offset[b] = running;
        running += free_in_block(b);
    }
}
