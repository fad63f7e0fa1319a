// emitter/draw.wgsl  --  pass `<entity>:emitter:draw` (render, drawIndirect)
//
// Camera-facing billboards: instance k draws particle alive_list[k] as a quad of `size` world
// units (or pixels), coloured, faded and scaled by the looks baked over life (linear light), with
// a per-particle random variation of size and brightness and a soft round falloff.
// Fragment entry points by blend mode come from common/sprite.wgsl.
// Draw: 6 vertices x alive-count instances, indirect. Bindings (group 0): 0 frame (uniform Frame),
// 1 params (uniform EmitterParams), 2 particles (read), 3 alive_list (read), 4 looks (read)

//! include common/frame.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include common/sprite.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: EmitterParams;
@group(0) @binding(2) var<storage, read> particles: array<Particle>;
@group(0) @binding(3) var<storage, read> alive_list: array<u32>;
@group(0) @binding(4) var<storage, read> looks: Looks;

fn look_color(t: f32) -> vec4f {
    let x = clamp(t, 0.0, 1.0) * f32(LOOK_SAMPLES - 1u);
    let k = min(u32(x), LOOK_SAMPLES - 2u);
    return mix(looks.color[k], looks.color[k + 1u], x - f32(k));
}

fn look_size(t: f32) -> f32 {
    let x = clamp(t, 0.0, 1.0) * f32(LOOK_SAMPLES - 1u);
    let k = min(u32(x), LOOK_SAMPLES - 2u);
    let a = looks.size[k / 4u][k % 4u];
    let b = looks.size[(k + 1u) / 4u][(k + 1u) % 4u];
    return mix(a, b, x - f32(k));
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> SpriteVertex {
    let slot = alive_list[instance];
    let p = particles[slot];
    let c = sprite_corner(vertex);
    let t = p.position_age.w / max(p.velocity_lifetime.w, 1e-6);
    // per-particle variation, stable over its life: keyed by slot and its (random) lifetime
    let key = pcg_hash(slot ^ bitcast<u32>(p.velocity_lifetime.w));
    let size_factor = 1.0 + params.shape.z * (2.0 * random01(key, 0u) - 1.0);
    let shade = 1.0 + params.shape.w * (2.0 * random01(key, 1u) - 1.0);
    let half = 0.5 * params.size * look_size(t) * size_factor;
    var out: SpriteVertex;
    if (params.size_in_pixels == 1u) {
        let centre = frame.view_proj * vec4f(p.position_age.xyz, 1.0);
        out.clip = centre + vec4f(c * half * 2.0 / frame.viewport * centre.w, 0.0, 0.0);
    } else {
        let world = p.position_age.xyz
                    + (frame.camera_right.xyz * c.x + frame.camera_up.xyz * c.y) * half;
        out.clip = frame.view_proj * vec4f(world, 1.0);
    }
    out.corner = c;
    let color = look_color(t);
    out.color = vec4f(color.rgb * shade, color.a);
    return out;
}

