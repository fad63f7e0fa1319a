// fluid/surface_depth.wgsl  --  pass `<entity>:fluid:surface:depth` (render, RENDER phase)
//
// The smoothed water surface written into the scene depth, as an opaque mesh writes its own: per
// pixel where the water covers opaquely (fluid/surface_cover.wgsl), the NDC depth of the surface
// point at the smoothed t along the pixel's ray. The depth test ("less") keeps what was drawn
// in front of the water (geometry, its resolved depth, opaque sprites), so the depth target ends
// up with the nearer of the two; everything drawn after it (sprites, the gas volume, soft
// particles) and what reads the depth after the frame (`--depth`, depth collisions) sees the
// water. Pixels without water are discarded.
// Draw: 3 vertices (one full-screen triangle), 1 instance; into the scene target, colour writes
// off, depth written.
// Bindings (group 0): 0 frame (uniform Frame), 1 params (uniform SurfaceParams),
//   2 surface (read vec2f per pixel: t, thickness)

//! include common/fullscreen.wgsl
//! include common/frame.wgsl
//! include fluid/surface_types.wgsl
//! include fluid/surface_cover.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: SurfaceParams;
@group(0) @binding(2) var<storage, read> surface: array<vec2f>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4f {
    return fullscreen_position(vertex);
}

struct Written {
    @location(0) color: vec4f,        // not written (the pipeline's colour writes are off)
    @builtin(frag_depth) depth: f32,
};

@fragment
fn fs_main(@builtin(position) position: vec4f) -> Written {
    let pixel = vec2i(position.xy);
    let t = surface[u32(pixel.y) * params.size.x + u32(pixel.x)].x;
    if (t == 0.0 || !covers_opaquely(pixel)) { discard; }
    return Written(vec4f(0.0), clamp(ndc_depth(surface_point(pixel, t)), 0.0, 1.0));
}
