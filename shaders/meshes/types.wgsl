// meshes/types.wgsl  --  shared declarations of the mesh particle passes (no pass of its own).
//
// MeshVertex: one vertex of a mesh's flat triangle list (systems/meshes/shapes.py packs it).
// MeshLook: how a mesh emitter's particles are turned (systems/meshes/draw.py packs it).

struct MeshVertex {
    position: vec4f,   // xyz: local, within [-0.5, 0.5]^3; w = 1
    normal: vec4f,     // xyz: local unit normal, outwards
};

// MeshLook.align
const MESH_ALIGN_SPIN: u32 = 0u;       // turned about a per-particle random axis (rotation, spin)
const MESH_ALIGN_VELOCITY: u32 = 1u;   // local +y along the velocity
const MESH_ALIGN_AXIS: u32 = 2u;       // local +y along MeshLook.axis

struct MeshLook {
    axis: vec4f,       // xyz: unit world axis for MESH_ALIGN_AXIS
    rotation: vec4f,   // x, y: initial angle range, radians; z, w: angular velocity range, rad/s
    align: u32,        // MESH_ALIGN_*
    vertices: u32,     // 3 x triangles of the mesh
    pad0: u32,
    pad1: u32,
    // the step's identity for birth keys (as emitter/draw.wgsl's SpriteLook: not the uniform)
    frame: u32,
    h: f32,
    seed: u32,
    entity: u32,
};
