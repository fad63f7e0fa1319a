// gas/centred.wgsl: a cell's velocity at its centre, the mean of its two faces per axis (no
// pass of its own). The including pass binds `params` (GasParams) and `velocity` (array<f32>,
// the faces' components).

//! include gas/types.wgsl

fn centred(c: vec3i) -> vec3f {
    let n = params.cells.xyz;
    var out = vec3f(0.0);
    for (var a = 0u; a < 3u; a++) {
        var up = c;
        up[a] = up[a] + 1;
        out[a] = 0.5 * (velocity[face_at(c, n, a)] + velocity[face_at(up, n, a)]);
    }
    return out;
}
