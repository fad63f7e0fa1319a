// fluid/lambda.wgsl  --  pass `<entity>:fluid:lambda:<substep>:<iteration>`
//
// PBF density constraint: each particle's density rho = m sum_j W(p_i - p_j) over its
// neighbours (itself included) and its multiplier lambda = -C / (sum_k |grad_k C|^2 + eps), with
// C = max(rho / rho0 - 1, 0), the bounds' walls counted as rest fluid behind them (types.wgsl)
// (the constraint only pushes apart: the free surface is not pulled
// inwards). Neighbours come from the substep's neighbour grid. The pass runs in the grid's slot
// order: invocation t solves the particle at slot t, and reads every position from `sorted`, the
// predictions in slot order (the grid's snapshot on the first iteration, then the previous
// correct pass's), so neighbouring invocations read neighbouring records.
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform FluidParams), 1 sorted (read: predictions in slot
//   order), 2 solve (rw: x lambda, y density, by particle), 3 solve_sorted (rw: the same in slot
//   order); group 1: the neighbour grid (common/neighbours_query.wgsl)

//! include common/dispatch.wgsl
//! include fluid/types.wgsl
//! include common/neighbours_query.wgsl

@group(0) @binding(0) var<uniform> params: FluidParams;
@group(0) @binding(1) var<storage, read> sorted: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> solve: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> solve_sorted: array<vec4f>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let t = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (t >= params.count) { return; }
    let i = neighbour_index(t);
    let p = sorted[t];
    if (p.w == 0.0) {
        solve[i] = vec4f(0.0);
        solve_sorted[t] = vec4f(0.0);
        return;
    }
    let h = params.upper.w;
    let volume = params.gravity.w;
    var sum_w = 0.0;
    var grad_i = vec3f(0.0);
    var sum_sq = 0.0;
    var walk = neighbour_walk(p.xyz);
    while (neighbour_next(&walk)) {
        let q = sorted[walk.slot];
        let d = p.xyz - q.xyz;
        let r2 = dot(d, d);
        if (q.w == 0.0 || r2 >= h * h) { continue; }
        sum_w += poly6(r2, params);
        if (walk.slot != t) {
            let g = volume * spiky_gradient(d, sqrt(r2), params);
            grad_i += g;
            sum_sq += dot(g, g);
        }
    }
    let wall = wall_density(p.xyz, params);
    grad_i += wall.gradient;
    let c = max(volume * sum_w + wall.density - 1.0, 0.0);
    let lambda = -c / (sum_sq + dot(grad_i, grad_i) + params.kernel.z);
    let out = vec4f(lambda, params.kernel.w * (volume * sum_w + wall.density), 0.0, 0.0);
    solve[i] = out;
    solve_sorted[t] = out;
}
