// meshes/prepare.wgsl  --  pass `<entity>:mesh:prepare`
//
// Writes the mesh draw's drawIndirect arguments: the mesh's vertex count per instance, and the
// instance count copied from the emitter's own draw arguments (word 1 of <entity>/draw_args: the
// length of the dense alive list the draw reads particle slots through).
//
// Workgroup size 1; dispatch (1, 1, 1).
// Bindings (group 0): 0 look (read: MeshLook), 1 source_args (read: <entity>/draw_args);
//          (group 1): 0 mesh_args (rw: 4 words; the draw reads them as INDIRECT, so they sit
//                     alone in their group)

//! include meshes/types.wgsl

@group(0) @binding(0) var<storage, read> look: MeshLook;
@group(0) @binding(1) var<storage, read> source_args: array<u32, 4>;
@group(1) @binding(0) var<storage, read_write> mesh_args: array<u32, 4>;

@compute @workgroup_size(1)
fn main() {
    mesh_args[0] = look.vertices;
    mesh_args[1] = source_args[1];
    mesh_args[2] = 0u;
    mesh_args[3] = 0u;
}
