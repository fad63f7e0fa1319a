// meshes/shadow.wgsl  --  pass `<entity>:mesh:shadow` (render, drawIndirect; depth only)
//
// Mesh particles into the light's shadow map (runtime/core/shadows.py): each alive particle's
// mesh placed as meshes/place.wgsl says and seen by frame.light_view_proj. The pipeline culls
// front faces (closed meshes wind counter-clockwise outside): the map holds their back faces.
// Draw: MeshLook.vertices x alive-count instances, indirect (<entity>/mesh_args), target
// "shadow". Bindings (group 0): 0-6 as meshes/place.wgsl

//! include meshes/place.wgsl

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32)
        -> @builtin(position) vec4f {
    return frame.light_view_proj * vec4f(place(vertex, instance).world, 1.0);
}

@fragment
fn fs_main() {}
