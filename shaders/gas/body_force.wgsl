// gas/body_force.wgsl: a cell's body force per unit mass, m/s^2 (no pass of its own): buoyancy
// (lift per unit temperature) less weight (fall per unit density) along +y, plus vorticity
// confinement (Fedkiw, Stam and Jensen 2001): epsilon h (N x w), with w the cell's vorticity
// (gas/vorticity.wgsl) and N the unit gradient of |w| (central differences of gas/curl.wgsl's
// |w|; one-sided at a wall), plus the scene's forces acting on the gas, each as on an emitter
// particle at the cell's centre moving with its velocity (common/forces.wgsl's
// force_acceleration; FORCE_KINDS compiles in the kinds present).
// The including pass binds `params` (GasParams), `velocity` (array<f32>: after advection),
// `curl` (array<f32>: |w| per cell) and `forces` (Force array, GasParams.counts.w of them).

//! include common/forces.wgsl
//! include gas/vorticity.wgsl

// The vorticity magnitude one cell up less one cell down along the axis of `e` (m cells).
fn curl_slope(c: vec3i, e: vec3i, m: i32, wrap: bool) -> f32 {
    let n = params.cells.xyz;
    return curl[cell_at(beside(c, e, 1, m, wrap), n)] - curl[cell_at(beside(c, e, -1, m, wrap), n)];
}

// The force on cell c whose scalars are s (density, temperature, fuel).
fn body_force(c: vec3i, s: vec4f) -> vec3f {
    let n = params.cells.xyz;
    var f = vec3f(0.0, params.motion.y * s.y - params.motion.z * s.x, 0.0);
    let epsilon = params.motion.w;
    if (epsilon > 0.0) {
        let m = vec3i(n);
        let wrap = wraps(params);
        let eta = vec3f(curl_slope(c, vec3i(1, 0, 0), m.x, wrap),
                        curl_slope(c, vec3i(0, 1, 0), m.y, wrap),
                        curl_slope(c, vec3i(0, 0, 1), m.z, wrap));
        let size = length(eta);
        if (size > 1e-12) {
            f += epsilon * params.lower.w * cross(eta / size, vorticity_at(c));
        }
    }
    if (params.counts.w > 0u) {
        let x = params.lower.xyz + (vec3f(c) + vec3f(0.5)) * params.lower.w;
        let v = centred(c);
        for (var k = 0u; k < params.counts.w; k++) {
            f += force_acceleration(forces[k], x, v);
        }
    }
    return f;
}
