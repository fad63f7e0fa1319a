// gas/sample.wgsl: trilinear samples of a gas's face and cell lattices (no pass of its own, no
// bindings). The including pass defines where the values come from:
//   fn face_value(field: u32, f: u32) -> f32      field 0: the velocity that advects
//   fn cell_value(field: u32, i: u32) -> vec4f
// Positions are grid coordinates (world / h from the lower corner). Periodic grids wrap; others
// clamp the position into the lattice (the value at a wall continues beyond it).

//! include gas/types.wgsl

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
    let d = vec3i(face_dims(n, a));
    var period = vec3i(n);           // periodic: the lattice repeats every n points
    var q = face_lattice(g, a);
    if (!wrap) {
        q = clamp(q, vec3f(0.0), vec3f(d - vec3i(1)));
        period = d;
    }
    let base = vec3i(floor(q));
    let t = q - vec3f(base);
    var value = 0.0;
    var low = 3.4e38;
    var high = -3.4e38;
    for (var k = 0u; k < 8u; k++) {
        let corner = trilinear_corner(base, t, k, period, wrap);
        let v = face_value(field, face_at(corner.cell, n, a));
        value += v * corner.weight;
        low = min(low, v);
        high = max(high, v);
    }
    return FaceSample(value, low, high);
}

// The velocity (field 0) at grid position g, world units / s.
fn velocity_at(p: GasParams, g: vec3f) -> vec3f {
    return vec3f(sample_face_axis(p, 0u, 0u, g).value, sample_face_axis(p, 0u, 1u, g).value,
                 sample_face_axis(p, 0u, 2u, g).value);
}

fn sample_cells(p: GasParams, field: u32, g: vec3f) -> CellSample {
    let n = vec3i(p.cells.xyz);
    let wrap = wraps(p);
    var q = g - vec3f(0.5);
    if (!wrap) {
        q = clamp(q, vec3f(0.0), vec3f(n - vec3i(1)));
    }
    let base = vec3i(floor(q));
    let t = q - vec3f(base);
    var value = vec4f(0.0);
    var low = vec4f(3.4e38);
    var high = vec4f(-3.4e38);
    for (var k = 0u; k < 8u; k++) {
        let corner = trilinear_corner(base, t, k, n, wrap);
        let v = cell_value(field, cell_at(corner.cell, p.cells.xyz));
        value += v * corner.weight;
        low = min(low, v);
        high = max(high, v);
    }
    return CellSample(value, low, high);
}
