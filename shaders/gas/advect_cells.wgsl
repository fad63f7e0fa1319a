// gas/advect_cells.wgsl  --  passes `<entity>:gas:advect:scalars` and, with MacCormack,
// `<entity>:gas:advect:scalars:correct`
//
// The velocity carries the scalars (density, temperature, fuel). Semi-Lagrangian
// (CORRECT = false): each cell takes the scalars sampled where its centre was dt ago.
// MacCormack's correction (CORRECT = true; Selle et al. 2008), after that pass wrote `hat`: the
// trace forward from the centre samples `hat`, and the cell takes hat + (scalars - that) / 2,
// clamped into the range of the 8 values the backward trace interpolated.
// One invocation per cell (GasParams.counts.y); workgroup size 64, dispatch ceil(cells / 64)
// workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read: the step's velocity),
//   2 scalars (read), 3 hat (read: the semi-Lagrangian result; CORRECT only), 4 result (rw)

//! include common/dispatch.wgsl
//! include gas/sample.wgsl
//! include gas/centred.wgsl

override CORRECT: bool = false;

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read> scalars: array<vec4f>;
@group(0) @binding(3) var<storage, read> hat: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> result: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

fn face_value(field: u32, f: u32) -> f32 {
    return velocity[f];
}

fn cell_value(field: u32, i: u32) -> vec4f {
    if (field == 0u) { return scalars[i]; }
    return hat[i];
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let c = cell_coords(i, params.cells.xyz);
    let g = vec3f(c) + vec3f(0.5);
    let step = params.motion.x / params.lower.w;
    let v = centred(c);
    let back = sample_cells(params, 0u, g - v * step);
    if (!CORRECT) {
        result[i] = back.value;
        return;
    }
    let again = sample_cells(params, 1u, g + v * step);
    let corrected = hat[i] + 0.5 * (scalars[i] - again.value);
    result[i] = clamp(corrected, back.low, back.high);
}
