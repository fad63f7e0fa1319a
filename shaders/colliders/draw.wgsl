// colliders/draw.wgsl  --  pass `<entity>:collider:draw` (render, indexed; opaque, depth write)
//
// A visible collider as a lit solid: its unit mesh (sphere, box or floor square) moved by the
// entity's model matrix. Linear HDR light: Lambert from the scene light (frame.light_*), its
// ambient shaded as a hemisphere (more from the sky than the ground), and a soft rim on curved
// shapes. The Lambert term is shadowed by the light's shadow map (common/shadow.wgsl); the
// ambient and the rim are not. A plane gets a box-filtered
// checker (it is a floor: cells give scale and perspective without aliasing far away).
// Draw: indexed triangle list, 3 indices per triangle, 1 instance. Bindings (group 0):
// 0 frame (uniform Frame), 1 look (uniform ColliderLook), 2 vertices (read, array<MeshVertex>),
// 3 shadow_map (depth texture), 4 shadow_sampler (comparison sampler),
// 5 shadow_opacity (the particles' opacity layers), 6 point_lights (read), 7 light_tiles (read):
// the point lights of the pixel's tile (common/point_lights.wgsl), added to the light

//! include common/frame.wgsl
//! include common/shadow.wgsl
//! include common/point_lights.wgsl
//! include colliders/types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: ColliderLook;
@group(0) @binding(2) var<storage, read> vertices: array<MeshVertex>;
@group(0) @binding(3) var shadow_map: texture_depth_2d;
@group(0) @binding(4) var shadow_sampler: sampler_comparison;
@group(0) @binding(5) var shadow_opacity: texture_2d<f32>;
@group(0) @binding(6) var<storage, read> point_lights: array<PointLight>;
@group(0) @binding(7) var<storage, read> light_tiles: array<u32>;

struct VertexOut {
    @builtin(position) clip: vec4f,
    @location(0) world: vec3f,
    @location(1) normal: vec3f,
    @location(2) local: vec3f,
};

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> VertexOut {
    let v = vertices[index];
    let world = look.model * vec4f(v.position.xyz, 1.0);
    var out: VertexOut;
    out.clip = frame.view_proj * world;
    out.world = world.xyz;
    out.normal = (look.normal_matrix * vec4f(v.normal.xyz, 0.0)).xyz;
    out.local = v.position.xyz;
    return out;
}

// The unit direction from the surface to the eye (orthographic: the same everywhere).
fn toward_eye(world: vec3f) -> vec3f {
    if (frame.camera_position.w > 0.5) {
        return normalize(frame.camera_position.xyz - world);
    }
    return normalize(cross(frame.camera_right.xyz, frame.camera_up.xyz));
}

// 1 on odd cells, 0 on even ones, averaged over the pixel's footprint (a box filter), so
// cells smaller than a pixel fade to grey instead of shimmering.
fn filtered_checker(p: vec2f) -> f32 {
    let w = abs(dpdx(p)) + abs(dpdy(p)) + vec2f(1e-4);
    let i = 2.0 * (abs(fract((p - 0.5 * w) * 0.5) - 0.5) - abs(fract((p + 0.5 * w) * 0.5) - 0.5)) / w;
    return 0.5 - 0.5 * i.x * i.y;
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4f {
    // derivatives need uniform control flow: taken before any branch
    let checker = filtered_checker(in.local.xz * look.style.yz);
    var n = normalize(in.normal);
    if (!front) { n = -n; }   // a floor seen from below, or the inside of a solid
    let eye = toward_eye(in.world);
    let lambert = max(dot(n, frame.light_direction.xyz), 0.0);
    // the hemisphere averages the ambient fraction: 0.4x from below, 1.6x from above
    let ambient = frame.light_color.w * mix(0.4, 1.6, 0.5 + 0.5 * n.y);
    let rim = look.style.w * pow(1.0 - max(dot(n, eye), 0.0), 3.0);
    let base = look.color.rgb * (1.0 - look.style.x * checker);
    let visibility = shadow_visibility(frame, shadow_map, shadow_sampler, shadow_opacity,
                                       in.world, n);
    let points = base * point_light_sum(frame, in.world, n, in.clip.xy);
    let lit = base * (ambient + frame.light_color.rgb * lambert * visibility) + rim * (0.6 * look.color.rgb + vec3f(0.08)) + points;
    return vec4f(lit, 1.0);
}
