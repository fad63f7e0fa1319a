// trails/sample.wgsl  --  pass `<entity>:trail:sample`
//
// Pushes every source slot's position into its ring of the last `length` samples (the newest
// goes to params.head, see TrailParams). A slot whose particle was born since the previous
// sample (born_since in trails/types.wgsl, read from the source's own age and lifetime) gets its
// whole ring filled with its position instead, so its ribbon starts as a point: never from the
// origin, never along the previous occupant's path. Dead slots sample too: the emitter keeps a
// dead particle's last position, so every ring holds the slot's positions at the last `length`
// samples; the draw shows only the alive ones.
//
// Workgroup size 256; dispatch ceil(capacity / 256) workgroups, folded into (x, y) past the
// per-dimension limit (common/dispatch.wgsl), on the steps that sample (every `every` steps;
// (0, 0, 0) on the others).
// Bindings (group 0): 0 params (read TrailParams),
//                     1 particles (read: the source's <source>/particles, emitter Particle),
//                     2 points (rw: capacity x length vec4f, xyz = position),
//                     3 sampled (rw: per slot, (age, lifetime) at the last sample)

//! include common/dispatch.wgsl
//! include emitter/types.wgsl
//! include trails/types.wgsl

const GROUP: u32 = 256u;   // slots per workgroup (the host reads it)

@group(0) @binding(0) var<storage, read> params: TrailParams;
@group(0) @binding(1) var<storage, read> particles: array<Particle>;
@group(0) @binding(2) var<storage, read_write> points: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> sampled: array<vec2f>;

@compute @workgroup_size(GROUP)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let slot = folded_invocation(wid, groups, GROUP, lid);
    if (slot >= params.capacity) { return; }
    let p = particles[slot];
    let age = p.position_age.w;
    let lifetime = p.velocity_lifetime.w;
    let position = vec4f(p.position_age.xyz, 0.0);
    if (born_since(age, lifetime, sampled[slot], params.elapsed, params.tolerance)) {
        for (var k = 0u; k < params.length; k++) {
            points[slot * params.length + k] = position;
        }
    } else {
        points[ring_index(params, slot, 0u)] = position;
    }
    sampled[slot] = vec2f(age, lifetime);
}
