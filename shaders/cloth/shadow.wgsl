// cloth/shadow.wgsl  --  pass `<entity>:cloth:shadow` (render, indexed; depth only)
//
// The cloth's triangles into the light's shadow map (runtime/core/shadows.py), both faces:
// positions read by vertex index and seen by frame.light_view_proj.
// Draw: indexed, 6 (nx - 1)(ny - 1) indices, 1 instance, target "shadow".
// Bindings (group 0): 0 frame (uniform Frame), 1 positions (read: the patch's own vertices)

//! include common/frame.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> positions: array<vec4f>;

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32) -> @builtin(position) vec4f {
    return frame.light_view_proj * vec4f(positions[vertex].xyz, 1.0);
}

@fragment
fn fs_main() {}
