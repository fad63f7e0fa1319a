// cloth/normals.wgsl  --  pass `<entity>:cloth:normals` (PREPARE phase, after the last substep)
//
// Per-vertex normals for lighting: the cross product of the central differences along i and j
// (one-sided at the edges), normalised.
// Workgroup size (16, 16); dispatch (ceil(nx / 16), ceil(ny / 16), patches), z the patch's entry
// in `records` (a batch of patches of one shape, as cloth/step.wgsl).
// Bindings (group 0): 0 records (read: ClothRecord per patch), 1 positions (read), 2 normals
// (rw); a patch's vertices start at its params.first_vertex.

//! include cloth/types.wgsl

@group(0) @binding(0) var<storage, read> records: array<ClothRecord>;
@group(0) @binding(1) var<storage, read> positions: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> normals: array<vec4f>;

@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let params = records[gid.z].params;
    if (gid.x >= params.nx || gid.y >= params.ny) { return; }
    let i = i32(gid.x);
    let j = i32(gid.y);
    let first = params.first_vertex;
    let du = positions[first + grid_at(i + 1, j, params)].xyz
           - positions[first + grid_at(i - 1, j, params)].xyz;
    let dv = positions[first + grid_at(i, j + 1, params)].xyz
           - positions[first + grid_at(i, j - 1, params)].xyz;
    let c = cross(du, dv);
    let n = select(vec3f(0.0, 0.0, 1.0), c / length(c), length(c) > 0.0);
    normals[first + gid.y * params.nx + gid.x] = vec4f(n, 0.0);
}
