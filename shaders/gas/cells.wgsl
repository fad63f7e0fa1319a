// gas/cells.wgsl  --  pass `<entity>:gas:cells`
//
// Each cell's scalars after advection, over the step dt: what the sources inside which its
// centre lies add (per second x dt; a source smaller than a cell still fills the cell holding
// its centre), then combustion (above the ignition temperature a fraction 1 - exp(-burn_rate dt)
// of the fuel burns, adding heat and smoke per unit burnt), then cooling and dissipation
// (exponential: temperature x exp(-cooling dt), density and fuel x exp(-dissipation dt)). Then
// the cell's body force from those scalars (gas/body_force.wgsl), for gas/faces.wgsl to average
// onto the faces, kept as 16-bit floats (gas/types.wgsl's pack_force). A solid cell
// (gas/solids.wgsl) holds nothing and feels no force.
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 sources (read GasSource array),
//   2 advected (read: the advected scalars), 3 scalars (rw: the step's result), 4 solid (read),
//   5 curl (read: |w|), 6 force (rw), 7 forces (read Force array, GasParams.counts.w of them),
//   8 velocity (read: after advection)

//! include common/dispatch.wgsl
//! include gas/body_force.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> sources: array<GasSource>;
@group(0) @binding(2) var<storage, read> advected: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> scalars: array<vec4f>;
@group(0) @binding(4) var<storage, read> solid: array<u32>;
@group(0) @binding(5) var<storage, read> curl: array<f32>;
@group(0) @binding(6) var<storage, read_write> force: array<vec2u>;
@group(0) @binding(7) var<storage, read> forces: array<Force>;
@group(0) @binding(8) var<storage, read> velocity: array<f32>;

const WORKGROUP_SIZE: u32 = 64u;

// Whether the cell of lowest corner `lo` (world) and edge h lies in source s.
fn inside(s: GasSource, lo: vec3f, h: f32) -> bool {
    let centre = lo + vec3f(0.5 * h);
    let holds = all(s.center.xyz >= lo) && all(s.center.xyz < lo + vec3f(h));
    let kind = u32(s.velocity.w);
    if (kind == SHAPE_SPHERE) {
        return holds || distance(centre, s.center.xyz) <= s.extent.w;
    }
    if (kind == SHAPE_BOX) {
        return holds || all(abs(centre - s.center.xyz) <= s.extent.xyz);
    }
    return holds;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    if (solid[i] != 0u) {
        scalars[i] = vec4f(0.0);
        force[i] = vec2u(0u);
        return;
    }
    let h = params.lower.w;
    let dt = params.motion.x;
    let c = cell_coords(i, params.cells.xyz);
    let lo = params.lower.xyz + vec3f(c) * h;
    var s = advected[i];
    for (var k = 0u; k < params.counts.x; k++) {
        if (inside(sources[k], lo, h)) {
            s = vec4f(s.xyz + sources[k].amounts.xyz * dt, s.w);
        }
    }
    if (s.y > params.burn.y) {
        let burnt = s.z * (1.0 - exp(-params.burn.x * dt));
        s.z -= burnt;
        s.y += params.burn.z * burnt;
        s.x += params.burn.w * burnt;
    }
    let fade = exp(-params.decay.y * dt);
    let result = vec4f(s.x * fade, s.y * exp(-params.decay.x * dt), s.z * fade, 0.0);
    scalars[i] = result;
    force[i] = pack_force(body_force(c, result));
}
