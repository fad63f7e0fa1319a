// emitter/prepare.wgsl  --  pass `<entity>:emitter:prepare`
//
// Writes the drawIndirect arguments: 6 vertices (two triangles) per alive particle, instance count
// = the compaction scan's total, which is exactly the length of the dense alive list the vertex
// shader reads particles through (a count of its own could disagree with the list). Also copies
// that count into counters.alive for the readback ring.
//
// Workgroup size 1; dispatch (1, 1, 1).
// Bindings: group 0: 0 counters (rw), 1 alive_total (read, the scan's total in word 0);
//           group 1: 0 draw_args (rw, 4 words).
// draw_args sits alone in group 1 because the indirect draw may not see it bound as storage.

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<storage, read_write> counters: Counters;
@group(0) @binding(1) var<storage, read> alive_total: array<u32>;
@group(1) @binding(0) var<storage, read_write> draw_args: array<u32, 4>;

@compute @workgroup_size(1)
fn main() {
    let alive = alive_total[0];
    atomicStore(&counters.alive, alive);
    draw_args[0] = 6u;
    draw_args[1] = alive;
    draw_args[2] = 0u;
    draw_args[3] = 0u;
}
