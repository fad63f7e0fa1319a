// emitter/neighbours_alive.wgsl: which slots of an emitter's particles are alive, swapped into
// the assign pass of its neighbour grid in place of common/neighbours_alive.wgsl (no pass of its
// own, no bindings; it reads the assign pass's `points`, Particle records of two vec4f): a slot is alive
// while its age is below its lifetime (emitter/types.wgsl).

fn point_alive(i: u32) -> bool {
    let at = i * grid.stride;
    return points[at].w < points[at + 1u].w;
}
