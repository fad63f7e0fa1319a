// particle_life/draw.wgsl  --  pass `<entity>:particle_life:draw` (render)
//
// Every particle as a soft round sprite coloured by its species (hues around the colour wheel),
// in the box placed at `origin` (box centred there).
// Draw: 6 vertices x count instances. Bindings (group 0): 0 frame (uniform Frame),
// 1 look (uniform PLLook), 2 particles (read)

//! include common/frame.wgsl
//! include particle_life/types.wgsl

struct PLLook {
    origin: vec4f,    // xyz: world position of the box's corner; w: sprite size, world units
    palette: array<vec4f, 16>,   // linear colour per species
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: PLLook;
@group(0) @binding(2) var<storage, read> particles: array<LifeParticle>;

struct VertexOut {
    @builtin(position) clip: vec4f,
    @location(0) corner: vec2f,
    @location(1) color: vec4f,
};

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    var corners = array<vec2f, 6>(vec2f(-1.0, -1.0), vec2f(1.0, -1.0), vec2f(1.0, 1.0),
                                  vec2f(-1.0, -1.0), vec2f(1.0, 1.0), vec2f(-1.0, 1.0));
    let p = particles[instance];
    let c = corners[vertex];
    let world = look.origin.xyz + p.position.xyz
                + (frame.camera_right.xyz * c.x + frame.camera_up.xyz * c.y) * (0.5 * look.origin.w);
    var out: VertexOut;
    out.clip = frame.view_proj * vec4f(world, 1.0);
    out.corner = c;
    out.color = look.palette[u32(p.position.w) % 16u];
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
    return vec4f(in.color.rgb * falloff(in.corner), 0.0);
}

@fragment
fn fs_alpha(in: VertexOut) -> @location(0) vec4f {
    let a = falloff(in.corner);
    return vec4f(in.color.rgb * a, a);
}

@fragment
fn fs_opaque(in: VertexOut) -> @location(0) vec4f {
    falloff(in.corner);
    return vec4f(in.color.rgb, 1.0);
}
