// meshes/draw.wgsl  --  pass `<entity>:mesh:draw` (render, drawIndirect; opaque, depth write)
//
// Mesh particles: instance k draws the emitter's particle alive_list[k] as the mesh (a flat
// triangle list read by vertex index), placed as meshes/place.wgsl says. Coloured by the
// emitter's colour over life (linear) with its per-particle variation, lit by the scene light
// (common/frame.wgsl scene_lit, the Lambert term shadowed: common/shadow.wgsl); alpha is
// ignored: meshes are opaque.
// Draw: MeshLook.vertices x alive-count instances, indirect (<entity>/mesh_args).
// Plus the point lights of the pixel's tile (common/point_lights.wgsl).
// Bindings (group 0): 0-6 as meshes/place.wgsl, 7 shadow_map (depth texture), 8 shadow_sampler
// (comparison sampler), 9 shadow_opacity (the particles' opacity layers), 10 point_lights (read),
// 11 light_tiles (read)

//! include meshes/place.wgsl
//! include common/shadow.wgsl
//! include common/point_lights.wgsl

@group(0) @binding(7) var shadow_map: texture_depth_2d;
@group(0) @binding(8) var shadow_sampler: sampler_comparison;
@group(0) @binding(9) var shadow_opacity: texture_2d<f32>;
@group(0) @binding(10) var<storage, read> point_lights: array<PointLight>;
@group(0) @binding(11) var<storage, read> light_tiles: array<u32>;

struct VertexOut {
    @builtin(position) clip: vec4f,
    @location(0) normal: vec3f,
    @location(1) color: vec3f,
    @location(2) world: vec3f,
};

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    let placed = place(vertex, instance);
    var out: VertexOut;
    out.clip = frame.view_proj * vec4f(placed.world, 1.0);
    out.normal = placed.normal;
    out.color = placed.color;
    out.world = placed.world;
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4f {
    let n = normalize(in.normal);
    let visibility = shadow_visibility(frame, shadow_map, shadow_sampler, shadow_opacity,
                                       in.world, n);
    let points = in.color * point_light_sum(frame, in.world, n, in.clip.xy);
    return vec4f(scene_lit(frame, in.color, n, visibility) + points, 1.0);
}
