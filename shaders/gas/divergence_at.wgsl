// gas/divergence_at.wgsl: a cell's velocity divergence (no pass of its own). The including pass
// binds `velocity` (array<f32>: the three face runs of gas/types.wgsl) and `params` (GasParams).

//! include gas/types.wgsl

// The sum over axes of cell c's upper face's component less its lower face's, over h.
fn divergence_at(c: vec3i) -> f32 {
    let n = params.cells.xyz;
    let sum = (velocity[face_at(c + vec3i(1, 0, 0), n, 0u)] - velocity[face_at(c, n, 0u)])
              + (velocity[face_at(c + vec3i(0, 1, 0), n, 1u)] - velocity[face_at(c, n, 1u)])
              + (velocity[face_at(c + vec3i(0, 0, 1), n, 2u)] - velocity[face_at(c, n, 2u)]);
    return sum / params.lower.w;
}
