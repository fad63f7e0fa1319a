// gas/solids.wgsl  --  pass `<entity>:gas:solids`
//
// Which cells are solid this step: those whose centre lies inside a collider of the scene
// (common/collide.wgsl's signed distance below 0; a collider that keeps particles inside makes
// its outside solid). The depth collider (what the last render drew) is no solid for a gas.
// A solid cell holds 1 + the index of the (last) collider it lies in, else 0. Faces next to a
// solid cell carry that collider's velocity (gas/faces.wgsl), its scalars are 0, and the
// pressure equation leaves it out (gas/cells.wgsl, gas/poisson.wgsl). Each solid cell also sets
// its bit in `solid_bits`, zeroed before this pass: bit (slot mod 32) of word slot / 32, for the
// slot of the pressure multigrid's colour-split order (gas/types.wgsl's level_slot), which the
// smoothing and restriction passes read (gas/poisson.wgsl) in place of a word per cell. Setting
// bits with atomicOr gives the same words in any order.
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 solid (rw: 1 + collider index, else 0),
//   2 solid_bits (rw, atomic),
//   7 collision, 8 colliders, 9 volume_refs, 10 volumes, 11 scene_depth (common/collide.wgsl)

//! include common/dispatch.wgsl
//! include common/collide.wgsl
//! include gas/types.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read_write> solid: array<u32>;   // 1 + collider index, or 0
@group(0) @binding(2) var<storage, read_write> solid_bits: array<atomic<u32>>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let c = cell_coords(i, params.cells.xyz);
    let x = params.lower.xyz + (vec3f(c) + vec3f(0.5)) * params.lower.w;
    var inside = 0u;
    for (var k = 0u; k < collision.count; k++) {
        if (colliders[k].kind != SOLID_DEPTH && solid_surface(k, x).distance < 0.0) {
            inside = k + 1u;
        }
    }
    solid[i] = inside;
    if (inside != 0u) {
        let slot = level_slot(c, params.cells.xyz);
        atomicOr(&solid_bits[slot >> 5u], 1u << (slot & 31u));
    }
}
