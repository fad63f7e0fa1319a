// fluid/surface_smooth.wgsl  --  passes `<entity>:fluid:surface:smooth:<k>` (render phase,
// compute)
//
// One pass of a bilateral filter of the water's depth: each water pixel's t becomes the mean of
// the water pixels within the filter's radius, weighted by a Gaussian of their distance in
// pixels (sigma = radius / 2) and a Gaussian of their difference in t (sigma:
// params.smoothing.x), so the spheres' bumps flatten into one surface while a fold in front of
// water farther back keeps its edge. The radius is SCALE x params.optics.w metres at the
// pixel's depth, in pixels (at most params.smoothing.w); past TAPS pixels the square of samples
// thins to every stride-th pixel. Pixels without water stay without; the thickness is blurred
// by the distance weight alone.
// Workgroup size (16, 16); dispatch (ceil(w / 16), ceil(h / 16), 1).
// Bindings (group 0): 0 frame (uniform Frame), 1 params (uniform SurfaceParams),
//   2 source (read vec2f per pixel: t, thickness), 3 smoothed (rw vec2f per pixel)

//! include common/frame.wgsl
//! include fluid/surface_types.wgsl

override SCALE: f32 = 1.0;   // this pass's radius, a fraction of params.optics.w
override TAPS: f32 = 6.0;    // samples each way from the centre, at most

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: SurfaceParams;
@group(0) @binding(2) var<storage, read> source: array<vec2f>;
@group(0) @binding(3) var<storage, read_write> smoothed: array<vec2f>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let size = params.size;
    if (gid.x >= size.x || gid.y >= size.y) { return; }
    let k = gid.y * size.x + gid.x;
    let centre = source[k];
    if (centre.x == 0.0) {
        smoothed[k] = vec2f(0.0);
        return;
    }
    let width = pixel_width(frame.inverse_view_proj, vec2f(gid.xy) + 0.5, size, centre.x);
    let radius = min(SCALE * params.optics.w / max(width, 1e-9), params.smoothing.w);
    let spread = -0.5 / max(0.25 * radius * radius, 0.25);   // -1 / (2 sigma^2), sigma = r / 2
    let range = -0.5 / (params.smoothing.x * params.smoothing.x);
    // at most TAPS samples each way: a larger radius samples every stride-th pixel
    let stride = max(1, i32(ceil(radius / f32(TAPS))));
    let reach = i32(ceil(radius)) / stride;
    let limit = vec2i(size) - 1;
    var depth = vec2f(0.0);       // sum of w t, sum of w
    var thickness = vec2f(0.0);   // sum of w_s thickness, sum of w_s
    for (var j = -reach; j <= reach; j++) {
        for (var i = -reach; i <= reach; i++) {
            let offset = vec2i(i, j) * stride;
            let at = vec2i(gid.xy) + offset;
            if (any(at < vec2i(0)) || any(at > limit)) { continue; }
            let s = source[u32(at.y) * size.x + u32(at.x)];
            if (s.x == 0.0) { continue; }
            let near = exp(f32(dot(offset, offset)) * spread);
            let d = s.x - centre.x;
            let w = near * exp(d * d * range);
            depth += vec2f(w * s.x, w);
            thickness += vec2f(near * s.y, near);
        }
    }
    smoothed[k] = vec2f(depth.x / depth.y, thickness.x / thickness.y);
}
