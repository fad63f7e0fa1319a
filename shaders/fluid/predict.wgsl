// fluid/predict.wgsl  --  pass `<entity>:fluid:predict:<substep>`
//
// PBF step 1: each particle's velocity gains gravity over the substep and its position moves by
// it (the prediction p*), clamped into the bounds; free slots wait at the park point.
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform FluidParams), 1 position (read), 2 velocity (read),
//   3 predicted (rw)

//! include common/dispatch.wgsl
//! include fluid/types.wgsl

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<storage, read> position: array<vec4f>;
@group(0) @binding(2) var<storage, read> velocity: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> predicted: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let x = position[i];
    if (x.w == 0.0) {
        predicted[i] = vec4f(params.park.xyz, 0.0);
        return;
    }
    let dt = params.lower.w;
    let v = velocity[i].xyz + params.gravity.xyz * dt;
    predicted[i] = vec4f(clamp(x.xyz + v * dt, params.lower.xyz, params.upper.xyz), 1.0);
}
