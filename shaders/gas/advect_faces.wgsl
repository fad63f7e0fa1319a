// gas/advect_faces.wgsl  --  passes `<entity>:gas:advect:velocity` and, with MacCormack,
// `<entity>:gas:advect:velocity:correct`
//
// The velocity carries itself. Semi-Lagrangian (CORRECT = false): each face's component is the
// velocity's own, sampled where the face's point was dt ago (traced back along the velocity at
// the face). MacCormack's correction (CORRECT = true; Selle et al. 2008), after that pass wrote
// its result into `hat`: the same trace forward from the face samples `hat`, and the face takes
// hat + (velocity - that) / 2, clamped into the range of the velocity's 8 values the backward
// trace interpolated (so no new extremes).
// One invocation per face of all three runs (GasParams.counts.z); workgroup size 64, dispatch
// ceil(faces / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read: the step's velocity),
//   2 hat (read: the semi-Lagrangian result; CORRECT only), 3 result (rw)

//! include common/dispatch.wgsl
//! include gas/sample.wgsl

override CORRECT: bool = false;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read> hat: array<f32>;
@group(0) @binding(3) var<storage, read_write> result: array<f32>;

const WORKGROUP_SIZE: u32 = 64u;

fn face_value(field: u32, f: u32) -> f32 {
    if (field == 0u) { return velocity[f]; }
    return hat[f];
}

fn cell_value(field: u32, i: u32) -> vec4f {
    return vec4f(0.0);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let f = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (f >= params.counts.z) { return; }
    let c = face_coords(f, params.cells.xyz);
    let a = u32(c.w);
    let g = vec3f(c.xyz) + 0.5 * (vec3f(1.0) - vec3f(unit(a)));   // the face's grid position
    let step = params.motion.x / params.lower.w;   // dt / h: world velocity to cells moved
    let v = velocity_at_face(params, f, c);
    let back = sample_face_axis(params, 0u, a, g - v * step);
    if (!CORRECT) {
        result[f] = back.value;
        return;
    }
    let again = sample_face_axis(params, 1u, a, g + v * step);
    let corrected = hat[f] + 0.5 * (velocity[f] - again.value);
    result[f] = clamp(corrected, back.low, back.high);
}
