// cloth/step.wgsl  --  pass `<entity>:cloth:substeps` (solver = "explicit"), patches larger
// than one workgroup's share (cloth/step_resident.wgsl takes the small ones)
//
// One substep h for every vertex (cloth/substep.wgsl), reading the previous state and writing
// the other buffer (no vertex may see a neighbour already moved this substep).
// Workgroup size (16, 16); dispatch (ceil(nx / 16), ceil(ny / 16), patches): z is the patch's
// entry in `records` (patches of one shape and substep count run as one batch over shared
// arenas; a lone patch is a batch of one over its own buffers), repeated `substeps` times in one
// compute pass with the two bind groups alternating.
// Bindings (group 0): 0 records (read: ClothRecord per patch), 1 pos_in, 2 vel_in (read),
//   3 pos_out, 4 vel_out (rw), 5 rest (read: initial position, w = 1 when pinned), 6 forces
//   (read), 7 colliders (read); a patch's arrays start at its params.first_vertex, its winds at
//   first_force, its colliders at first_collider.
// The parameters are storage, not a uniform: lavapipe (Mesa 22.x) "inlines" the uniform values
// a branch or loop bound depends on, JIT-compiling a fresh variant of the shader at every
// dispatch that rebinds the group and never freeing it (~0.5 MB and ~2 ms each). The counts are
// clamped to the buffer (arrayLength), which keeps a stale count in bounds.

//! include cloth/substep.wgsl

// Specialised per patch: false when no wind / no collider acts on it (the loops are compiled out).
override HAS_WIND: bool = true;
override HAS_COLLIDERS: bool = true;

@group(0) @binding(0) var<storage, read> records: array<ClothRecord>;
@group(0) @binding(1) var<storage, read> pos_in: array<vec4f>;
@group(0) @binding(2) var<storage, read> vel_in: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> pos_out: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> vel_out: array<vec4f>;
@group(0) @binding(5) var<storage, read> rest: array<vec4f>;
@group(0) @binding(6) var<storage, read> forces: array<Force>;
@group(0) @binding(7) var<storage, read> colliders: array<Collider>;

fn previous_position(k: u32) -> vec4f { return pos_in[k]; }
fn previous_velocity(k: u32) -> vec4f { return vel_in[k]; }

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    params = records[gid.z].params;
    if (gid.x >= params.nx || gid.y >= params.ny) { return; }
    let idx = params.first_vertex + gid.y * params.nx + gid.x;
    let next = next_state(i32(gid.x), i32(gid.y));
    pos_out[idx] = next.position;
    vel_out[idx] = next.velocity;
}
