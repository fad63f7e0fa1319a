// gas/sample.wgsl: trilinear samples of a gas's face and cell lattices, and the velocity at the
// lattice's own points (no pass of its own, no bindings). The including pass defines where the
// values come from:
//   fn face_value(field: u32, f: u32) -> f32      field 0: the velocity that advects
//   fn cell_value(field: u32, i: u32) -> vec4f
// Positions are grid coordinates (world / h from the lower corner). Periodic grids wrap; others
// clamp the position into the lattice (the value at a wall continues beyond it). The velocity at
// a cell centre is gas/centred.wgsl's.

//! include gas/trilinear.wgsl

struct FaceSample {
    value: f32,
    low: f32,    // the least and greatest of the 8 values interpolated
    high: f32,
};

struct CellSample {
    value: vec4f,
    low: vec4f,
    high: vec4f,
};

// Lattice coordinates of grid position g on the faces of axis a (face k of axis a lies at
// g[a] = k, and half a cell in on the other axes).
fn face_lattice(g: vec3f, a: u32) -> vec3f {
    return g - 0.5 * (vec3f(1.0) - vec3f(unit(a)));
}

fn sample_face_axis(p: GasParams, field: u32, a: u32, g: vec3f) -> FaceSample {
    let n = p.cells.xyz;
    let wrap = wraps(p);
    let d = face_dims(n, a);
    let s = trilinear(face_lattice(g, a), vec3i(select(d, n, wrap)), wrap, d, face_base(n, a));
    let v0 = face_value(field, s.rows.x + s.x.x);
    let v1 = face_value(field, s.rows.x + s.x.y);
    let v2 = face_value(field, s.rows.y + s.x.x);
    let v3 = face_value(field, s.rows.y + s.x.y);
    let v4 = face_value(field, s.rows.z + s.x.x);
    let v5 = face_value(field, s.rows.z + s.x.y);
    let v6 = face_value(field, s.rows.w + s.x.x);
    let v7 = face_value(field, s.rows.w + s.x.y);
    let t = s.t;
    let value = mix(mix(mix(v0, v1, t.x), mix(v2, v3, t.x), t.y),
                    mix(mix(v4, v5, t.x), mix(v6, v7, t.x), t.y), t.z);
    return FaceSample(value, min(min(min(v0, v1), min(v2, v3)), min(min(v4, v5), min(v6, v7))),
                      max(max(max(v0, v1), max(v2, v3)), max(max(v4, v5), max(v6, v7))));
}

fn sample_cells(p: GasParams, field: u32, g: vec3f) -> CellSample {
    let n = p.cells.xyz;
    let s = trilinear(g - vec3f(0.5), vec3i(n), wraps(p), n, 0u);
    let v0 = cell_value(field, s.rows.x + s.x.x);
    let v1 = cell_value(field, s.rows.x + s.x.y);
    let v2 = cell_value(field, s.rows.y + s.x.x);
    let v3 = cell_value(field, s.rows.y + s.x.y);
    let v4 = cell_value(field, s.rows.z + s.x.x);
    let v5 = cell_value(field, s.rows.z + s.x.y);
    let v6 = cell_value(field, s.rows.w + s.x.x);
    let v7 = cell_value(field, s.rows.w + s.x.y);
    let t = s.t;
    let value = mix(mix(mix(v0, v1, t.x), mix(v2, v3, t.x), t.y),
                    mix(mix(v4, v5, t.x), mix(v6, v7, t.x), t.y), t.z);
    return CellSample(value, min(min(min(v0, v1), min(v2, v3)), min(min(v4, v5), min(v6, v7))),
                      max(max(max(v0, v1), max(v2, v3)), max(max(v4, v5), max(v6, v7))));
}

// The mean of the 4 faces of axis b around a face's point: those of the cells either side of it
// along its own axis (`cells`), and the faces one step up along b from them.
fn faces_around(cells: FaceCells, n: vec3u, b: u32) -> f32 {
    let e = unit(b);
    return 0.25 * (face_value(0u, face_at(cells.lo, n, b)) + face_value(0u, face_at(cells.hi, n, b))
                   + face_value(0u, face_at(cells.lo + e, n, b))
                   + face_value(0u, face_at(cells.hi + e, n, b)));
}

// The velocity (field 0) at the point of face f (coordinates c.xyz on the lattice of axis
// a = c.w): its own component, and each other axis b's faces_around it, the cells either side
// wrapped or clamped along a as the trilinear sample there is.
fn velocity_at_face(p: GasParams, f: u32, c: vec4i) -> vec3f {
    let n = p.cells.xyz;
    let a = u32(c.w);
    let cells = face_cells(p, c);
    let b1 = (a + 1u) % 3u;
    let b2 = (a + 2u) % 3u;
    return vec3f(unit(a)) * face_value(0u, f) + vec3f(unit(b1)) * faces_around(cells, n, b1)
           + vec3f(unit(b2)) * faces_around(cells, n, b2);
}
