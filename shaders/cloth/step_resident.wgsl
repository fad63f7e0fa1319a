// cloth/step_resident.wgsl  --  pass `<entity>:cloth:substeps` (solver = "explicit") for patches
// of at most RESIDENT_UP_TO_VERTICES vertices (systems/cloth/system.py)
//
// Every substep of a step in one dispatch: one workgroup per patch loops over the substeps,
// each invocation stepping vertices lid, lid + THREADS, ... (cloth/substep.wgsl, the very code of
// cloth/step.wgsl) from one buffer pair into the other, with a storage barrier between
// substeps. A small patch then costs one dispatch a step instead of `substeps` (each a launch
// on the GPU and several wgpu calls on the CPU).
// Workgroup size THREADS (an override: the patch's vertices rounded up to 64, at most what the
// device allows, so that most invocations step one vertex: a substep then lasts one vertex's
// latency); dispatch (patches, 1, 1): x is the patch's entry in `records`.
// Bindings (group 0): 0 records (read: ClothRecord per patch), 1 pos_a, 2 vel_a (rw: the state
//   at the step's start, and after each even number of substeps), 3 pos_b, 4 vel_b (rw: after
//   each odd number), 5 rest (read: initial position, w = 1 when pinned), 6 forces (read),
//   7 colliders (read); a patch's arrays start at its params.first_vertex, its winds at
//   first_force, its colliders at first_collider. The state ends in the b pair when SUBSTEPS
//   is odd.

//! include cloth/substep.wgsl

override HAS_WIND: bool = true;
override HAS_COLLIDERS: bool = true;
override SUBSTEPS: u32 = 1u;
override THREADS: u32 = 256u;

@group(0) @binding(0) var<storage, read> records: array<ClothRecord>;
@group(0) @binding(1) var<storage, read_write> pos_a: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> vel_a: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> pos_b: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> vel_b: array<vec4f>;
@group(0) @binding(5) var<storage, read> rest: array<vec4f>;
@group(0) @binding(6) var<storage, read> forces: array<Force>;
@group(0) @binding(7) var<storage, read> colliders: array<Collider>;

var<private> reads_b: bool;   // this substep reads the b pair (an odd substep)

fn previous_position(k: u32) -> vec4f {
    if (reads_b) { return pos_b[k]; }
    return pos_a[k];
}

fn previous_velocity(k: u32) -> vec4f {
    if (reads_b) { return vel_b[k]; }
    return vel_a[k];
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
    params = records[wid.x].params;
    let count = params.nx * params.ny;
    for (var s = 0u; s < SUBSTEPS; s++) {
        reads_b = s % 2u == 1u;
        for (var v = lid; v < count; v += THREADS) {
            let next = next_state(i32(v % params.nx), i32(v / params.nx));
            let idx = params.first_vertex + v;
            if (reads_b) {
                pos_a[idx] = next.position;
                vel_a[idx] = next.velocity;
            } else {
                pos_b[idx] = next.position;
                vel_b[idx] = next.velocity;
            }
        }
        storageBarrier();   // every write of this substep is seen by the next one's reads
    }
}
