// gas/faces.wgsl  --  pass `<entity>:gas:faces`
//
// Each face's velocity component after advection gains dt x the mean body force of the two cells
// it joins (the one cell inside at an open side), is set to a source's velocity where the face's
// point lies in a source that sets one, is 0 on a solid wall (the boundary's solid sides), and
// next to a solid cell (gas/solids.wgsl) is the component of that collider's velocity (a moving
// collider pushes the gas; the projection keeps these faces as they are).
// One invocation per face of all three runs; workgroup size 64, dispatch ceil(faces / 64)
// workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 sources (read GasSource array),
//   2 force (read: gas/types.wgsl's pack_force), 3 velocity (rw: after advection, in place),
//   4 solid (read),
//   5 motion (read: vec4f per collider, xyz its velocity over the last step)

//! include common/dispatch.wgsl
//! include gas/types.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> sources: array<GasSource>;
@group(0) @binding(2) var<storage, read> force: array<vec2u>;
@group(0) @binding(3) var<storage, read_write> velocity: array<f32>;
@group(0) @binding(4) var<storage, read> solid: array<u32>;
@group(0) @binding(5) var<storage, read> motion: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

fn in_source(s: GasSource, x: vec3f, h: f32) -> bool {
    let kind = u32(s.velocity.w);
    let near = all(abs(x - s.center.xyz) <= vec3f(0.5 * h));
    if (kind == SHAPE_SPHERE) { return near || distance(x, s.center.xyz) <= s.extent.w; }
    if (kind == SHAPE_BOX) { return near || all(abs(x - s.center.xyz) <= s.extent.xyz); }
    return near;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let f = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (f >= params.counts.z) { return; }
    let n = params.cells.xyz;
    let c = face_coords(f, n);
    let e = vec3f(unit(u32(c.w)));   // the face's axis
    let cells = face_cells(params, c);
    let lo = cells.lo;
    let hi = cells.hi;
    if (on_solid_side(params, c)) {
        velocity[f] = 0.0;
        return;
    }
    let by = max(solid[cell_at(lo, n)], solid[cell_at(hi, n)]);
    if (by != 0u) {
        velocity[f] = dot(motion[by - 1u].xyz, e);
        return;
    }
    let push = 0.5 * dot(unpack_force(force[cell_at(lo, n)]) + unpack_force(force[cell_at(hi, n)]),
                         e);
    var value = velocity[f] + params.motion.x * push;
    let h = params.lower.w;
    let x = params.lower.xyz + (vec3f(c.xyz) + 0.5 * (vec3f(1.0) - e)) * h;
    for (var s = 0u; s < params.counts.x; s++) {
        if (sources[s].amounts.w != 0.0 && in_source(sources[s], x, h)) {
            value = dot(sources[s].velocity.xyz, e);
        }
    }
    velocity[f] = value;
}
