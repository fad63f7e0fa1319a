// gas/centred.wgsl: a cell's velocity at its centre, the mean of its two faces per axis (no
// pass of its own). The including pass binds `params` (GasParams) and `velocity` (array<f32>,
// the faces' components).

//! include gas/types.wgsl

fn centred(c: vec3i) -> vec3f {
    let n = params.cells.xyz;
    return 0.5 * vec3f(
        velocity[face_at(c, n, 0u)] + velocity[face_at(c + vec3i(1, 0, 0), n, 0u)],
        velocity[face_at(c, n, 1u)] + velocity[face_at(c + vec3i(0, 1, 0), n, 1u)],
        velocity[face_at(c, n, 2u)] + velocity[face_at(c + vec3i(0, 0, 1), n, 2u)]);
}
