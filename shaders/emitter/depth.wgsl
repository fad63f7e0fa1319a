// emitter/depth.wgsl  --  pass `<entity>:emitter:depth` (alpha emitters, RENDER phase)
//
// One sort key per alive-list entry so that common/sort_*.wgsl orders the list back to front:
// key = ~orderable(view depth), view depth = distance along the camera's forward axis, where
// orderable() maps f32 to u32 preserving order (flip all bits of negatives, the sign of others).
// Ascending keys = decreasing depth = farthest first.
//
// Workgroup size 256; dispatch ceil(capacity / 256) workgroups, folded into (x, y) past the
// per-dimension limit (k = (y * nx + x) * 256 + lid); entries k >= the alive count are skipped.
// Bindings (group 0): 0 frame (uniform Frame), 1 particles (read), 2 alive_list (read),
//                     3 alive_total (read, word 0), 4 keys (rw)

//! include common/dispatch.wgsl
//! include common/frame.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> particles: array<Particle>;
@group(0) @binding(2) var<storage, read> alive_list: array<u32>;
@group(0) @binding(3) var<storage, read> alive_total: array<u32>;
@group(0) @binding(4) var<storage, read_write> keys: array<u32>;

fn orderable(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

const WORKGROUP_SIZE: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let k = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (k >= alive_total[0]) { return; }
    let forward = cross(frame.camera_up.xyz, frame.camera_right.xyz);
    let p = particles[alive_list[k]].position_age.xyz;
    keys[k] = ~orderable(dot(p - frame.camera_position.xyz, forward));
}
