// fluid/correct.wgsl  --  pass `<entity>:fluid:correct:<substep>:<iteration>`
//
// PBF position correction: dp_i = V sum_j (lambda_i + lambda_j + s_corr) grad W(p_i - p_j),
// plus lambda_i times the walls' density gradient (types.wgsl), with the artificial pressure
// s_corr = -k (W(r) / W(dq))^4 (Macklin and Mueller 2013; k scaled by the lattice's constraint
// gradient, see FluidParams.tension), then the corrected prediction moved out of the scene's
// colliders (collide_particle of common/collide.wgsl: sphere, box, plane, SDF) and clamped into
// the bounds. Reads one prediction buffer, writes another (ping-pong), so every particle sees its
// neighbours' positions from before this pass. Like fluid/lambda.wgsl it runs in slot order and
// reads positions and multipliers in slot order; it writes the corrected prediction by particle
// and in slot order (the next iteration's `sorted`).
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform FluidParams), 1 sorted (read: predictions in slot
//   order), 2 solve_sorted (read: lambda.wgsl's, in slot order), 3 corrected (rw: by particle),
//   4 corrected_sorted (rw: in slot order), 7 collision, 8 colliders, 11 scene_depth
//   (common/collide.wgsl), 9, 10 (common/volumes.wgsl); group 1: the neighbour grid
//   (common/neighbours_query.wgsl)

//! include common/dispatch.wgsl
//! include fluid/types.wgsl
//! include common/neighbours_query.wgsl
//! include common/collide.wgsl

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<storage, read> sorted: array<vec4f>;
@group(0) @binding(2) var<storage, read> solve_sorted: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> corrected: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> corrected_sorted: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let t = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (t >= params.count) { return; }
    let i = neighbour_index(t);
    let p = sorted[t];
    if (p.w == 0.0) {
        corrected[i] = p;
        corrected_sorted[t] = p;
        return;
    }
    let h = params.upper.w;
    let lambda_i = solve_sorted[t].x;
    var dp = vec3f(0.0);
    var walk = neighbour_walk(p.xyz);
    while (neighbour_next(&walk)) {
        let q = sorted[walk.slot];
        let d = p.xyz - q.xyz;
        let r2 = dot(d, d);
        if (q.w == 0.0 || walk.slot == t || r2 >= h * h) { continue; }
        let ratio = poly6(r2, params) * params.tension.y;
        let s_corr = -params.tension.x * ratio * ratio * ratio * ratio;
        dp += (lambda_i + solve_sorted[walk.slot].x + s_corr)
              * spiky_gradient(d, sqrt(r2), params);
    }
    let moved = p.xyz + params.gravity.w * dp + lambda_i * wall_density(p.xyz, params).gradient;
    let pushed = collide_particle(moved, vec3f(0.0)).position;
    let out = vec4f(clamp(pushed, params.lower.xyz, params.upper.xyz), 1.0);
    corrected[i] = out;
    corrected_sorted[t] = out;
}
