// emitter/spawn.wgsl  --  pass `<entity>:emitter:spawn` (ordered allocation only)
//
// A free slot whose rank among free slots is below the step's budget is born; every slot alive
// afterwards is counted and appended to the alive list (the draw's instances).
// rank = block_offset[slot / 256] + free bits before the slot in its block (countOneBits).
//
// Workgroup size 256; dispatch ceil(capacity / 256) workgroups, folded into (x, y) past the
// per-dimension limit (slot = (y * nx + x) * 256 + lid). The workgroup counts its alive slots
// in workgroup memory and reserves their range of the list with one global atomicAdd.
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

var<workgroup> group_alive: atomic<u32>;   // alive slots in this workgroup
var<workgroup> group_base: u32;            // where they go in the alive list

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    if (lid == 0u) { atomicStore(&group_alive, 0u); }
    workgroupBarrier();

    let i = (wid.y * groups.x + wid.x) * 256u + lid;
    var alive = false;
    if (i < params.capacity) {
        let word = free_mask[i / 32u];
        let bit = 1u << (i % 32u);
        alive = (word & bit) == 0u;
        if (!alive) {
            var rank = block_offset[i / 256u] + countOneBits(word & (bit - 1u));
            for (var k = (i / 256u) * 8u; k < i / 32u; k++) { rank += countOneBits(free_mask[k]); }
            if (rank < params.budget) {
                particles[i] = spawn_particle(params, i);
                atomicAdd(&counters.born, 1u);
                alive = true;
            }
        }
    }
    var rank_in_group = 0u;
    if (alive) { rank_in_group = atomicAdd(&group_alive, 1u); }

    // One global atomic per workgroup reserves the list range (not one per particle).
    workgroupBarrier();
    if (lid == 0u) { group_base = atomicAdd(&counters.alive, atomicLoad(&group_alive)); }
    workgroupBarrier();
    if (alive) { alive_list[group_base + rank_in_group] = i; }
}
