// colliders/types.wgsl: what the collider draw passes share (no pass of its own): the mesh
// vertex and the per-entity look. Python packs both through emberfx.core.layout.struct_dtype.

// One vertex of a unit mesh (systems/colliders/meshes.py): sphere of radius 1, cube [-1, 1]^3,
// square [-0.5, 0.5]^2 in the local x-z plane; ColliderLook.model places it in the world.
struct MeshVertex {
    position: vec4f,   // xyz: local position; w = 1
    normal: vec4f,     // xyz: local unit normal, outwards; w = 0
};

struct ColliderLook {
    model: mat4x4f,           // local mesh -> world, column vectors
    normal_matrix: mat4x4f,   // local normals -> world: inverse transpose of model's 3x3
    color: vec4f,             // linear rgb; a = 1
    style: vec4f,             // x: floor checker contrast (0: none); yz: checker cells per local
                              // unit along x and z; w: rim light strength
    mottle: vec4f,            // x: noise contrast (0: none); y: noise cycles per world unit
};
