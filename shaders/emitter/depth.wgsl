// emitter/depth.wgsl  --  pass `<b>:emitter:depth` (alpha emitters, RENDER phase)
//
// One sort key per alive-list entry so that common/sort_*.wgsl orders the list back to front:
// key = ~orderable(view depth), view depth = distance along the camera's forward axis, where
// orderable() maps f32 to u32 preserving order (flip all bits of negatives, the sign of others).
// Ascending keys = decreasing depth = farthest first.
// The entries are in segments of `segment` positions, one per alpha emitter of a batch (one for
// an emitter alone): segment s holds the alive list of emitter first_owner + s, whose particles
// start at its first block of the arena and whose alive count is word 0 of its alive total.
//
// Workgroup size 256; dispatch ceil(segments x segment / 256) workgroups, folded into (x, y)
// past the per-dimension limit (k = (y * nx + x) * 256 + lid); entries past a segment's alive
// count are skipped.
// Bindings (group 0): 0 frame (uniform Frame), 1 particles (read, the arena),
//                     2 alive_list (read, the segments), 3 alive_totals (read: RECORD_WORDS
//                     words per emitter), 4 keys (rw, the segments), 5 emitters (read:
//                     EmitterParams per emitter), 6 depth_params (read: DepthParams; storage,
//                     not uniform: lavapipe recompiles a shader whose branches read uniforms at
//                     every bind, WGPU_NOTES)

//! include common/dispatch.wgsl
//! include common/frame.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl

struct DepthParams {
    segment: u32,       // positions per segment (the capacity of an emitter alone)
    first_owner: u32,   // the emitter whose alive list is segment 0
    segments: u32,
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> alive_list: array<u32>;
@group(0) @binding(3) var<storage, read> alive_totals: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys: array<u32>;
@group(0) @binding(5) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(6) var<storage, read> depth_params: DepthParams;

fn orderable(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let k = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    let s = k / depth_params.segment;
    if (s >= depth_params.segments) { return; }
    let owner = depth_params.first_owner + s;
    if (k - s * depth_params.segment >= alive_totals[owner * RECORD_WORDS]) { return; }
    let first_slot = emitters[owner].first_block * BLOCK;
    let forward = cross(frame.camera_up.xyz, frame.camera_right.xyz);
    let p = particles[first_slot + alive_list[k]].position_age.xyz;
    keys[k] = ~orderable(dot(p - frame.camera_position.xyz, forward));
}
