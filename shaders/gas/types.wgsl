// gas/types.wgsl: the records of a gas's passes and its grid arithmetic (no pass of its own, no
// bindings); systems/gas/system.py reads GasParams, GasSource and GasLevel through
// emberfx.layout.
//
// The grid (a MAC grid, Harlow and Welch 1965): cubic cells of edge h, cell (x, y, z) at index
// x + nx (y + ny z), holding the scalars (vec4f: density, temperature, fuel, 0) at its centre.
// Velocities live on the faces, each axis's normal component on its own lattice, one buffer in
// three runs: u ((nx + 1) ny nz, face x between cells x - 1 and x), then v (nx (ny + 1) nz),
// then w (nx ny (nz + 1)). Grid coordinates g are world / h from the box's lower corner: a cell's
// centre is at its index + 0.5, a u face at (x, y + 0.5, z + 0.5).
//
// Sides: periodic wraps every axis (face n of an axis is face 0, and stays equal to it);
// closed makes all six walls solid; open makes the floor (y = 0) solid and lets the gas leave
// through the other five, where the pressure outside is 0.

const BOUNDARY_OPEN: u32 = 0u;
const BOUNDARY_CLOSED: u32 = 1u;
const BOUNDARY_PERIODIC: u32 = 2u;

const SHAPE_SPHERE: u32 = 0u;
const SHAPE_BOX: u32 = 1u;
const SHAPE_POINT: u32 = 2u;

struct GasParams {
    cells: vec4u,     // xyz: cells per axis; w: BOUNDARY_*
    lower: vec4f,     // xyz: the box's lowest corner; w: cell edge h
    motion: vec4f,    // x: step dt, s; y: buoyancy, m/s^2 per unit temperature; z: weight,
                      // m/s^2 per unit density; w: vorticity confinement epsilon
    burn: vec4f,      // x: burn rate, 1/s; y: ignition temperature; z: heat per unit fuel;
                      // w: smoke per unit fuel
    decay: vec4f,     // x: cooling, 1/s; y: dissipation, 1/s; z: the step's start time, s;
                      // w: 0
    counts: vec4u,    // x: sources; y: cells; z: faces (all three runs); w: forces
};

struct GasSource {
    center: vec4f,    // xyz: world position; w: 0
    extent: vec4f,    // xyz: a box's half sizes; w: a sphere's radius
    amounts: vec4f,   // per second: density, temperature, fuel; w: 1 when velocity is set
    velocity: vec4f,  // xyz: m/s; w: SHAPE_* as a float
};

struct GasLevel {     // one level of the pressure multigrid (level 0: the grid itself)
    cells: vec4u,     // xyz: cells per axis; w: cells in all
    spacing: vec4f,   // x: the level's cell edge squared, h_l^2; yzw: 0
};

fn cell_count(n: vec3u) -> u32 {
    return n.x * n.y * n.z;
}

fn cell_coords(i: u32, n: vec3u) -> vec3i {
    return vec3i(i32(i % n.x), i32((i / n.x) % n.y), i32(i / (n.x * n.y)));
}

fn cell_at(c: vec3i, n: vec3u) -> u32 {
    return u32(c.x) + n.x * (u32(c.y) + n.y * u32(c.z));
}

// A cell's body force (gas/cells.wgsl) as kept for the faces: 4 16-bit floats (x, y, z, 0), each
// clamped to the largest finite one, 65504 m/s^2 (relative precision 2^-11).
const FORCE_LIMIT: f32 = 65504.0;

fn pack_force(f: vec3f) -> vec2u {
    let c = clamp(f, vec3f(-FORCE_LIMIT), vec3f(FORCE_LIMIT));
    return vec2u(pack2x16float(c.xy), pack2x16float(vec2f(c.z, 0.0)));
}

fn unpack_force(v: vec2u) -> vec3f {
    return vec3f(unpack2x16float(v.x), unpack2x16float(v.y).x);
}

// The pressure multigrid's levels (their right-hand sides and pressures) keep their cells split
// by colour, (x + y + z) mod 2, as a red-black sweep visits them: colour k's cells from k H on,
// each row's x / 2 fastest, with hx = ceil(nx / 2) slots a row and H = hx ny nz (a row of odd
// nx leaves one slot of one colour unused). A half-sweep then reads one colour's cells and writes
// the other's, each a contiguous half.
fn half_row(n: vec3u) -> u32 {
    return (n.x + 1u) / 2u;
}

