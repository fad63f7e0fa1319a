// cloth/normals.wgsl  --  pass `<entity>:cloth:normals` (PREPARE phase, after the last substep)
//
// Per-vertex normals for lighting: the cross product of the central differences along i and j
// (one-sided at the edges), normalised.
// Workgroup size (16, 16); dispatch (ceil(nx / 16), ceil(ny / 16), 1).
// Bindings (group 0): 0 params (uniform ClothParams), 1 positions (read), 2 normals (rw)

//! include cloth/types.wgsl

@group(0) @binding(0) var<uniform> params: ClothParams;
@group(0) @binding(1) var<storage, read> positions: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> normals: array<vec4f>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    if (gid.x >= params.nx || gid.y >= params.ny) { return; }
    let i = i32(gid.x);
    let j = i32(gid.y);
    let du = positions[grid_at(i + 1, j, params)].xyz - positions[grid_at(i - 1, j, params)].xyz;
    let dv = positions[grid_at(i, j + 1, params)].xyz - positions[grid_at(i, j - 1, params)].xyz;
    let c = cross(du, dv);
    let n = select(vec3f(0.0, 0.0, 1.0), c / length(c), length(c) > 0.0);
    normals[gid.y * params.nx + gid.x] = vec4f(n, 0.0);
}
