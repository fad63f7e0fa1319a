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
    var q = g - vec3f(0.5);
    q[a] = g[a];
    return q;
}

fn sample_face_axis(p: GasParams, field: u32, a: u32, g: vec3f) -> FaceSample {
    let n = p.cells.xyz;
    let wrap = wraps(p);
    let d = face_dims(n, a);
    let s = trilinear(face_lattice(g, a), vec3i(select(d, n, wrap)), wrap, d, face_base(n, a));
    var value = 0.0;
    var low = 3.4e38;
    var high = -3.4e38;
    for (var k = 0u; k < 8u; k++) {
        let v = face_value(field, s.index[k]);
        value += v * s.weight[k];
        low = min(low, v);
        high = max(high, v);
    }
    return FaceSample(value, low, high);
}

fn sample_cells(p: GasParams, field: u32, g: vec3f) -> CellSample {
    let n = p.cells.xyz;
    let s = trilinear(g - vec3f(0.5), vec3i(n), wraps(p), n, 0u);
    var value = vec4f(0.0);
    var low = vec4f(3.4e38);
    var high = vec4f(-3.4e38);
    for (var k = 0u; k < 8u; k++) {
        let v = cell_value(field, s.index[k]);
        value += v * s.weight[k];
        low = min(low, v);
        high = max(high, v);
    }
    return CellSample(value, low, high);
}

// The velocity (field 0) at the point of face f (coordinates c.xyz on the lattice of axis
// a = c.w): its own component, and each other axis b's the mean of the 4 faces of axis b
// around the point (the cells either side along a, the faces either side along b), wrapped or
// clamped along a as the trilinear sample there is.
fn velocity_at_face(p: GasParams, f: u32, c: vec4i) -> vec3f {
    let n = p.cells.xyz;
    let a = u32(c.w);
    let wrap = wraps(p);
    var out = vec3f(0.0);
    out[a] = face_value(0u, f);
    for (var k = 1u; k < 3u; k++) {
        let b = (a + k) % 3u;
        var lo = c.xyz;
        var hi = c.xyz;
        lo[a] = along(c[a] - 1, i32(n[a]), wrap);
        hi[a] = along(c[a], i32(n[a]), wrap);
        var lo_up = lo;
        var hi_up = hi;
        lo_up[b] = lo_up[b] + 1;
        hi_up[b] = hi_up[b] + 1;
        out[b] = 0.25 * (face_value(0u, face_at(lo, n, b)) + face_value(0u, face_at(hi, n, b))
                         + face_value(0u, face_at(lo_up, n, b))
                         + face_value(0u, face_at(hi_up, n, b)));
    }
    return out;
}
