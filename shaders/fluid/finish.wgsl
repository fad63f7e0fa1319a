// fluid/finish.wgsl  --  pass `<entity>:fluid:finish:<substep>`
//
// The end of a PBF substep: XSPH viscosity v_i += c V sum_j (v_j - v_i) W(p_i - p_j), vorticity
// confinement v_i += dt eps (N x w_i) with N = eta / |eta|, eta = V sum_j (|w_j| - |w_i|)
// grad W(p_i - p_j), and the corrected prediction becomes the position. The velocity's w keeps
// the last density estimate. It runs in the grid's slot order, positions read in slot order (as
// fluid/lambda.wgsl); the rest read and written by particle.
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform FluidParams), 1 sorted (read: the corrected predictions
//   in slot order), 2 moved (read),
//   3 vorticity (read), 4 solve (read), 5 position (rw), 6 velocity (rw); group 1: the neighbour
//   grid (common/neighbours_query.wgsl)

//! include common/dispatch.wgsl
//! include fluid/types.wgsl
//! include common/neighbours_query.wgsl

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<storage, read> sorted: array<vec4f>;
@group(0) @binding(2) var<storage, read> moved: array<vec4f>;
@group(0) @binding(3) var<storage, read> vorticity: array<vec4f>;
@group(0) @binding(4) var<storage, read> solve: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> position: array<vec4f>;
@group(0) @binding(6) var<storage, read_write> velocity: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let t = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (t >= params.count) { return; }
    let i = neighbour_index(t);
    let p = sorted[t];
    if (p.w == 0.0) {
        position[i] = p;
        velocity[i] = vec4f(0.0);
        return;
    }
    let h = params.upper.w;
    let v = moved[i].xyz;
    let w_i = vorticity[i];
    var blend = vec3f(0.0);
    var eta = vec3f(0.0);
    var walk = neighbour_walk(p.xyz);
    while (neighbour_next(&walk)) {
        let q = sorted[walk.slot];
        let d = p.xyz - q.xyz;
        let r2 = dot(d, d);
        if (q.w == 0.0 || walk.slot == t || r2 >= h * h) { continue; }
        let j = neighbour_index(walk.slot);
        blend += (moved[j].xyz - v) * poly6(r2, params);
        eta += (vorticity[j].w - w_i.w) * spiky_gradient(d, sqrt(r2), params);
    }
    let volume = params.gravity.w;
    var out = v + params.tension.z * volume * blend;
    let eta_length = length(eta);
    if (params.tension.w > 0.0 && eta_length > 0.0) {
        out += params.lower.w * params.tension.w * cross(eta / eta_length, w_i.xyz);
    }
    position[i] = p;
    velocity[i] = vec4f(out, solve[i].y);
}
