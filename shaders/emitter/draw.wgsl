// emitter/draw.wgsl  --  pass `<entity>:emitter:draw` (render, drawIndirect)
//
// Camera-facing billboards: instance k draws particle alive_list[k] as a quad of `size` world
// units, coloured by the gradient over its life, with a soft round falloff.
// Fragment entry points by blend mode: fs_additive (one + one), fs_alpha (premultiplied),
// fs_opaque (round cutout, depth write).
// Draw: 6 vertices x alive-count instances, indirect. Bindings (group 0): 0 frame (uniform Frame),
// 1 params (uniform EmitterParams), 2 particles (read), 3 alive_list (read)

//! include common/frame.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: EmitterParams;
@group(0) @binding(2) var<storage, read> particles: array<Particle>;
@group(0) @binding(3) var<storage, read> alive_list: array<u32>;

struct VertexOut {
    @builtin(position) clip: vec4f,
    @location(0) corner: vec2f,
    @location(1) color: vec4f,
};

fn gradient(t: f32) -> vec4f {
    let n = params.color_count;
    if (n <= 1u) { return params.colors[0]; }
    let x = clamp(t, 0.0, 1.0) * f32(n - 1u);
    let k = min(u32(x), n - 2u);
    return mix(params.colors[k], params.colors[k + 1u], x - f32(k));
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    var corners = array<vec2f, 6>(vec2f(-1.0, -1.0), vec2f(1.0, -1.0), vec2f(1.0, 1.0),
                                  vec2f(-1.0, -1.0), vec2f(1.0, 1.0), vec2f(-1.0, 1.0));
    let p = particles[alive_list[instance]];
    let c = corners[vertex];
    let half = params.size * 0.5;
    let world = p.position_age.xyz + (frame.camera_right.xyz * c.x + frame.camera_up.xyz * c.y) * half;
    var out: VertexOut;
    out.clip = frame.view_proj * vec4f(world, 1.0);
    out.corner = c;
    out.color = gradient(p.position_age.w / max(p.velocity_lifetime.w, 1e-6));
    return out;
}

fn falloff(corner: vec2f) -> f32 {
    let r2 = dot(corner, corner);
    if (r2 >= 1.0) { discard; }
    let s = 1.0 - r2;
    return s * s;
}

@fragment
fn fs_additive(in: VertexOut) -> @location(0) vec4f {
    let a = in.color.a * falloff(in.corner);
    return vec4f(in.color.rgb * a, 0.0);
}

@fragment
fn fs_alpha(in: VertexOut) -> @location(0) vec4f {
    let a = in.color.a * falloff(in.corner);
    return vec4f(in.color.rgb * a, a);
}

@fragment
fn fs_opaque(in: VertexOut) -> @location(0) vec4f {
    falloff(in.corner);
    return vec4f(in.color.rgb, 1.0);
}
