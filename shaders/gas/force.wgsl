// gas/force.wgsl  --  pass `<entity>:gas:force`
//
// Each cell's body force per unit mass, m/s^2: buoyancy (lift per unit temperature) less
// weight (fall per unit density) along +y, plus vorticity confinement (Fedkiw, Stam and Jensen
// 2001): epsilon h (N x w), with w the cell's vorticity (gas/vorticity.wgsl) and N the unit
// gradient of |w| (central differences of gas/curl.wgsl's |w|; one-sided at a wall), plus the
// scene's forces acting on the gas, each as on an emitter particle at the cell's centre moving
// with its velocity (common/forces.wgsl's force_acceleration; FORCE_KINDS compiles in the kinds
// present). Written for gas/faces.wgsl to average onto the faces.
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 scalars (read: this step's),
//   2 curl (read: |w|), 3 force (rw), 4 forces (read Force array, GasParams.counts.w of them),
//   5 velocity (read: after advection)

//! include common/dispatch.wgsl
//! include common/forces.wgsl
//! include gas/vorticity.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> scalars: array<vec4f>;
@group(0) @binding(2) var<storage, read> curl: array<f32>;
@group(0) @binding(3) var<storage, read_write> force: array<vec4f>;
@group(0) @binding(4) var<storage, read> forces: array<Force>;
@group(0) @binding(5) var<storage, read> velocity: array<f32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let n = params.cells.xyz;
    let s = scalars[i];
    var f = vec3f(0.0, params.motion.y * s.y - params.motion.z * s.x, 0.0);
    let epsilon = params.motion.w;
    if (epsilon > 0.0) {
        let c = cell_coords(i, n);
        var eta = vec3f(0.0);
        for (var a = 0u; a < 3u; a++) {
            var hi = c;
            var lo = c;
            hi[a] = along(c[a] + 1, i32(n[a]), wraps(params));
            lo[a] = along(c[a] - 1, i32(n[a]), wraps(params));
            eta[a] = curl[cell_at(hi, n)] - curl[cell_at(lo, n)];
        }
        let size = length(eta);
        if (size > 1e-12) {
            f += epsilon * params.lower.w * cross(eta / size, vorticity_at(c));
        }
    }
    if (params.counts.w > 0u) {
        let c = cell_coords(i, n);
        let x = params.lower.xyz + (vec3f(c) + vec3f(0.5)) * params.lower.w;
        let v = centred(c);
        for (var k = 0u; k < params.counts.w; k++) {
            f += force_acceleration(forces[k], x, v);
        }
    }
    force[i] = vec4f(f, 0.0);
}
