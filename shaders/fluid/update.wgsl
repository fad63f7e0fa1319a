// fluid/update.wgsl  --  pass `<entity>:fluid:update:<substep>`
//
// PBF velocity update: v = (p* - x) / dt, from the corrected prediction and the substep's
// starting position (written to a scratch buffer that the curl and finish passes read).
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform FluidParams), 1 position (read), 2 predicted (read),
//   3 moved (rw: xyz velocity)

//! include common/dispatch.wgsl
//! include fluid/types.wgsl

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<storage, read> position: array<vec4f>;
@group(0) @binding(2) var<storage, read> predicted: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> moved: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let p = predicted[i];
    if (p.w == 0.0) {
        moved[i] = vec4f(0.0);
        return;
    }
    moved[i] = vec4f((p.xyz - position[i].xyz) / params.lower.w, 0.0);
}
