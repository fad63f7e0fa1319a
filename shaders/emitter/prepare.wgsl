// emitter/prepare.wgsl  --  pass `<batch>:emitter:prepare`
//
// Per emitter of a batch: its alive count is the alive scan's sum over its blocks,
//   alive = alive_offset[first_block + block_count] - alive_offset[first_block]
// (the scan's total past the batch's last block), exactly the length of its dense alive list.
// It becomes the drawIndirect arguments, the counters' `alive` and the emitter's alive total
// (emitter/publish_alive.wgsl). Every per-emitter record is RECORD_WORDS words long
// (emitter/types.wgsl). emitter/ranks.wgsl does the same in the fused path.
//
// Workgroup size 1; dispatch one workgroup per emitter of the batch.
// Bindings: group 0: 0 emitters (read: EmitterParams per emitter), 1 counters (rw: Counters per
//                    emitter), 2 alive_offset (read: the alive scan, one word per block),
//                    3 alive_scan_total (read, word 0), 4 alive_totals (rw: word 0 of each
//                    emitter's record);
//           group 1: 0 draw_args (rw: 4 words at the start of each emitter's record).
// draw_args sits alone in group 1 because the indirect draw may not see it bound as storage.

//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/publish_alive.wgsl

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(2) var<storage, read> alive_offset: array<u32>;
@group(0) @binding(3) var<storage, read> alive_scan_total: array<u32>;

@compute @workgroup_size(1)
fn main(@builtin(workgroup_id) wid: vec3u) {
    let e = wid.x;
    let p = emitters[e];
    let end = p.first_block + p.block_count;
    var stop = alive_scan_total[0];
    if (end < p.batch_blocks) { stop = alive_offset[end]; }
    publish_alive(e, p, stop - alive_offset[p.first_block]);
}
