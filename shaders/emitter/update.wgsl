// emitter/update.wgsl  --  pass `<entity>:emitter:update`
//
// Ages and integrates every alive particle (semi-implicit Euler: v += (g - drag v) h; x += v h).
// Dead slots are then handled by ALLOCATION:
//   0 ordered: record the slot in the free mask (one bit per slot); emitter/spawn.wgsl births later
//   1 atomic:  take one unit of the step's budget with atomicSub, undoing an underflow (seed 002)
//   2 ticket:  take a monotonic ticket with atomicAdd; born while ticket < budget (seed 002)
// In modes 1 and 2 this pass also counts the alive slots and appends them to the alive list.
//
// Workgroup size 256 (one free-mask block of 8 words); dispatch ceil(capacity / 256) workgroups,
// folded into (x, y) when that exceeds the per-dimension limit (slot = (y * nx + x) * 256 + lid).
// Bindings (group 0): 0 params (uniform EmitterParams), 1 particles (rw), 2 counters (rw),
//                     3 alive_list (rw), 4 free_mask (rw, 8 words per workgroup)

//! include common/random.wgsl
//! include emitter/types.wgsl

override ALLOCATION: u32 = 0u;

@group(0) @binding(0) var<uniform> params: EmitterParams;
@group(0) @binding(1) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(2) var<storage, read_write> counters: Counters;
@group(0) @binding(3) var<storage, read_write> alive_list: array<u32>;
@group(0) @binding(4) var<storage, read_write> free_mask: array<u32>;

var<workgroup> block_mask: array<atomic<u32>, 8>;
var<workgroup> group_alive: atomic<u32>;   // alive slots in this workgroup
var<workgroup> group_base: u32;            // where they go in the alive list

fn take_budget() -> bool {
    if (ALLOCATION == 1u) {
        let before = atomicSub(&counters.budget, 1u);
        // Valid only if a unit was there: 1 <= before <= budget. Once some invocation has taken
        // the counter below zero it wraps to ~4e9 until that invocation's undo lands, and anyone
        // subtracting meanwhile sees such a value, so "before == 0" alone (seed 002's test) would
        // let them through; the upper bound catches it, and they undo too.
        if (before == 0u || before > params.budget) {
            atomicAdd(&counters.budget, 1u);
            return false;
        }
        return true;
    }
    let ticket = atomicAdd(&counters.tickets, 1u);
    return ticket < params.budget;
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32,
        @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = wid.y * groups.x + wid.x;
    if (lid < 8u) { atomicStore(&block_mask[lid], 0u); }
    if (lid == 0u) { atomicStore(&group_alive, 0u); }
    workgroupBarrier();

    var rank = 0u;      // this slot's place among the workgroup's alive slots
    var listed = false;

    let i = block * 256u + lid;
    if (i < params.capacity) {
        let p = particles[i];
        let lifetime = p.velocity_lifetime.w;
        var alive = p.position_age.w < lifetime;
        if (alive) {
            let drag = params.gravity.w;
            let v = p.velocity_lifetime.xyz;
            let velocity = v + (params.gravity.xyz - drag * v) * params.h;
            let age = p.position_age.w + params.h;
            particles[i] = Particle(vec4f(p.position_age.xyz + velocity * params.h, age),
                                    vec4f(velocity, lifetime));
            alive = age < lifetime;
        }
        if (!alive) {
            if (ALLOCATION == 0u) {
                atomicOr(&block_mask[lid / 32u], 1u << (lid % 32u));
            } else if (take_budget()) {
                particles[i] = spawn_particle(params, i);
                atomicAdd(&counters.born, 1u);
                alive = true;
            }
        }
        if (alive && ALLOCATION != 0u) {
            rank = atomicAdd(&group_alive, 1u);
            listed = true;
        }
    }

    // One global atomic per workgroup reserves the list range (not one per particle).
    workgroupBarrier();
    if (ALLOCATION != 0u && lid == 0u) {
        group_base = atomicAdd(&counters.alive, atomicLoad(&group_alive));
    }
    workgroupBarrier();
    if (listed) { alive_list[group_base + rank] = i; }
    if (ALLOCATION == 0u && lid < 8u && block < params.block_count) {
        free_mask[block * 8u + lid] = atomicLoad(&block_mask[lid]);
    }
}
