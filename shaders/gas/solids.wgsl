// gas/solids.wgsl  --  pass `<entity>:gas:solids`
//
// Which cells are solid this step: those whose centre lies inside a collider of the scene
// (common/collide.wgsl's signed distance below 0; a collider that keeps particles inside makes
// its outside solid). The depth collider (what the last render drew) is no solid for a gas.
// A solid cell holds 1 + the index of the (last) collider it lies in, else 0. Faces next to a
// solid cell carry that collider's velocity (gas/faces.wgsl), its scalars are 0, and the
// pressure equation leaves it out (gas/cells.wgsl, gas/poisson.wgsl).
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 solid (rw: 1 + collider index, else 0),
//   7 collision, 8 colliders, 9 volume_refs, 10 volumes, 11 scene_depth (common/collide.wgsl)

//! include common/dispatch.wgsl
//! include common/collide.wgsl
//! include gas/types.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read_write> solid: array<u32>;   // 1 + collider index, or 0

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let x = params.lower.xyz + (vec3f(cell_coords(i, params.cells.xyz)) + vec3f(0.5))
        * params.lower.w;
    var inside = 0u;
    for (var k = 0u; k < collision.count; k++) {
        if (colliders[k].kind != SOLID_DEPTH && solid_surface(k, x).distance < 0.0) {
            inside = k + 1u;
        }
    }
    solid[i] = inside;
}
