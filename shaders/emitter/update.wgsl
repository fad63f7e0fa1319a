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

fn take_budget() -> bool {
    if (ALLOCATION == 1u) {
        let before = atomicSub(&counters.budget, 1u);
        if (before == 0u) {
            // The counter wrapped below zero: give the unit back. Anyone reading it meanwhile sees
            // an absurd value as its "before" only if it also subtracted from zero, so it undoes too.
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
    workgroupBarrier();

    let i = block * 256u + lid;
    if (i < params.capacity) {
        var p = particles[i];
        var alive = p.age < p.lifetime;
        if (alive) {
            let drag = params.gravity.w;
            p.velocity = p.velocity + (params.gravity.xyz - drag * p.velocity) * params.h;
            p.position = p.position + p.velocity * params.h;
            p.age = p.age + params.h;
            alive = p.age < p.lifetime;
            particles[i] = p;
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
            alive_list[atomicAdd(&counters.alive, 1u)] = i;
        }
    }

    workgroupBarrier();
    if (ALLOCATION == 0u && lid < 8u && block < params.block_count) {
        free_mask[block * 8u + lid] = atomicLoad(&block_mask[lid]);
    }
}
