// frame/depth_resolve.wgsl  --  pass `scene:frame:depth_resolve` (render, RENDER phase, queue
// RESOLVE: after every draw into the multisampled geometry target, before any sprite)
//
// WebGPU resolves colour but not depth: this pass brings the multisampled geometry depth into
// the single-sampled scene depth that everything after it reads (sprites test against it, soft
// particles fade against it, depth collisions and `--depth` captures read it). It draws into the
// scene target with its colour writes off and writes each pixel's depth as the NEAREST (minimum)
// of its SAMPLES samples. Nearest, not sample 0: a pixel that geometry covers in part is treated
// as covered, so a sprite behind a silhouette is hidden along the whole anti-aliased edge (sample
// 0 would let it show through on some edge pixels and not others, a sawtooth the resolve was
// meant to remove), and particles collide with the silhouette's outer edge. Inside a surface all
// samples lie on one plane, and the nearest is within half a pixel's slope of the depth the 1x
// path gives at the pixel centre (equal on surfaces facing the camera).
// Draw: 3 vertices (one full-screen triangle), 1 instance; depth compare always, depth written.
// Bindings (group 0): 0 geometry_depth (texture_depth_multisampled_2d: "geometry/depth", read
//                     with textureLoad per sample)

override SAMPLES: u32 = 4u;

//! include common/fullscreen.wgsl

@group(0) @binding(0) var geometry_depth: texture_depth_multisampled_2d;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4f {
    return fullscreen_position(vertex);
}

struct Resolved {
    @location(0) color: vec4f,        // not written (the pipeline's colour writes are off)
    @builtin(frag_depth) depth: f32,
};

@fragment
fn fs_main(@builtin(position) pixel: vec4f) -> Resolved {
    let texel = vec2i(pixel.xy);
    var nearest = 1.0;
    for (var s = 0u; s < SAMPLES; s += 1u) {
        nearest = min(nearest, textureLoad(geometry_depth, texel, i32(s)));
    }
    return Resolved(vec4f(0.0), nearest);
}
