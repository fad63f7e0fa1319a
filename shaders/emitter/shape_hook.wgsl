// emitter/shape_hook.wgsl: the mesh emission shape's hook, as built in (no pass of its own).
//
// Included by emitter/types.wgsl, so every emitter pass compiles sample_shape. This default has
// no mesh and no bindings: an emitter whose shape is not a mesh never reads one. The passes that
// give births to an emitter with shape.kind = "mesh" are compiled with emitter/mesh_shape.wgsl in
// place of this file (systems/emitter/mesh_shape.py), which samples the mesh bound there.
// Bindings: none.

const HAS_MESH_SHAPE: bool = false;

fn sample_mesh_shape(params: EmitterParams, key: u32) -> ShapeSample {
    return ShapeSample(vec3f(0.0), vec3f(0.0, 1.0, 0.0));
}
