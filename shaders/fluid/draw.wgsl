// fluid/draw.wgsl  --  pass `<entity>:fluid:draw` (render, look = "particles")
//
// Every live fluid particle as a round sprite of its diameter; free slots collapse to a point
// outside the view. Fragment entry points by blend mode from common/sprite.wgsl.
// Draw: 6 vertices x slots instances. Bindings (group 0): 0 frame (uniform Frame),
// 1 look (uniform FluidLook), 2 position (read)

//! include common/frame.wgsl
//! include common/sprite.wgsl

struct FluidLook {
    color: vec4f,     // linear rgb, alpha
    size: vec4f,      // x: sprite diameter, world units
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: FluidLook;
@group(0) @binding(2) var<storage, read> position: array<vec4f>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> SpriteVertex {
    let p = position[instance];
    let c = sprite_corner(vertex);
    let world = p.xyz + (frame.camera_right.xyz * c.x + frame.camera_up.xyz * c.y)
                * (0.5 * look.size.x);
    var out: SpriteVertex;
    out.clip = select(vec4f(2.0, 2.0, 2.0, 1.0), frame.view_proj * vec4f(world, 1.0), p.w != 0.0);
    out.corner = c;
    out.color = look.color;
    return out;
}
