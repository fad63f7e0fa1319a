// post/edge_types.wgsl: the edge passes' shared settings and luminance (no pass of its own).

struct EdgeSettings {
    color: vec4f,     // linear edge colour
    strength: f32,    // scale of the gradient magnitude
    edges_only: u32,  // 1: the edges alone; 0: drawn over the image
};

fn luminance(c: vec3f) -> f32 {
    return dot(c, vec3f(0.2126, 0.7152, 0.0722));
}