fn level_slot(c: vec3i, n: vec3u) -> u32 {
    let hx = half_row(n);
    let colour = u32(c.x + c.y + c.z) & 1u;
    return colour * hx * n.y * n.z + (u32(c.x) >> 1u) + hx * (u32(c.y) + n.y * u32(c.z));
}

// The unit step along axis a (0, 1, 2: x, y, z): a runtime axis picks components by it, not by
// indexing a vector.
fn unit(a: u32) -> vec3i {
    return vec3i(vec3u(a) == vec3u(0u, 1u, 2u));
}

// The faces of axis `a` per axis (one more along a).
fn face_dims(n: vec3u, a: u32) -> vec3u {
    return n + vec3u(unit(a));
}

// Where the faces of axis `a` start in the velocity buffer.
fn face_base(n: vec3u, a: u32) -> u32 {
    let u = (n.x + 1u) * n.y * n.z;
    let v = n.x * (n.y + 1u) * n.z;
    return select(select(0u, u, a == 1u), u + v, a == 2u);
}

fn face_at(c: vec3i, n: vec3u, a: u32) -> u32 {
    let d = face_dims(n, a);
    return face_base(n, a) + u32(c.x) + d.x * (u32(c.y) + d.y * u32(c.z));
}

// Which axis face index `f` (of all three runs) is on, and its coordinates on that axis's lattice.
fn face_coords(f: u32, n: vec3u) -> vec4i {
    var a = 0u;
    if (f >= face_base(n, 2u)) { a = 2u; } else if (f >= face_base(n, 1u)) { a = 1u; }
    let d = face_dims(n, a);
    let i = f - face_base(n, a);
    return vec4i(i32(i % d.x), i32((i / d.x) % d.y), i32(i / (d.x * d.y)), i32(a));
}

fn wraps(p: GasParams) -> bool {
    return p.cells.w == BOUNDARY_PERIODIC;
}

// Whether the wall beyond the lower (side = 0) or upper (side = 1) end of axis a is solid.
fn solid_side(p: GasParams, a: u32, side: u32) -> bool {
    return p.cells.w == BOUNDARY_CLOSED || (p.cells.w == BOUNDARY_OPEN && a == 1u && side == 0u);
}

// Index i along an axis of m points, wrapped (periodic) or clamped to [0, m - 1].
fn along(i: i32, m: i32, wrap: bool) -> i32 {
    if (wrap) { return ((i % m) + m) % m; }
    return clamp(i, 0, m - 1);
}

// The point d steps from c along the axis of `e` (a unit step; m points on that axis), wrapped
// or clamped as `along`.
fn beside(c: vec3i, e: vec3i, d: i32, m: i32, wrap: bool) -> vec3i {
    let at = dot(c, e);
    return c + e * (along(at + d, m, wrap) - at);
}

// The two cells a face joins (coordinates c.xyz on the lattice of axis c.w): below and above it
// along its axis, wrapped on a periodic grid, clamped at the sides otherwise.
struct FaceCells {
    lo: vec3i,
    hi: vec3i,
};

fn face_cells(p: GasParams, c: vec4i) -> FaceCells {
    let e = unit(u32(c.w));
    let m = dot(vec3i(p.cells.xyz), e);
    let at = dot(c.xyz, e);
    return FaceCells(c.xyz + e * (along(at - 1, m, wraps(p)) - at),
                     c.xyz + e * (along(at, m, wraps(p)) - at));
}

// Whether the face lies on one of the box's sides, lower (side 0) or upper (side 1); -1: inside.
fn face_side(p: GasParams, c: vec4i) -> i32 {
    let e = unit(u32(c.w));
    let at = dot(c.xyz, e);
    if (wraps(p)) { return -1; }
    if (at == 0) { return 0; }
    if (at == dot(vec3i(p.cells.xyz), e)) { return 1; }
    return -1;
}

// Whether the face lies on a solid side of the box.
fn on_solid_side(p: GasParams, c: vec4i) -> bool {
    let side = face_side(p, c);
    return side >= 0 && solid_side(p, u32(c.w), u32(side));
}
