// particle_life/draw.wgsl  --  pass `<entity>:particle_life:draw` (render)
//
// Every particle as a soft round sprite coloured by its species (hues around the colour wheel),
// in the box placed at `origin`; fragment entry points by blend mode from common/sprite.wgsl.
// Draw: 6 vertices x count instances. Bindings (group 0): 0 frame (uniform Frame),
// 1 look (uniform PLLook), 2 particles (read)

//! include common/frame.wgsl
//! include particle_life/types.wgsl
//! include common/sprite.wgsl

struct PLLook {
    origin: vec4f,    // xyz: world position of the box's corner; w: sprite size, world units
    palette: array<vec4f, 16>,   // linear colour per species
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: PLLook;
@group(0) @binding(2) var<storage, read> particles: array<LifeParticle>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> SpriteVertex {
    let p = particles[instance];
    let c = sprite_corner(vertex);
    let world = look.origin.xyz + p.position.xyz
                + (frame.camera_right.xyz * c.x + frame.camera_up.xyz * c.y) * (0.5 * look.origin.w);
    var out: SpriteVertex;
    out.clip = frame.view_proj * vec4f(world, 1.0);
    out.corner = c;
    out.color = look.palette[u32(p.position.w) % 16u];
    return out;
}

