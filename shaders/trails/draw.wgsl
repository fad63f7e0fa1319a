// trails/draw.wgsl  --  pass `<entity>:trail:draw` (render, drawIndirect)
//
// Camera-facing ribbons: instance i draws the ring of slot alive_list[i] (the source's alive
// list) as a strip of (length - 1) quads, newest sample first. Each sample point is pushed
// sideways by half the width at its place along the trail, across both the trail's direction
// there and the line of sight, so the strip faces the camera; colour and width come from the
// looks baked over the trail (newest to oldest). A slot born after the newest sample (a step
// between samples, every > 1) still holds its previous particle's ring and draws nothing until
// it is sampled. Fragments: additive blending (one + one), soft towards the ribbon's edges.
// Draw: params.vertices vertices x alive-count instances, indirect (<entity>/trail_args).
// Bindings (group 0): 0 frame (uniform Frame), 1 params (read TrailParams),
//   2 particles (read: <source>/particles), 3 alive_list (read: <source>/alive_list),
//   4 points (read), 5 sampled (read), 6 looks (read TrailLooks)

//! include common/frame.wgsl
//! include emitter/types.wgsl
//! include trails/types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> params: TrailParams;
@group(0) @binding(2) var<storage, read> particles: array<Particle>;
@group(0) @binding(3) var<storage, read> alive_list: array<u32>;
@group(0) @binding(4) var<storage, read> points: array<vec4f>;
@group(0) @binding(5) var<storage, read> sampled: array<vec2f>;
@group(0) @binding(6) var<storage, read> looks: TrailLooks;

struct TrailVertex {
    @builtin(position) clip: vec4f,
    @location(0) across: f32,     // -1..1 from one edge of the ribbon to the other
    @location(1) color: vec4f,    // linear rgb, straight alpha
};

fn look_color(t: f32) -> vec4f {
    let x = clamp(t, 0.0, 1.0) * f32(TRAIL_SAMPLES - 1u);
    let k = min(u32(x), TRAIL_SAMPLES - 2u);
    return mix(looks.color[k], looks.color[k + 1u], x - f32(k));
}

fn look_width(t: f32) -> f32 {
    let x = clamp(t, 0.0, 1.0) * f32(TRAIL_SAMPLES - 1u);
    let k = min(u32(x), TRAIL_SAMPLES - 2u);
    let a = looks.width[k / 4u][k % 4u];
    let b = looks.width[(k + 1u) / 4u][(k + 1u) % 4u];
    return mix(a, b, x - f32(k));
}

fn sample_point(slot: u32, k: u32) -> vec3f {
    return points[ring_index(params, slot, k)].xyz;
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> TrailVertex {
    var out: TrailVertex;
    out.clip = vec4f(0.0, 0.0, 2.0, 1.0);   // beyond the far plane: clipped, nothing drawn
    out.across = 0.0;
    out.color = vec4f(0.0);
    let slot = alive_list[instance];
    let p = particles[slot];
    if (slot >= params.capacity
        || born_since(p.position_age.w, p.velocity_lifetime.w, sampled[slot],
                      params.since_sample, params.tolerance)) {
        return out;
    }
    // two triangles per segment: (sample along the segment, side of the ribbon) per corner
    var along = array<u32, 6>(0u, 0u, 1u, 0u, 1u, 1u);
    var side = array<f32, 6>(-1.0, 1.0, 1.0, -1.0, 1.0, -1.0);
    let corner = vertex % 6u;
    let k = vertex / 6u + along[corner];   // sample index, 0 = newest
    let last = params.length - 1u;
    let here = sample_point(slot, k);
    let tangent = sample_point(slot, max(k, 1u) - 1u) - sample_point(slot, min(k + 1u, last));
    // the line of sight: towards the eye (perspective, w = 1) or the view axis (orthographic,
    // w = 0); a mix, not a branch on the uniform (see TrailParams)
    let sight = mix(cross(frame.camera_right.xyz, frame.camera_up.xyz),
                    frame.camera_position.xyz - here, frame.camera_position.w);
    let normal = cross(tangent, sight);
    let n = length(normal);
    let t = f32(k) / f32(last);
    var offset = vec3f(0.0);
    if (n > 1e-20) {   // a ring of one repeated point (just born) has no direction: no area
        offset = normal * (0.5 * look_width(t) * side[corner] / n);
    }
    out.clip = frame.view_proj * vec4f(here + offset, 1.0);
    out.across = side[corner];
    out.color = look_color(t);
    return out;
}

@fragment
fn fs_additive(in: TrailVertex) -> @location(0) vec4f {
    let edge = 1.0 - in.across * in.across;
    let a = in.color.a * edge;
    return vec4f(in.color.rgb * a, 0.0);
}
