// particle_life/types.wgsl: shared structs and helpers of the particle-life passes (no pass of
// its own). Python reads these structs through emberfx.layout.

struct LifeParticle {
    position: vec4f,   // xyz in [0, box) (z = 0 in 2D); w: species as a float (exact up to 16)
    velocity: vec4f,   // xyz; w unused
};

struct PLParams {
    box: vec4f,          // xyz: box size (z = 1 in 2D); w: dt, seconds
    cell_size: vec4f,    // xyz: box / grid (>= r_max); w: friction factor 0.5^(dt / half-life)
    grid: vec4u,         // xyz: cells per axis (z = 1 in 2D); w: total cells
    count: u32,          // particles
    species: u32,
    dims: u32,           // 2 or 3
    reorder: u32,        // 1: write particles in cell order this step
    r_max: f32,
    beta: f32,
    force: f32,
    _unused: f32,
};

fn cell_coords(p: vec3f, params: PLParams) -> vec3u {
    let c = vec3i(floor(p / params.cell_size.xyz));
    return vec3u(clamp(c, vec3i(0), vec3i(params.grid.xyz) - 1));
}

fn cell_index(c: vec3u, params: PLParams) -> u32 {
    return (c.z * params.grid.y + c.y) * params.grid.x + c.x;
}

// The shortest vector from a to b on the wrap-around box (minimum image).
fn min_image(a: vec3f, b: vec3f, params: PLParams) -> vec3f {
    let box = params.box.xyz;
    var d = b - a;
    d -= box * round(d / box);
    return d;
}

// Seed 003's force law at r = distance / r_max for attraction a: repulsion below beta, then a
// triangle bump of height a between beta and 1.
fn pl_force(r: f32, a: f32, beta: f32) -> f32 {
    if (r < beta) { return r / beta - 1.0; }
    if (r < 1.0) { return a * (1.0 - abs(2.0 * r - 1.0 - beta) / (1.0 - beta)); }
    return 0.0;
}

// The acceleration (before the r_max * force scale) that a particle at y gives to a particle at
// x, with attraction a = matrix[s_i][s_j]; zero beyond r_max and for coincident particles.
// Every grid kernel sums exactly this expression, so their results agree bit for bit.
fn pair_accel(x: vec3f, y: vec3f, a: f32, params: PLParams) -> vec3f {
    let d = min_image(x, y, params);
    let dist = length(d);
    if (dist <= 0.0 || dist >= params.r_max) { return vec3f(0.0); }
    return pl_force(dist / params.r_max, a, params.beta) * d / dist;
}

// pair_accel for a neighbour in an adjacent cell that is not across the box edge, without the
// minimum image, and with the same bits: per axis |d| < 2 cells there, so min_image changes d
// only where |d| > box / 2 >= 1.5 cells, and then both images are >= 1 cell >= r_max apart
// (boxes have >= 3 cells a side), so both give zero; elsewhere round() is 0 and d - box * 0 == d.
fn pair_accel_inside(x: vec3f, y: vec3f, a: f32, params: PLParams) -> vec3f {
    let d = y - x;
    let dist = length(d);
    if (dist <= 0.0 || dist >= params.r_max) { return vec3f(0.0); }
    return pl_force(dist / params.r_max, a, params.beta) * d / dist;
}

fn pair_term(x: vec3f, other: LifeParticle, a: f32, params: PLParams) -> vec3f {
    return pair_accel(x, other.position.xyz, a, params);
}

// New velocity and position from the summed acceleration (v decays by the friction factor).
fn pl_integrate(p: LifeParticle, acc: vec3f, params: PLParams) -> LifeParticle {
    let dt = params.box.w;
    let v = p.velocity.xyz * params.cell_size.w + acc * dt;
    var x = p.position.xyz + v * dt;
    let box = params.box.xyz;
    x -= box * floor(x / box);
    x = select(x, vec3f(0.0), x >= box);   // x == box after rounding: wrap to 0
    if (params.dims == 2u) { x.z = 0.0; }
    var out: LifeParticle;
    out.position = vec4f(x, p.position.w);
    out.velocity = vec4f(select(v, vec3f(v.xy, 0.0), params.dims == 2u), 0.0);
    return out;
}
