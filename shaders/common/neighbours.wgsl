// common/neighbours.wgsl: the record of a neighbour grid (emberfx.blocks.neighbours) and the
// cell of a point; shared by the grid's passes and by common/neighbours_query.wgsl (no pass of
// its own, no bindings). Python reads GridParams and GRID_HASHED through emberfx.layout and
// emberfx.core.wgsl.
//
// Two modes (GridParams.mode):
//
// GRID_BOX: the grid covers the box [origin, origin + grid * cell_size) with
// grid.x * grid.y * grid.z cells, x fastest. A point outside the box (or not finite) counts in
// the nearest border cell: coordinates are clamped. Queries stay exact for such points, because
// clamping never moves two cells further apart than they were (|a - b| <= 1 cell stays <= 1
// cell); only the border cells grow crowded.
//
// GRID_HASHED: cells of edge cell_size tile all of space from origin, and each cell's integer
// coordinates (i32) hash into one of grid.w buckets (a power of two); a bucket's run holds the
// points of every cell that hashes to it (Teschner et al. 2003, "Optimized spatial hashing for
// collision detection of deformable objects"). The hash is their XOR of the coordinates times
// three large primes, followed by a 32-bit finalizer (lowbias32): the power-of-two mask keeps
// the low bits, which without the finalizer would depend only on the low bits of each
// coordinate (a periodic tiling: a sheet of points would fill a small fraction of the buckets).
// Coordinates are clamped to +-HASH_LIMIT cells from origin (so a point past that shares the
// last cell on its axis, as border cells do in the box); a point with a non-finite coordinate
// counts in the cell (HASH_LIMIT, HASH_LIMIT, HASH_LIMIT). grid.xyz: (0, 0, 0), or (0, 0, 1)
// for a 2D grid, whose z coordinate is always 0.

struct GridParams {
    origin: vec4f,      // xyz: the box's lower corner (hashed: the corner of cell (0, 0, 0)); w
                        // unused
    cell_size: vec4f,   // xyz: a cell's edge per axis (>= the largest query radius); w: hashed,
                        // 1 / the (cubic) cell's edge
    grid: vec4u,        // xyz: cells per axis (z = 1 for a 2D grid; hashed: 0 on an unbounded
                        // axis); w: total cells (hashed: buckets, a power of two)
    count: u32,         // points in the grid
    stride: u32,        // vec4f per point record in the points buffer
    position: u32,      // which vec4f of a record holds the position (xyz)
    copy: u32,          // vec4f of each record (from its start) copied into the snapshot; 0: none
    mode: u32,          // GRID_BOX or GRID_HASHED
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

const GRID_BOX: u32 = 0u;
const GRID_HASHED: u32 = 1u;
// hashed cell coordinates per axis lie in [-HASH_LIMIT, HASH_LIMIT] (2^30: a neighbour's
// coordinate, one further, still fits an i32)
const HASH_LIMIT: i32 = 1073741824;

// The clamped cell coordinates of point p (GRID_BOX).
fn grid_cell_coords(p: vec3f, g: GridParams) -> vec3u {
    let c = vec3i(floor((p - g.origin.xyz) / g.cell_size.xyz));
    return vec3u(clamp(c, vec3i(0), vec3i(g.grid.xyz) - 1));
}

// The flat index of the cell at coordinates c (x fastest, then y, then z; GRID_BOX).
fn grid_cell_index(c: vec3u, g: GridParams) -> u32 {
    return (c.z * g.grid.y + c.y) * g.grid.x + c.x;
}

// The cell coordinates of point p in a hashed grid (GRID_HASHED): unbounded but for the clamp to
// +-HASH_LIMIT, non-finite points in the cell (HASH_LIMIT, HASH_LIMIT, HASH_LIMIT), z = 0 in 2D.
fn grid_hashed_coords(p: vec3f, g: GridParams) -> vec3i {
    let limit = f32(HASH_LIMIT);
    // times the reciprocal rather than over the edge: a subtraction, a product and floor are
    // exact or correctly rounded, so queries recompute the very cell the build assigned
    let f = clamp(floor((p - g.origin.xyz) * g.cell_size.w), vec3f(-limit), vec3f(limit));
    // an exponent of all ones: infinite or NaN (a bit test, which no fast-math assumption drops)
    let special = (bitcast<vec3u>(p) & vec3u(0x7f800000u)) == vec3u(0x7f800000u);
    let c = select(vec3i(f), vec3i(HASH_LIMIT), any(special));
    return select(c, vec3i(0), g.grid.xyz == vec3u(1u));
}

// The bucket of the cell at coordinates c (GRID_HASHED).
fn grid_bucket(c: vec3i, g: GridParams) -> u32 {
    let u = bitcast<vec3u>(c);
    var h = (u.x * 73856093u) ^ (u.y * 19349663u) ^ (u.z * 83492791u);
    h ^= h >> 16u;
    h *= 0x7feb352du;
    h ^= h >> 15u;
    h *= 0x846ca68bu;
    h ^= h >> 16u;
    return h & (g.grid.w - 1u);
}

// The cell (GRID_BOX) or bucket (GRID_HASHED) that point p counts in.
fn grid_point_cell(p: vec3f, g: GridParams) -> u32 {
    if (g.mode == GRID_HASHED) {
        return grid_bucket(grid_hashed_coords(p, g), g);
    }
    return grid_cell_index(grid_cell_coords(p, g), g);
}
