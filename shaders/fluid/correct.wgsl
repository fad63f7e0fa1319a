// fluid/correct.wgsl  --  pass `<entity>:fluid:correct:<substep>:<iteration>`
//
// PBF position correction: dp_i = V sum_j (lambda_i + lambda_j + s_corr) grad W(p_i - p_j),
// plus lambda_i times the walls' density gradient (types.wgsl), with the artificial pressure s_corr = -k (W(r) / W(dq))^4 (Macklin and Mueller 2013; k scaled
// by the lattice's constraint gradient, see FluidParams.tension), then the corrected prediction
// moved out of the scene's colliders (collide_particle of common/collide.wgsl: sphere, box,
// plane, SDF) and clamped into the bounds. Reads one prediction buffer, writes the other
// (ping-pong), so every particle sees its neighbours' positions from before this pass.
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform FluidParams), 1 predicted (read), 2 solve (read),
//   3 corrected (rw), 7 collision, 8 colliders, 11 scene_depth (common/collide.wgsl), 9, 10
//   (common/volumes.wgsl); group 1: the neighbour grid (common/neighbours_query.wgsl)

//! include common/dispatch.wgsl
//! include fluid/types.wgsl
//! include common/neighbours_query.wgsl
//! include common/collide.wgsl

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<storage, read> predicted: array<vec4f>;
@group(0) @binding(2) var<storage, read> solve: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> corrected: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let p = predicted[i];
    if (p.w == 0.0) {
        corrected[i] = p;
        return;
    }
    let h = params.upper.w;
    let lambda_i = solve[i].x;
    var dp = vec3f(0.0);
    var walk = neighbour_walk(p.xyz);
    while (neighbour_next(&walk)) {
        let j = neighbour_index(walk.slot);
        let q = predicted[j];
        let d = p.xyz - q.xyz;
        let r2 = dot(d, d);
        if (q.w == 0.0 || j == i || r2 >= h * h) { continue; }
        let ratio = poly6(r2, params) * params.tension.y;
        let s_corr = -params.tension.x * ratio * ratio * ratio * ratio;
        dp += (lambda_i + solve[j].x + s_corr) * spiky_gradient(d, sqrt(r2), params);
    }
    let moved = p.xyz + params.gravity.w * dp + lambda_i * wall_density(p.xyz, params).gradient;
    let pushed = collide_particle(moved, vec3f(0.0)).position;
    corrected[i] = vec4f(clamp(pushed, params.lower.xyz, params.upper.xyz), 1.0);
}
