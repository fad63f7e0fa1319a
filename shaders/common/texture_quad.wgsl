// common/texture_quad.wgsl  --  passes `<entity>:life:draw`, `<entity>:fractal:draw`,
//                                `<entity>:label:draw` (render)
//
// Shows a texture (nearest filtering for computed ones, trilinear for a label's text): filling the view or as a world quad in the x-y
// plane (quad_center, quad_size) seen through the scene camera. Filling covers the whole viewport,
// centred, with square texels: the texture's excess along one axis falls outside clip space and is
// cropped (systems/life/system.py's cell_under inverts this mapping for painting).
// Draw: 6 vertices, 1 instance. Bindings (group 0): 0 frame (uniform Frame),
// 1 placement (uniform QuadPlacement), 2 image (texture_2d<f32>), 3 nearest (sampler)

//! include common/frame.wgsl

struct QuadPlacement {
    center: vec4f,    // quad: world centre; w = 1 for a world quad, 0 to fill the view
    size: vec4f,      // quad: world width, height; fill: texture width, height (its aspect)
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> placement: QuadPlacement;
@group(0) @binding(2) var image: texture_2d<f32>;
@group(0) @binding(3) var nearest: sampler;

struct VertexOut {
    @builtin(position) clip: vec4f,
    @location(0) uv: vec2f,
};

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> VertexOut {
    var corners = array<vec2f, 6>(vec2f(0.0, 0.0), vec2f(1.0, 0.0), vec2f(1.0, 1.0),
                                  vec2f(0.0, 0.0), vec2f(1.0, 1.0), vec2f(0.0, 1.0));
    let c = corners[vertex];
    var out: VertexOut;
    out.uv = vec2f(c.x, 1.0 - c.y);   // texture row 0 = the grid's top row
    if (placement.center.w > 0.5) {
        let world = placement.center.xyz + vec3f((c - 0.5) * placement.size.xy, 0.0);
        out.clip = frame.view_proj * vec4f(world, 1.0);
    } else {
        // cover: the axis where the grid is relatively longer reaches past the viewport's edges
        let grid_aspect = placement.size.x / placement.size.y;
        let view_aspect = frame.viewport.x / frame.viewport.y;
        var extent = vec2f(1.0, 1.0);
        if (grid_aspect > view_aspect) { extent.x = grid_aspect / view_aspect; }
        else { extent.y = view_aspect / grid_aspect; }
        out.clip = vec4f((c * 2.0 - 1.0) * extent, 0.0, 1.0);
    }
    return out;
}

// Filling the view, the texel under a pixel comes from integer arithmetic on the pixel's centre
// ((2i + 1) / 2), not from an interpolated uv: a texel edge may fall exactly on a pixel centre
// (192 cells over 160 pixels: every fifth), where adapters round interpolation differently.
// With r = num / den texels a pixel (th / H where the texture is relatively wider, else tw / W),
// texel x = floor(((2i + 1) num - W num + tw den) / (2 den)), and likewise in y. Where the
// texture has one texel a cell (its size is placement.size).
fn fill_texel(pixel: vec2f) -> vec2i {
    let view = vec2i(frame.viewport);
    let tex = vec2i(placement.size.xy);
    var num = tex.y;
    var den = view.y;
    if (tex.x * view.y <= view.x * tex.y) { num = tex.x; den = view.x; }
    let twice = 2 * vec2i(floor(pixel)) + 1;
    let texel = (twice * num - view * num + tex * den) / (2 * den);
    return clamp(texel, vec2i(0), tex - 1);
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4f {
    // (a grid larger than its texture is shown through scaled texels: sampled at uv)
    if (placement.center.w <= 0.5 && all(vec2f(textureDimensions(image)) == placement.size.xy)) {
        return textureLoad(image, fill_texel(in.clip.xy), 0);
    }
    return textureSampleLevel(image, nearest, in.uv, 0.0);
}
