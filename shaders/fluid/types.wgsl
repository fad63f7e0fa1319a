// fluid/types.wgsl: the uniform of a fluid's passes and the smoothing kernels (no pass of its
// own, no bindings); systems/fluid/system.py reads FluidParams through emberfx.layout.
//
// Particle records are vec4f: positions (xyz, w = 1 alive / 0 a free slot), velocities (xyz,
// w = the last density estimate, kg/m^3). Kernels (Mueller et al. 2003), support h:
// poly6 W(r) = 315 / (64 pi h^9) (h^2 - r^2)^3 for densities, XSPH and s_corr (divided by its
// sum over the rest lattice, about 1.0098, so that the fill starts at rest density); the spiky
// kernel's gradient -45 / (pi h^6) (h - r)^2 r/|r| for the constraint gradients and vorticity.

struct FluidParams {
    lower: vec4f,     // xyz: lowest particle centre (bounds + particle_radius); w: substep, s
    upper: vec4f,     // xyz: highest particle centre (bounds - particle_radius); w: h
    gravity: vec4f,   // xyz: m/s^2; w: V = mass / rest_density = (2 r)^3, m^3
    kernel: vec4f,    // x: poly6 coefficient; y: spiky gradient coefficient (negative);
                      // z: the constraint's relaxation epsilon, 1/m^2; w: rest density
    tension: vec4f,   // x: s_corr scale k / S0, m^2; y: 1 / W(dq); z: XSPH c; w: vorticity eps
    park: vec4f,      // xyz: where free slots wait (a grid cell no fluid query visits); w: the
                      // distance from a wall's plane to the centres that touch it, m
    count: u32,       // particle slots
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

// W(r) of poly6 from r^2 (0 at and beyond h).
fn poly6(r2: f32, p: FluidParams) -> f32 {
    let h2 = p.upper.w * p.upper.w;
    let d = max(h2 - r2, 0.0);
    return p.kernel.x * d * d * d;
}

// The spiky kernel's gradient with respect to the first point, for d = x_i - x_j, |d| = r.
fn spiky_gradient(d: vec3f, r: f32, p: FluidParams) -> vec3f {
    if (r <= 0.0 || r >= p.upper.w) { return vec3f(0.0); }
    let s = p.upper.w - r;
    return d * (p.kernel.y * s * s / r);
}

// The density the bounds' walls lend a particle at p, relative to the rest density: each wall
// within h counts as rest fluid filling the half-space behind it, whose poly6 integral at
// distance y from the particle is F(y) = (pi K / 4) int_y^h (h^2 - z^2)^4 dz (F(0) = 1/2).
// Returns (sum of F over the walls, its gradient with respect to p) in xyz and w.
struct WallDensity {
    gradient: vec3f,
    density: f32,
};

fn wall_primitive(z: f32, h: f32) -> f32 {
    let h2 = h * h;
    let z2 = z * z;
    return z * (h2 * h2 * h2 * h2 + z2 * (-4.0 / 3.0 * h2 * h2 * h2 + z2 * (1.2 * h2 * h2
           + z2 * (-4.0 / 7.0 * h2 + z2 / 9.0))));
}

// One wall of the bounds: (its density, its gradient along the wall's axis) at coordinate c
// along that axis, the wall at `wall` facing `inward` (+1 from below, -1 from above).
fn wall_side(c: f32, wall: f32, inward: f32, h: f32, k: f32, full: f32) -> vec2f {
    let y = max((c - wall) * inward, 0.0);
    if (y >= h) { return vec2f(0.0); }
    let s = h * h - y * y;
    return vec2f(k * (full - wall_primitive(y, h)), -inward * k * s * s * s * s);
}

fn wall_density(x: vec3f, p: FluidParams) -> WallDensity {
    let h = p.upper.w;
    let k = 0.7853981633974483 * p.kernel.x;   // pi K / 4
    let full = wall_primitive(h, h);
    let lo = p.lower.xyz - vec3f(p.park.w);
    let hi = p.upper.xyz + vec3f(p.park.w);
    let x0 = wall_side(x.x, lo.x, 1.0, h, k, full);
    let x1 = wall_side(x.x, hi.x, -1.0, h, k, full);
    let y0 = wall_side(x.y, lo.y, 1.0, h, k, full);
    let y1 = wall_side(x.y, hi.y, -1.0, h, k, full);
    let z0 = wall_side(x.z, lo.z, 1.0, h, k, full);
    let z1 = wall_side(x.z, hi.z, -1.0, h, k, full);
    let density = x0.x + x1.x + y0.x + y1.x + z0.x + z1.x;
    return WallDensity(vec3f(x0.y + x1.y, y0.y + y1.y, z0.y + z1.y), density);
}
