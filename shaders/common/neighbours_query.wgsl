// common/neighbours_query.wgsl: neighbour queries on a neighbour grid (emberfx.blocks.neighbours)
// for any shader that includes this file (no pass of its own). It declares the grid's outputs in
// bind group 1, so the including shader keeps group 0 for its own bindings; bind them with
// NeighbourGrid.query_bindings().
// Bindings (group 1): 0 nb_grid (read: GridParams), 1 nb_cell_start (read, each cell's first
//   slot, and the end of the last cell's run), 2 nb_cell_particles (read, the point index at
//   each slot), 3 nb_snapshot (read, the
//   first `copy` vec4f of each point's record, in slot order)
//
// A slot is a position in cell order: the points of cell 0, then cell 1, ...; inside a cell in
// ascending point index, so a loop over the neighbours visits them in the same order on every
// run. Reads go to the snapshot the grid's last build copied, never to the live points.
//
// Visiting every point in the 27 cells (9 in a 2D grid) around x (in a box grid, the nearest cell
// clamped into the grid like the build clamps points, so points outside the box are found too):
//
//     var walk = neighbour_walk(x);
//     while (neighbour_next(&walk)) {
//         let d = neighbour_position(walk.slot) - x;
//         if (dot(d, d) < radius * radius) { ... neighbour_index(walk.slot) ... }
//     }
//
// The walk gives every point whose distance to x is below the grid's smallest cell edge, and
// others that must be filtered by distance as above. The query point itself is among them when it
// is in the grid (compare neighbour_index(walk.slot) with its own index to skip it).
//
// Box grid (GRID_BOX): the three cells of a row (x - 1, x, x + 1) are contiguous in slot order,
// so the walk reads one run per row: up to 9 runs in 3D, 3 in 2D.
//
// Hashed grid (GRID_HASHED, common/neighbours.wgsl): the walk opens each of the 27 cells (9 in
// 2D) on its own, x fastest, then y, then z: one bucket's run per cell. A bucket holds the points
// of every cell that hashes to it, and two of the 27 cells may share one, so the walk returns a
// point of the bucket only when its own cell, computed from its snapshot position by the build's
// function (grid_hashed_coords, whose operations are exact or correctly rounded, so it gives the
// build's cell bit for bit), is the cell being walked: every point at most once, and only the
// points of the 27 cells. The cost over the box grid: 27 runs to open instead of 9, and for
// every point of each bucket one more snapshot read (the position, which the caller then reads
// again from cache) and a cell computation; a bucket shared with other cells adds their points
// as candidates that the walk skips. llvmpipe (lavapipe) leaves a loop after 65535 iterations,
// counted over all of a walk's calls and the lanes that run together, so there a grid with so few
// buckets that walks skip thousands of points each is not exact (the default bucket count, twice
// the points, keeps the skipped candidates few).

//! include common/neighbours.wgsl

@group(1) @binding(0) var<storage, read> nb_grid: GridParams;
@group(1) @binding(1) var<storage, read> nb_cell_start: array<u32>;
@group(1) @binding(2) var<storage, read> nb_cell_particles: array<u32>;
@group(1) @binding(3) var<storage, read> nb_snapshot: array<vec4f>;

// The grid's mode (GRID_BOX or GRID_HASHED) as a pipeline constant, so that a pipeline holds
// only that mode's walk (NeighbourGrid.query_constants() gives it: pass them to the pass's
// constants). Why not a branch on nb_grid.mode alone: CPU backends (lavapipe) run the code of
// every branch under a lane mask whether or not a lane takes it, and the hashed walk's loads in
// the box walk made a box query 2.5x slower there. A walk whose NB_MODE differs from the grid's
// mode finds nothing.
override NB_MODE: u32 = 0u;

// The state of a walk over the cells around a point; `slot` is the current neighbour's slot.
struct NeighbourWalk {
    lo: vec3u,      // lowest cell coordinates of the block of cells (hashed: i32 bits)
    hi: vec3u,      // highest (inclusive)
    row: u32,       // the next row (y, z) of the block to open, counted y fastest (hashed: the
                    // next cell, counted x fastest)
    next: u32,      // the next slot of the open row's run
    end: u32,       // the end of the open row's run
    slot: u32,      // the slot neighbour_next returned last
    cell: vec3u,    // hashed: the coordinates (i32 bits) of the cell being walked
};

