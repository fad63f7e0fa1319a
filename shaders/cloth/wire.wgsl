// cloth/wire.wgsl  --  pass `<entity>:cloth:wire` (render, indexed lines; wireframe = true)
//
// The grid's edges as lines over the mesh.
// Draw: indexed line list, 2 indices per edge. Bindings (group 0): 0 frame (uniform Frame),
// 1 positions (read)

//! include common/frame.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> positions: array<vec4f>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4f {
    let clip = frame.view_proj * vec4f(positions[vertex].xyz, 1.0);
    return vec4f(clip.xy, clip.z - 0.0005 * clip.w, clip.w);   // slightly in front of the mesh
}

@fragment
fn fs_main() -> @location(0) vec4f {
    return vec4f(0.02, 0.02, 0.02, 1.0);
}
