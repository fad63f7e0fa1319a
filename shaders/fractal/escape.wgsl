// fractal/escape.wgsl  --  pass `<entity>:fractal:escape` (RENDER phase; only after a change)
//
// Escape time per texel: pixel (px, py) is the point
// x = cx + (px + 0.5 - w/2) * 3 / (zoom h), y = cy - (py + 0.5 - h/2) * 3 / (zoom h);
// Mandelbrot: z0 = 0, c = that point; Julia: z0 = that point, c = julia_c; z <- z^2 + c. The count
// is the first n >= 1 with |z_n|^2 > 4, or max_iterations. Writes the count and a colour from the
// smooth (continuous) count n + 1 - log2(log2|z_n|), cycled through the palette.
// Workgroup size (16, 16); dispatch (ceil(w / 16), ceil(h / 16), 1).
// Bindings (group 0): 0 params (uniform FractalParams), 1 iterations (rw, w*h words),
//                     2 image (texture_storage_2d<rgba8unorm, write>)

struct FractalParams {
    view: vec4f,          // xy: centre; z: 3 / (zoom h); w: 1 for Julia
    julia_c: vec4f,       // xy
    inside: vec4f,        // linear colour of points that never escape
    palette: array<vec4f, 16>,   // linear colours
    size: vec2u,          // w, h
    max_iterations: u32,
    palette_count: u32,
    palette_period: f32,
};

@group(0) @binding(0) var<uniform> params: FractalParams;
@group(0) @binding(1) var<storage, read_write> iterations: array<u32>;
@group(0) @binding(2) var image: texture_storage_2d<rgba8unorm, write>;

fn palette_at(t: f32) -> vec3f {
    let n = f32(params.palette_count);
    let x = fract(t) * n;
    let k = u32(x) % params.palette_count;
    return mix(params.palette[k].rgb, params.palette[(k + 1u) % params.palette_count].rgb, fract(x));
}

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    if (gid.x >= params.size.x || gid.y >= params.size.y) { return; }
    let w = f32(params.size.x);
    let h = f32(params.size.y);
    let scale = params.view.z;
    let point = vec2f(params.view.x + (f32(gid.x) + 0.5 - w * 0.5) * scale,
                      params.view.y - (f32(gid.y) + 0.5 - h * 0.5) * scale);
    let julia = params.view.w > 0.5;
    var z = select(vec2f(0.0), point, julia);
    let c = select(point, params.julia_c.xy, julia);
    var n = 0u;
    var r2 = 0.0;
    loop {
        z = vec2f(z.x * z.x - z.y * z.y, 2.0 * z.x * z.y) + c;
        n += 1u;
        r2 = dot(z, z);
        if (r2 > 4.0 || n >= params.max_iterations) { break; }
    }
    iterations[gid.y * params.size.x + gid.x] = n;
    var color = params.inside.rgb;
    if (r2 > 4.0) {
        let smooth_n = f32(n) + 1.0 - log2(max(log2(r2) * 0.5, 1e-6));
        color = palette_at(smooth_n / params.palette_period);
    }
    textureStore(image, vec2i(gid.xy), vec4f(color, 1.0));
}
