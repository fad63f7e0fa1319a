// cloth/draw.wgsl  --  pass `<entity>:cloth:draw` (render, indexed)
//
// The cloth as a lit, two-sided triangle mesh: two triangles per grid quad from an index buffer,
// positions and normals read by vertex index, lit by the scene light (Lambert plus ambient,
// common/frame.wgsl scene_lit, the Lambert term shadowed: common/shadow.wgsl), the back face
// with the flipped normal; a plain colour or a checker over the grid.
// Draw: indexed, 6 (nx - 1)(ny - 1) indices, 1 instance; one draw per patch, batched or not.
// Bindings (group 0): 0 frame (uniform Frame), 1 params (uniform ClothParams: the patch's own
// record), 2 look (uniform ClothLook), 3 positions, 4 normals (read: the patch's own vertices,
// views into a batch's arenas when it is batched), 5 shadow_map (depth texture),
// 6 shadow_sampler (comparison sampler),
// 7 shadow_opacity (the particles' opacity layers), 8 point_lights (read), 9 light_tiles (read):
// the point lights of the pixel's tile (common/point_lights.wgsl), added to the light

//! include common/frame.wgsl
//! include common/shadow.wgsl
//! include common/point_lights.wgsl
//! include cloth/types.wgsl

struct ClothLook {
    color: vec4f,         // linear
    checker: vec4f,       // linear; w = 1 when the checker is on
    checker_cells: vec2f,
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: ClothParams;
@group(0) @binding(2) var<uniform> look: ClothLook;
@group(0) @binding(3) var<storage, read> positions: array<vec4f>;
@group(0) @binding(4) var<storage, read> normals: array<vec4f>;
@group(0) @binding(5) var shadow_map: texture_depth_2d;
@group(0) @binding(6) var shadow_sampler: sampler_comparison;
@group(0) @binding(7) var shadow_opacity: texture_2d<f32>;
@group(0) @binding(8) var<storage, read> point_lights: array<PointLight>;
@group(0) @binding(9) var<storage, read> light_tiles: array<u32>;

struct VertexOut {
    @builtin(position) clip: vec4f,
    @location(0) normal: vec3f,
    @location(1) uv: vec2f,
    @location(2) world: vec3f,
};

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> VertexOut {
    var out: VertexOut;
    out.clip = frame.view_proj * vec4f(positions[vertex].xyz, 1.0);
    out.normal = normals[vertex].xyz;
    out.world = positions[vertex].xyz;
    out.uv = vec2f(f32(vertex % params.nx) / f32(params.nx - 1u),
                   f32(vertex / params.nx) / f32(params.ny - 1u));
    return out;
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4f {
    var n = normalize(in.normal);
    if (!front) { n = -n; }
    var base = look.color.rgb;
    if (look.checker.w > 0.5) {
        let cell = vec2i(floor(in.uv * look.checker_cells));
        if (((cell.x + cell.y) & 1) == 1) { base = look.checker.rgb; }
    }
    let visibility = shadow_visibility(frame, shadow_map, shadow_sampler, shadow_opacity,
                                       in.world, n);
    let points = base * point_light_sum(frame, in.world, n, in.clip.xy);
    return vec4f(scene_lit(frame, base, n, visibility) + points, 1.0);
}
