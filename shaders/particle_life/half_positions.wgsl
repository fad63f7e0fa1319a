// particle_life/half_positions.wgsl: the 8-byte neighbour record of precision = "half", shared
// by its order pass (sort_gather_half.wgsl) and forces pass (forces_half.wgsl); no pass of its
// own, no bindings.
//
// Each axis of a position is a 16-bit fixed-point coordinate, counted in units of
// cell_size * 2^-FRACTION_BITS from the box corner and kept modulo 2^16 (8 cells):
// q = (cell << FRACTION_BITS) + round((position - cell corner) / cell_size * 2^FRACTION_BITS).
// x: q.x | q.y << 16; y: q.z | species << 16 (q.z = 0 in 2D).
// Why fixed point modulo 8 cells: neighbours lie less than 2 cells apart per axis, so the
// difference of two coordinates taken modulo 2^16 (a 32-bit subtraction of the coordinates
// shifted into the high half) is their exact offset in units, whatever cells they are in; the
// forces pass needs no per-cell shift, only a correction of whole boxes for cells across the box
// edge. An axis is off by at most half a unit (cell_size * 2^-14) plus f32 rounding, an offset by
// twice that, independent of the box size; equal positions give equal coordinates.

//! include particle_life/types.wgsl

const FRACTION_BITS: u32 = 13u;

// The coordinates (x, y, z) of cell `cell` (flat index, x fastest).
fn cell_coords_of(cell: u32, params: PLParams) -> vec3u {
    let g = params.grid.xyz;
    return vec3u(cell % g.x, (cell / g.x) % g.y, cell / (g.x * g.y));
}

// The record of a particle at `position` with `species` in the cell of coordinates `coords`
// (corner = vec3f(coords) * cell_size, taken once per cell by the caller).
fn pack_record(position: vec3f, species: u32, coords: vec3u, corner: vec3f,
               params: PLParams) -> vec2u {
    let fraction = vec3i(round((position - corner) / params.cell_size.xyz
                               * f32(1u << FRACTION_BITS)));
    let q = ((coords << vec3u(FRACTION_BITS)) + bitcast<vec3u>(fraction)) & vec3u(0xffffu);
    return vec2u(q.x | (q.y << 16u), q.z | (species << 16u));
}

// The record's coordinates in the high 16 bits of each word (x, y, z): subtract two of them and
// read the difference as i32 for the offset in units of cell_size * 2^-(FRACTION_BITS + 16).
fn record_high(record: vec2u) -> vec3u {
    return vec3u(record.x << 16u, record.x & 0xffff0000u, record.y << 16u);
}
