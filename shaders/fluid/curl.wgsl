// fluid/curl.wgsl  --  pass `<entity>:fluid:curl:<substep>`
//
// The vorticity of each particle for confinement: w_i = V sum_j (v_j - v_i) x grad_j W(p_i - p_j)
// (grad_j W = -grad_i W), its length kept in w. It runs in the grid's slot order, positions read
// in slot order (as fluid/lambda.wgsl); velocities and the result by particle.
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform FluidParams), 1 sorted (read: the corrected predictions
//   in slot order), 2 moved (read),
//   3 vorticity (rw: xyz w_i, w |w_i|); group 1: the neighbour grid (common/neighbours_query.wgsl)

//! include common/dispatch.wgsl
//! include fluid/types.wgsl
//! include common/neighbours_query.wgsl

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<storage, read> sorted: array<vec4f>;
@group(0) @binding(2) var<storage, read> moved: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> vorticity: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let t = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (t >= params.count) { return; }
    let i = neighbour_index(t);
    let p = sorted[t];
    if (p.w == 0.0 || params.tension.w == 0.0) {
        vorticity[i] = vec4f(0.0);
        return;
    }
    let h = params.upper.w;
    let v = moved[i].xyz;
    var w = vec3f(0.0);
    var walk = neighbour_walk(p.xyz);
    while (neighbour_next(&walk)) {
        let q = sorted[walk.slot];
        let d = p.xyz - q.xyz;
        let r2 = dot(d, d);
        if (q.w == 0.0 || walk.slot == t || r2 >= h * h) { continue; }
        let j = neighbour_index(walk.slot);
        w += cross(moved[j].xyz - v, -spiky_gradient(d, sqrt(r2), params));
    }
    w *= params.gravity.w;
    vorticity[i] = vec4f(w, length(w));
}
