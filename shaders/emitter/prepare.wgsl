// emitter/prepare.wgsl  --  pass `<entity>:emitter:prepare`
//
// Writes the drawIndirect arguments: 6 vertices (two triangles) per alive particle, instance count
// = the alive count the update/spawn pass just counted. The vertex shader reads particles through
// the alive list, so the count is exactly the instances to draw (seed 002's compaction caveat).
//
// Workgroup size 1; dispatch (1, 1, 1).
// Bindings: group 0: 0 counters (rw, atomics); group 1: 0 draw_args (rw, 4 words).
// draw_args sits alone in group 1 because the indirect draw may not see it bound as storage.

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<storage, read_write> counters: Counters;
@group(1) @binding(0) var<storage, read_write> draw_args: array<u32, 4>;

@compute @workgroup_size(1)
fn main() {
    draw_args[0] = 6u;
    draw_args[1] = atomicLoad(&counters.alive);
    draw_args[2] = 0u;
    draw_args[3] = 0u;
}
