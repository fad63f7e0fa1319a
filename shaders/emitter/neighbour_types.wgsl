// emitter/neighbour_types.wgsl: the record of an emitter's neighbours feature
// (systems/emitter/neighbours_feature.py packs it; no pass of its own, no bindings), read by its
// hooks in the update (emitter/neighbours.wgsl) and by the particle collision passes
// (emitter/particle_project.wgsl, emitter/particle_finish.wgsl).

const NEIGHBOURS_BOIDS: u32 = 1u;    // flags: boids steer
const NEIGHBOURS_BOUNDS: u32 = 2u;   // the flock has a box
const NEIGHBOURS_WRAP: u32 = 4u;     // and wraps around it (else it steers off the walls)
const NEIGHBOURS_CONTACTS: u32 = 8u; // particle collision

struct NeighbourParams {
    bounds_center: vec4f,   // xyz: the flock box's centre
    bounds_size: vec4f,     // xyz: its edges (2 x half_size)
    radius: f32,            // neighbour_radius: how far neighbours() sees in `update` modifiers
    boids_radius: f32,      // how far a boid sees
    separation: f32,        // steering weights, per second
    alignment: f32,
    cohesion: f32,
    max_speed: f32,         // m/s
    contact: f32,           // particle_collision: 2 x radius, where two spheres touch
    restitution: f32,
    friction: f32,
    flags: u32,             // NEIGHBOURS_*
    pad0: u32,
    pad1: u32,
};
