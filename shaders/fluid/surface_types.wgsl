// fluid/surface_types.wgsl: the uniform of a water surface's passes and the per-pixel rays they
// share (no pass of its own, no bindings); systems/fluid/surface.py reads SurfaceParams through
// emberfx.layout.
//
// The screen-space water (look = { ... }: Green 2010, van der Laan et al. 2009) keeps, per pixel
// of the scene image, t: the distance along the pixel's ray from the near plane to the nearest
// particle sphere, and the thickness of water the ray crosses. A pixel's ray starts on the near
// plane (NDC z = 0) and points at the far plane (z = 1), so one formula serves perspective and
// orthographic cameras: the surface point is ray_origin + t ray_direction.

struct SurfaceParams {
    tint: vec4f,      // rgb: linear tint of the light through the water; w: absorption, 1/m
    optics: vec4f,    // x: ior; y: Fresnel reflectance at normal incidence, ((ior-1)/(ior+1))^2;
                      // z: the splatted spheres' radius, m; w: the smoothing filter's radius, m
    smoothing: vec4f, // x: the range sigma of the smoothing filter, m; y: the thickness
                      // buffer's fixed-point scale (units per metre); z: the largest
                      // refraction offset, pixels; w: the largest filter radius, pixels
    horizon: vec4f,   // linear rgb of the sky reflected at the horizon
    zenith: vec4f,    // ... straight up
    ground: vec4f,    // ... below the horizon
    size: vec2u,      // the scene image's width and height, pixels
    count: u32,       // particle slots
    footprint: u32,   // the largest splat, pixels across (a nearer particle is cut)
    volume: f32,      // a particle's share of the water's volume over its splatted sphere's
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

struct Ray {
    origin: vec3f,
    direction: vec3f,   // unit
};

// The world point of NDC (x, y, z) through the frame's inverse view projection.
fn unproject(inverse_view_proj: mat4x4f, ndc: vec3f) -> vec3f {
    let h = inverse_view_proj * vec4f(ndc, 1.0);
    return h.xyz / h.w;
}

// The ray through the point `pixel` (pixel units, y down; a pixel's centre is at + 0.5).
fn pixel_ray(inverse_view_proj: mat4x4f, pixel: vec2f, size: vec2u) -> Ray {
    let s = vec2f(size);
    let ndc = vec2f(pixel.x / s.x * 2.0 - 1.0, 1.0 - pixel.y / s.y * 2.0);
    let near = unproject(inverse_view_proj, vec3f(ndc, 0.0));
    let far = unproject(inverse_view_proj, vec3f(ndc, 1.0));
    return Ray(near, normalize(far - near));
}

// The world width of one pixel at distance t along the ray of `pixel`.
fn pixel_width(inverse_view_proj: mat4x4f, pixel: vec2f, size: vec2u, t: f32) -> f32 {
    let a = pixel_ray(inverse_view_proj, pixel, size);
    let b = pixel_ray(inverse_view_proj, pixel + vec2f(1.0, 0.0), size);
    return length((b.origin + b.direction * t) - (a.origin + a.direction * t));
}
