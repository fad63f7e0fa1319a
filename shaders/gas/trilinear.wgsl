// gas/trilinear.wgsl: the 8 points and weights of a trilinear interpolation on a lattice (no pass
// of its own, no bindings). Each axis is resolved once (its two lattice indices, wrapped or
// clamped, and their weights) and each corner's index is a sum of the axes' offsets, so a sample
// costs 8 loads and little index arithmetic.

//! include gas/types.wgsl

// One axis of a trilinear interpolation: the lattice indices below and above the point, and the
// upper one's weight t (the lower's is 1 - t).
struct Span {
    at: vec2u,
    t: f32,
};

// Lattice coordinate q on an axis of m points: periodic (wrap: the lattice repeats every m
// points) or clamped into [0, m - 1] (the value at the last point continues beyond it).
fn span(q: f32, m: i32, wrap: bool) -> Span {
    var r = q;
    if (!wrap) { r = clamp(q, 0.0, f32(m - 1)); }
    let base = i32(floor(r));
    return Span(vec2u(u32(along(base, m, wrap)), u32(along(base + 1, m, wrap))),
                r - f32(base));
}

// The interpolation at lattice point q of a lattice of `period` points per axis (wrapped or
// clamped into it), stored from `offset` x fastest with `stride` points per axis. Its 8 points
// lie on 4 rows along x: row r's lower point at rows[r] + x.x and its upper at rows[r] + x.y,
// the rows (lower y, lower z), (upper y, lower z), (lower y, upper z), (upper y, upper z); t holds
// the upper points' weights per axis. The including pass reads the 8 values, each a load of its
// own, and blends them with mix along x, then y, then z.
struct Trilinear {
    rows: vec4u,
    x: vec2u,
    t: vec3f,
};

fn trilinear(q: vec3f, period: vec3i, wrap: bool, stride: vec3u, offset: u32) -> Trilinear {
    let x = span(q.x, period.x, wrap);
    let y = span(q.y, period.y, wrap);
    let z = span(q.z, period.z, wrap);
    let z0 = stride.y * z.at.x;
    let z1 = stride.y * z.at.y;
    let rows = vec4u(offset) + stride.x * vec4u(y.at.x + z0, y.at.y + z0, y.at.x + z1, y.at.y + z1);
    return Trilinear(rows, x.at, vec3f(x.t, y.t, z.t));
}
