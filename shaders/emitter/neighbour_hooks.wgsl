// emitter/neighbour_hooks.wgsl: the hooks through which an emitter's neighbours feature acts in
// its update (emitter/integrate.wgsl calls them; no pass of its own, no bindings). This is the
// no-op default: HAS_NEIGHBOURS is false and the hooks compile away. An emitter with boids,
// particle collision or a neighbour_radius gets emitter/neighbours.wgsl swapped in
// (systems/emitter/neighbours_feature.py).

const HAS_NEIGHBOURS: bool = false;

// The acceleration other particles give particle g (arena slot) at (x, v), each substep.
fn neighbour_acceleration(g: u32, x: vec3f, v: vec3f) -> vec3f {
    return vec3f(0.0);
}

// After each substep's integration: the flock's speed limit and its box.
fn neighbour_constrain(x: ptr<function, vec3f>, v: ptr<function, vec3f>) {}
