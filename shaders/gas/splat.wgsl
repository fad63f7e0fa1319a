// gas/splat.wgsl  --  pass `<gas>:gas:splat:<emitter>`
//
// An emitter feeding a gas (`feeds = { gas, density, temperature, fuel }`): each alive
// particle (age < lifetime) inside the gas's box adds its fixed-point amounts (per second x
// the step, rounded once by the host: FeedParams.amounts) to the accumulators of the cell it
// lies in (nearest cell: the cell containing it), with integer atomics; gas/feed.wgsl adds them
// to the gas at the start of its next step. Particles outside the box add nothing.
// Runs in the PREPARE phase, after the emitter's step has moved and born this step's particles.
// One invocation per slot; workgroup size 64, dispatch ceil(capacity / 64) workgroups, folded.
// Bindings (group 0): 0 feed_params (read FeedParams), 1 particles (read: the emitter's
//   Particle records), 2 feed (rw atomics: 3 per cell, density, temperature, fuel)

//! include common/dispatch.wgsl
//! include emitter/types.wgsl

struct FeedParams {
    lower: vec4f,     // xyz: the gas box's lowest corner; w: cell edge
    cells: vec4u,     // xyz: cells per axis; w: the emitter's slots
    amounts: vec4u,   // xyz: fixed-point density, temperature and fuel one particle adds
};

@group(0) @binding(0) var<storage, read> feed_params: FeedParams;
@group(0) @binding(1) var<storage, read> particles: array<Particle>;
@group(0) @binding(2) var<storage, read_write> feed: array<atomic<u32>>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let slot = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (slot >= feed_params.cells.w) { return; }
    let p = particles[slot];
    if (!(p.position_age.w < p.velocity_lifetime.w)) { return; }
    let u = (p.position_age.xyz - feed_params.lower.xyz) / feed_params.lower.w;
    let n = feed_params.cells.xyz;
    if (!all(u >= vec3f(0.0)) || !all(u < vec3f(n))) { return; }   // (NaN: outside too)
    let c = min(vec3u(u), n - 1u);
    let cell = c.x + n.x * (c.y + n.y * c.z);
    let a = feed_params.amounts.xyz;
    if (a.x != 0u) { atomicAdd(&feed[3u * cell], a.x); }
    if (a.y != 0u) { atomicAdd(&feed[3u * cell + 1u], a.y); }
    if (a.z != 0u) { atomicAdd(&feed[3u * cell + 2u], a.z); }
}
