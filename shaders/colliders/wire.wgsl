// colliders/wire.wgsl  --  pass `<entity>:collider:wire` (render, indexed lines; wireframe = true)
//
// A collider's edges only, as a debug look: sphere latitudes and meridians, the box's twelve
// edges, the floor's grid; unlit, in the collider's colour lifted towards white so thin lines
// read on a dark background. Depth-tested and written like the solid it replaces.
// Draw: indexed line list, 2 indices per edge, 1 instance. Bindings (group 0): 0 frame (uniform
// Frame), 1 look (uniform ColliderLook), 2 vertices (read, array<MeshVertex>)

//! include common/frame.wgsl
//! include colliders/types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: ColliderLook;
@group(0) @binding(2) var<storage, read> vertices: array<MeshVertex>;

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> @builtin(position) vec4f {
    return frame.view_proj * (look.model * vec4f(vertices[index].position.xyz, 1.0));
}

@fragment
fn fs_main() -> @location(0) vec4f {
    return vec4f(mix(look.color.rgb, vec3f(1.0), 0.4), 1.0);
}
