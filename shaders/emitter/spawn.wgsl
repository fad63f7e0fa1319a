// emitter/spawn.wgsl  --  pass `<entity>:emitter:spawn` (ordered allocation only)
//
// A free slot whose rank among free slots is below the step's budget is born; every slot alive
// afterwards is counted and appended to the alive list (the draw's instances).
// rank = block_offset[slot / 256] + free bits before the slot in its block (countOneBits).
//
// Workgroup size 256; dispatch ceil(capacity / 256) workgroups, folded into (x, y) past the
// per-dimension limit (slot = (y * nx + x) * 256 + lid).
// Bindings (group 0): 0 params (uniform EmitterParams), 1 particles (rw), 2 counters (rw),
//                     3 alive_list (rw), 4 free_mask (read), 5 block_offset (read)

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read_write> counters: Counters;
@group(0) @binding(3) var<storage, read_write> alive_list: array<u32>;
@group(0) @binding(4) var<storage, read> free_mask: array<u32>;
@group(0) @binding(5) var<storage, read> block_offset: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = (wid.y * groups.x + wid.x) * 256u + lid;
    if (i >= params.capacity) { return; }
    let word = free_mask[i / 32u];
    let bit = 1u << (i % 32u);
    if ((word & bit) != 0u) {
        var rank = block_offset[i / 256u] + countOneBits(word & (bit - 1u));
        for (var k = (i / 256u) * 8u; k < i / 32u; k++) { rank += countOneBits(free_mask[k]); }
        if (rank >= params.budget) { return; }
        particles[i] = spawn_particle(params, i);
        atomicAdd(&counters.born, 1u);
    }
    alive_list[atomicAdd(&counters.alive, 1u)] = i;
}