// The slot past the last point of cell `cell` (nb_cell_start has an entry past the last cell).
fn neighbour_cell_end(cell: u32) -> u32 {
    return nb_cell_start[cell + 1u];
}

// A walk over the cells around x (call neighbour_next before reading the first slot).
fn neighbour_walk(x: vec3f) -> NeighbourWalk {
    var walk: NeighbourWalk;
    if (NB_MODE == GRID_HASHED) {
        let home = grid_hashed_coords(x, nb_grid);
        let flat = nb_grid.grid.xyz == vec3u(1u);   // z in a 2D grid: only cell 0
        walk.lo = bitcast<vec3u>(select(home - 1, home, flat));
        walk.hi = bitcast<vec3u>(select(home + 1, home, flat));
    } else {
        let home = grid_cell_coords(x, nb_grid);
        walk.lo = max(home, vec3u(1u)) - 1u;
        walk.hi = min(home + 1u, nb_grid.grid.xyz - 1u);
    }
    walk.cell = walk.lo;
    walk.row = select(0u, 0xffffffffu, nb_grid.mode != NB_MODE);   // past the last: nothing
    walk.next = 0u;
    walk.end = 0u;
    walk.slot = 0u;
    return walk;
}

// Moves the walk to its next point: true with walk.slot set, or false when the cells are done.
fn neighbour_next(walk: ptr<function, NeighbourWalk>) -> bool {
    if (NB_MODE == GRID_HASHED) { return neighbour_next_hashed(walk); }
    let ny = (*walk).hi.y - (*walk).lo.y + 1u;
    let rows = ny * ((*walk).hi.z - (*walk).lo.z + 1u);
    while ((*walk).next >= (*walk).end) {
        if ((*walk).row >= rows) { return false; }
        let y = (*walk).lo.y + (*walk).row % ny;
        let z = (*walk).lo.z + (*walk).row / ny;
        (*walk).row += 1u;
        let first = grid_cell_index(vec3u((*walk).lo.x, y, z), nb_grid);
        let last = grid_cell_index(vec3u((*walk).hi.x, y, z), nb_grid);
        (*walk).next = nb_cell_start[first];
        (*walk).end = neighbour_cell_end(last);
    }
    (*walk).slot = (*walk).next;
    (*walk).next += 1u;
    return true;
}

// neighbour_next of a hashed grid: the cells one by one, each bucket's points filtered by cell.
fn neighbour_next_hashed(walk: ptr<function, NeighbourWalk>) -> bool {
    let lo = bitcast<vec3i>((*walk).lo);
    let span = bitcast<vec3u>(bitcast<vec3i>((*walk).hi) - lo) + 1u;
    let cells = span.x * span.y * span.z;
    loop {
        if ((*walk).next < (*walk).end) {
            let slot = (*walk).next;
            (*walk).next += 1u;
            let own = bitcast<vec3u>(grid_hashed_coords(neighbour_position(slot), nb_grid));
            if (all(own == (*walk).cell)) {
                (*walk).slot = slot;
                return true;
            }
            continue;
        }
        let k = (*walk).row;
        if (k >= cells) { break; }
        (*walk).row += 1u;
        let cell = lo + bitcast<vec3i>(vec3u(k % span.x, (k / span.x) % span.y,
                                             k / (span.x * span.y)));
        (*walk).cell = bitcast<vec3u>(cell);
        let bucket = grid_bucket(cell, nb_grid);
        (*walk).next = nb_cell_start[bucket];
        (*walk).end = neighbour_cell_end(bucket);
    }
    return false;
}

// The position of the point at `slot` (the snapshot's copy).
fn neighbour_position(slot: u32) -> vec3f {
    return nb_snapshot[slot * nb_grid.copy + nb_grid.position].xyz;
}

// Vec4f `word` (< the grid's copy) of the record of the point at `slot` (the snapshot's copy):
// velocity, attributes ... as the family lays out its records.
fn neighbour_record(slot: u32, word: u32) -> vec4f {
    return nb_snapshot[slot * nb_grid.copy + word];
}

// The index (in the points buffer) of the point at `slot`.
fn neighbour_index(slot: u32) -> u32 {
    return nb_cell_particles[slot];
}
