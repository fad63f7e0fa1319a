// fluid/surface_resolve.wgsl  --  pass `<entity>:fluid:surface:resolve` (render phase, compute)
//
// The splats as floats: per pixel, (t, thickness) with t the distance along the pixel's ray to
// the nearest sphere (0: no water) and the thickness in metres.
// Workgroup size (16, 16); dispatch (ceil(w / 16), ceil(h / 16), 1).
// Bindings (group 0): 0 params (uniform SurfaceParams), 1 splat (read u32: w*h nearest 1/t
//   bits, then w*h thickness in fixed point), 2 surface (rw vec2f per pixel)

//! include fluid/surface_types.wgsl

@group(0) @binding(0) var<uniform> params: SurfaceParams;
@group(0) @binding(1) var<storage, read> splat: array<u32>;
@group(0) @binding(2) var<storage, read_write> surface: array<vec2f>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let size = params.size;
    if (gid.x >= size.x || gid.y >= size.y) { return; }
    let k = gid.y * size.x + gid.x;
    let inverse = bitcast<f32>(splat[k]);
    let t = select(0.0, 1.0 / inverse, splat[k] != 0u);
    surface[k] = vec2f(t, f32(splat[size.x * size.y + k]) / params.smoothing.y);
}
