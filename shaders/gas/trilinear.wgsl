// gas/trilinear.wgsl: the 8 points and weights of a trilinear interpolation on a lattice (no pass
// of its own, no bindings). Each axis is resolved once (its two lattice indices, wrapped or
// clamped, and their weights) and each corner's index is a sum of the axes' offsets, so a sample
// costs 8 loads and little index arithmetic.

//! include gas/types.wgsl

// One axis of a trilinear interpolation: the lattice indices below and above the point and their
// weights (1 - t, t).
struct Span {
    at: vec2u,
    weight: vec2f,
};

// Lattice coordinate q on an axis of m points: periodic (wrap: the lattice repeats every m
// points) or clamped into [0, m - 1] (the value at the last point continues beyond it).
fn span(q: f32, m: i32, wrap: bool) -> Span {
    var r = q;
    if (!wrap) { r = clamp(q, 0.0, f32(m - 1)); }
    let base = i32(floor(r));
    let t = r - f32(base);
    return Span(vec2u(u32(along(base, m, wrap)), u32(along(base + 1, m, wrap))),
                vec2f(1.0 - t, t));
}

// The interpolation at lattice point q of a lattice of `period` points per axis (wrapped or
// clamped into it), stored from `offset` x fastest with `stride` points per axis: corner k (0..7;
// bit 0 the upper x, bit 1 the upper y, bit 2 the upper z) lies at index[k], weight weight[k].
struct Trilinear {
    index: array<u32, 8>,
    weight: array<f32, 8>,
};

fn trilinear(q: vec3f, period: vec3i, wrap: bool, stride: vec3u, offset: u32) -> Trilinear {
    let x = span(q.x, period.x, wrap);
    let y = span(q.y, period.y, wrap);
    let z = span(q.z, period.z, wrap);
    var s: Trilinear;
    for (var k = 0u; k < 8u; k++) {
        let ox = k & 1u;
        let oy = (k >> 1u) & 1u;
        let oz = k >> 2u;
        s.index[k] = offset + x.at[ox] + stride.x * (y.at[oy] + stride.y * z.at[oz]);
        s.weight[k] = x.weight[ox] * y.weight[oy] * z.weight[oz];
    }
    return s;
}
