// common/neighbours.wgsl: the uniform of a neighbour grid (emberfx.blocks.neighbours) and the
// cell of a point; shared by the grid's passes and by common/neighbours_query.wgsl (no pass of
// its own, no bindings). Python reads GridParams through emberfx.layout.
//
// The grid covers the box [origin, origin + grid * cell_size) with grid.x * grid.y * grid.z
// cells, x fastest. A point outside the box (or not finite) counts in the nearest border cell:
// coordinates are clamped. Queries stay exact for such points, because clamping never moves two
// cells further apart than they were (|a - b| <= 1 cell stays <= 1 cell); only the border cells
// grow crowded.

struct GridParams {
    origin: vec4f,      // xyz: the box's lower corner; w unused
    cell_size: vec4f,   // xyz: a cell's edge per axis (>= the largest query radius); w unused
    grid: vec4u,        // xyz: cells per axis (z = 1 for a 2D grid); w: total cells
    count: u32,         // points in the grid
    stride: u32,        // vec4f per point record in the points buffer
    position: u32,      // which vec4f of a record holds the position (xyz)
    copy: u32,          // vec4f of each record (from its start) copied into the snapshot; 0: none
};

// The clamped cell coordinates of point p.
fn grid_cell_coords(p: vec3f, g: GridParams) -> vec3u {
    let c = vec3i(floor((p - g.origin.xyz) / g.cell_size.xyz));
    return vec3u(clamp(c, vec3i(0), vec3i(g.grid.xyz) - 1));
}

// The flat index of the cell at coordinates c (x fastest, then y, then z).
fn grid_cell_index(c: vec3u, g: GridParams) -> u32 {
    return (c.z * g.grid.y + c.y) * g.grid.x + c.x;
}
