// fluid/draw.wgsl  --  pass `<entity>:fluid:draw` (render, look = "particles")
//
// Every live fluid particle as a round sprite of its diameter, shaded as a small lit sphere and
// whitened with speed (foam); free slots collapse to a point outside the view. Opaque: the
// fragment entry fluid_opaque cuts the disc out and writes depth like any opaque sprite.
// Draw: 6 vertices x slots instances. Bindings (group 0): 0 frame (uniform Frame),
// 1 look (uniform FluidLook), 2 position (read), 3 velocity (read)

//! include common/frame.wgsl
//! include common/sprite.wgsl

struct FluidLook {
    color: vec4f,     // linear rgb, alpha
    size: vec4f,      // x: sprite diameter, world units; y: the speed that is fully white
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: FluidLook;
@group(0) @binding(2) var<storage, read> position: array<vec4f>;
@group(0) @binding(3) var<storage, read> velocity: array<vec4f>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> SpriteVertex {
    let p = position[instance];
    let c = sprite_corner(vertex);
    let world = p.xyz + (frame.camera_right.xyz * c.x + frame.camera_up.xyz * c.y)
                * (0.5 * look.size.x);
    var out: SpriteVertex;
    out.clip = select(vec4f(2.0, 2.0, 2.0, 1.0), frame.view_proj * vec4f(world, 1.0), p.w != 0.0);
    out.corner = c;
    let foam = clamp(length(velocity[instance].xyz) / look.size.y, 0.0, 1.0);
    out.color = vec4f(mix(look.color.rgb, vec3f(0.85, 0.92, 1.0), foam * foam), look.color.a);
    return out;
}

// The sprite as a sphere lit from the upper left of the view: a diffuse term, an ambient floor
// and a highlight.
@fragment
fn fluid_opaque(in: SpriteVertex) -> @location(0) vec4f {
    sprite_falloff(in.corner);   // discards outside the disc
    let n = vec3f(in.corner, sqrt(max(1.0 - dot(in.corner, in.corner), 0.0)));
    let light = normalize(vec3f(-0.4, 0.6, 0.7));
    let diffuse = max(dot(n, light), 0.0);
    let highlight = pow(max(dot(n, normalize(light + vec3f(0.0, 0.0, 1.0))), 0.0), 24.0);
    return vec4f(in.color.rgb * (0.35 + 0.65 * diffuse) + vec3f(0.35 * highlight), 1.0);
}
