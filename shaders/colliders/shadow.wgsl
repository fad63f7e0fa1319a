// colliders/shadow.wgsl  --  pass `<entity>:collider:shadow` (render, indexed; depth only)
//
// A visible sphere or box collider into the light's shadow map (runtime/core/shadows.py): its
// unit mesh moved by the entity's model matrix and seen by frame.light_view_proj. The pipeline
// culls front faces, so the map holds the solid's back faces.
// Draw: indexed triangle list, 3 indices per triangle, 1 instance, target "shadow".
// Bindings (group 0): 0 frame (uniform Frame), 1 look (uniform ColliderLook), 2 vertices (read)

//! include common/frame.wgsl
//! include colliders/types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: ColliderLook;
@group(0) @binding(2) var<storage, read> vertices: array<MeshVertex>;

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> @builtin(position) vec4f {
    return frame.light_view_proj * (look.model * vec4f(vertices[index].position.xyz, 1.0));
}

@fragment
fn fs_main() {}
