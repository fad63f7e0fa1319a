// cloth/types.wgsl: the cloth passes' shared parameters and helpers (no pass of its own).
// Python reads ClothParams and ClothRecord through emberfx.layout.
//
// A patch's arrays (positions, velocities, rest, normals) start at vertex `first_vertex` of the
// buffers its step binds: 0 in its own buffers, its place in a batch's arenas (patches of one
// shape share them: systems/cloth/batches.py). Its winds and colliders start at `first_force`
// and `first_collider` of the forces and colliders buffers.

struct ClothParams {
    gravity: vec4f,      // xyz: m/s^2; w: air drag, 1/s
    pin_offset: vec4f,   // xyz: added to every pin's rest position
    rest: vec4f,         // x: spacing along i; y: spacing along j; z: diagonal; w: area per vertex
    nx: u32,
    ny: u32,
    h: f32,              // substep, seconds
    stiffness: f32,      // N/m
    damping: f32,        // N s/m along each spring
    mass: f32,           // kg per vertex
    force_count: u32,    // wind records in forces
    collider_count: u32,
    first_vertex: u32,
    first_force: u32,
    first_collider: u32,
};

// One patch's entry in the params array: ClothParams padded to 256 bytes, so that each entry
// stays bindable as a uniform of its own (WebGPU's largest uniform offset alignment), which the
// draw binds. A patch whose nx is 0 idles (a deleted member of a batch).
struct ClothRecord {
    params: ClothParams,
    reserved: array<vec4u, 10>,
};

// Vertex (i, j) clamped to the grid.
fn grid_at(i: i32, j: i32, p: ClothParams) -> u32 {
    let ci = clamp(i, 0, i32(p.nx) - 1);
    let cj = clamp(j, 0, i32(p.ny) - 1);
    return u32(cj) * p.nx + u32(ci);
}
