// fluid/surface_splat.wgsl  --  pass `<entity>:fluid:surface:splat` (render phase, compute)
//
// Sphere splats of the live particles: each invocation intersects the rays of the pixels its
// particle's sphere covers (a square of at most params.footprint pixels across around its
// projection) with the sphere. Per hit pixel it keeps the nearest hit (atomicMax of the bits of
// 1 / t: positive floats order like their bits, and 0, the cleared value, means no water) and
// adds the chord the ray cuts through the sphere, times params.volume (the spheres overlap),
// in fixed point, to the thickness (integer
// sums do not depend on the order the invocations run in, so the image repeats to the byte).
// Workgroup size 64; dispatch ceil(count / 64) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 frame (uniform Frame), 1 params (uniform SurfaceParams),
//   2 position (read), 3 splat (rw atomic u32: w*h nearest 1/t bits, then w*h thickness)

//! include common/dispatch.wgsl
//! include common/frame.wgsl
//! include fluid/surface_types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: SurfaceParams;
@group(0) @binding(2) var<storage, read> position: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> splat: array<atomic<u32>>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.count) { return; }
    let p = position[i];
    if (p.w == 0.0) { return; }
    let clip = frame.view_proj * vec4f(p.xyz, 1.0);
    if (clip.w <= 0.0) { return; }
    let size = params.size;
    let s = vec2f(size);
    let ndc = clip.xyz / clip.w;
    if (ndc.z < 0.0 || ndc.z > 1.0) { return; }
    let centre = vec2f((ndc.x + 1.0) * 0.5 * s.x, (1.0 - ndc.y) * 0.5 * s.y);
    let r = params.optics.z;
    let ray = pixel_ray(frame.inverse_view_proj, centre, size);
    let t_centre = dot(p.xyz - ray.origin, ray.direction);
    // the sphere's half width in pixels, with room for a perspective view's stretch off axis
    let half = r / pixel_width(frame.inverse_view_proj, centre, size, max(t_centre, r)) * 1.25
               + 1.0;
    let reach = min(half, 0.5 * f32(params.footprint));
    let lo = vec2i(max(floor(centre - reach), vec2f(0.0)));
    let hi = vec2i(min(ceil(centre + reach), s - 1.0));
    let pixels = size.x * size.y;
    for (var y = lo.y; y <= hi.y; y++) {
        for (var x = lo.x; x <= hi.x; x++) {
            let q = pixel_ray(frame.inverse_view_proj, vec2f(f32(x), f32(y)) + 0.5, size);
            // the ray's closest approach to the centre, from the difference of two vectors
            // (b^2 - c of the quadratic loses r^2 to rounding when the ray starts far away,
            // as an orthographic camera's do)
            let to_centre = p.xyz - q.origin;
            let along = dot(to_centre, q.direction);
            let miss = to_centre - along * q.direction;
            let disc = r * r - dot(miss, miss);
            if (disc <= 0.0) { continue; }
            let root = sqrt(disc);
            let t = along - root;
            if (t <= 0.0) { continue; }
            let k = u32(y) * size.x + u32(x);
            atomicMax(&splat[k], bitcast<u32>(1.0 / t));
            let chord = 2.0 * root * params.volume;
            atomicAdd(&splat[pixels + k], u32(chord * params.smoothing.y + 0.5));
        }
    }
}
