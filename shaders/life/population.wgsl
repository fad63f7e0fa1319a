// life/population.wgsl  --  pass `<entity>:life:population` (PREPARE phase)
//
// Counts the live cells: each invocation sums countOneBits over a run of words (padding bits are
// always zero, so no masking), the workgroup adds into a workgroup-memory atomic, and one global
// atomicAdd per workgroup lands the total in counters.population (cleared each step).
// Workgroup size 256, WORDS_PER_INVOCATION words each; dispatch
// ceil(words / (256 * WORDS_PER_INVOCATION)) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform LifeParams), 1 state (read), 2 counters (rw)

//! include common/dispatch.wgsl
//! include life/swar.wgsl

const WORDS_PER_INVOCATION: u32 = 16u;

struct LifeCounters {
    population: atomic<u32>,
    generation: u32,
};

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> counters: LifeCounters;

var<workgroup> group_total: atomic<u32>;

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    if (lid == 0u) { atomicStore(&group_total, 0u); }
    workgroupBarrier();
    let words = params.stride * params.height;
    let first = folded_invocation(wid, groups, WORKGROUP_SIZE, lid) * WORDS_PER_INVOCATION;
    var n = 0u;
    for (var k = 0u; k < WORDS_PER_INVOCATION; k++) {
        if (first + k < words) { n += countOneBits(state[first + k]); }
    }
    if (n > 0u) { atomicAdd(&group_total, n); }
    workgroupBarrier();
    if (lid == 0u) {
        let total = atomicLoad(&group_total);
        if (total > 0u) { atomicAdd(&counters.population, total); }
    }
}
