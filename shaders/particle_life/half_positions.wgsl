// particle_life/half_positions.wgsl: the 8-byte neighbour record of precision = "half", shared
// by its order pass (sort_gather_half.wgsl) and forces pass (forces_half.wgsl); no pass of its
// own, no bindings.
//
// A particle's position relative to its cell's corner, each axis a 16-bit float, and its species:
// x: pack2x16float(rel.x, rel.y); y: low 16 bits pack2x16float(rel.z), high 16 bits the species.
// rel lies in [0, cell_size) up to f32 rounding, so an axis is off by at most half an f16 ulp:
// <= cell_size * 2^-11. Relative positions keep that error independent of the box size (absolute
// f16 positions would lose precision with the distance from the origin). pack2x16float and
// unpack2x16float need no device feature (unlike the f16 type).

//! include particle_life/types.wgsl

// The corner of cell `cell` (flat index, x fastest), world units from the box corner.
fn cell_corner(cell: u32, params: PLParams) -> vec3f {
    let g = params.grid.xyz;
    let c = vec3u(cell % g.x, (cell / g.x) % g.y, cell / (g.x * g.y));
    return vec3f(c) * params.cell_size.xyz;
}

fn pack_relative(rel: vec3f, species: u32) -> vec2u {
    return vec2u(pack2x16float(rel.xy),
                 (pack2x16float(vec2f(rel.z, 0.0)) & 0xffffu) | (species << 16u));
}

// rel.xyz (f32) of a record; its species is `record.y >> 16u`.
fn unpack_relative(record: vec2u) -> vec3f {
    return vec3f(unpack2x16float(record.x), unpack2x16float(record.y & 0xffffu).x);
}
