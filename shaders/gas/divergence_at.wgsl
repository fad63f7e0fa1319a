// gas/divergence_at.wgsl: a cell's velocity divergence (no pass of its own). The including pass
// binds `velocity` (array<f32>: the three face runs of gas/types.wgsl) and `params` (GasParams).

//! include gas/types.wgsl

// The sum over axes of cell c's upper face's component less its lower face's, over h.
fn divergence_at(c: vec3i) -> f32 {
    let n = params.cells.xyz;
    var sum = 0.0;
    for (var a = 0u; a < 3u; a++) {
        var up = c;
        up[a] = up[a] + 1;
        sum += velocity[face_at(up, n, a)] - velocity[face_at(c, n, a)];
    }
    return sum / params.lower.w;
}
