// emitter/neighbours.wgsl: an emitter's neighbours feature in its update, swapped in in place of
// emitter/neighbour_hooks.wgsl (systems/emitter/neighbours_feature.py; no pass of its own).
// The update reads other particles through the neighbour grid built over the emitter's slots at
// the start of the step (emberfx.blocks.neighbours; dead slots are in no cell): a snapshot, so
// the result does not depend on the order threads run in.
//
// Boids (NEIGHBOURS_BOIDS; Reynolds 1987, in the steering form of "Steering Behaviors For
// Autonomous Characters", 1999): within boids_radius, a boid sums, over its neighbours j,
//   separation  the direction away from those closer than boids_radius / 2, weighted 1 / d^2
//   alignment   their velocities
//   cohesion    the offsets to them
// and steers towards each as a desired velocity of max_speed along it: a += w (desired - v), w
// the rule's weight per second. In a wrapping box (NEIGHBOURS_WRAP: the grid is a box grid over
// it) offsets are minimum-image and the cells around a boid wrap too; positions wrap after each
// substep. Otherwise boids walk the grid as any query does (common/neighbours_query.wgsl, box or
// hashed). In a box that does
// not wrap, a boid within boids_radius of a wall steers away from it with the separation weight,
// and is kept inside. Speeds never pass max_speed.
// Particle collision's support (NEIGHBOURS_CONTACTS): the velocity the last step's contacts gave
// each particle against its approach (emitter/particle_finish.wgsl) acts again, spread over this
// step, before any contact is found: a warm start, so a pile at rest stays at rest instead of
// sinking by g h^2 each step for the sweeps to push back up one layer per sweep.
// Bindings: group 2, 0-3 the grid's (common/neighbours_query.wgsl, moved to group 2: group 1 is
// the modifiers'), 4 nb_params (read: NeighbourParams; from storage, as the grid's record:
// emberfx.blocks.neighbours says why), 6 nb_support (read, a vec4f per slot: xyz the last
// step's support; a stand-in without particle collision).

//! include common/neighbours_query@2.wgsl
//! include emitter/neighbour_types.wgsl

@group(2) @binding(4) var<storage, read> nb_params: NeighbourParams;
@group(2) @binding(6) var<storage, read> nb_support: array<vec4f>;

const HAS_NEIGHBOURS: bool = true;

// The first cell and the count of cells along one axis around cell `home` of `cells` in a
// periodic box: the three around it, wrapped (every cell once when there are fewer than three).
fn axis_cells(home: u32, cells: u32, wrap: bool) -> vec2u {
    if (cells >= 3u) { return vec2u(home + cells - 1u, 3u); }
    return vec2u(0u, cells);
}

// The minimum image of offset d in the flock's box (wrapping), or d.
fn flock_offset(d: vec3f, wrap: bool) -> vec3f {
    if (!wrap) { return d; }
    let size = nb_params.bounds_size.xyz;
    return d - size * round(d / size);
}

fn steer(desired: vec3f, v: vec3f) -> vec3f {
    let n = length(desired);
    if (!(n > 0.0)) { return vec3f(0.0); }
    return desired * (nb_params.max_speed / n) - v;
}

// What a boid has seen of its neighbours so far.
struct Seen {
    away: vec3f,      // separation: the sum of -d / |d|^2 over those closer than radius / 2
    heading: vec3f,   // the sum of their velocities
    offset: vec3f,    // the sum of their offsets d
    count: u32,
};

// Adds the point at grid slot s to what boid g at x has seen, if it is within boids_radius.
fn see(s: u32, g: u32, x: vec3f, wrap: bool, seen: ptr<function, Seen>) {
    if (neighbour_index(s) == g) { return; }
    let r = nb_params.boids_radius;
    let d = flock_offset(neighbour_position(s) - x, wrap);
    let d2 = dot(d, d);
    if (!(d2 < r * r) || d2 == 0.0) { return; }
    (*seen).count += 1u;
    (*seen).heading += neighbour_record(s, 1u).xyz;
    (*seen).offset += d;
    if (d2 < 0.25 * r * r) { (*seen).away -= d / d2; }
}

fn neighbour_acceleration(g: u32, x: vec3f, v: vec3f) -> vec3f {
    var support = vec3f(0.0);
    if ((nb_params.flags & NEIGHBOURS_CONTACTS) != 0u && params.h > 0.0) {
        support = nb_support[g].xyz / params.h;
    }
    if ((nb_params.flags & NEIGHBOURS_BOIDS) == 0u) { return support; }
    let wrap = (nb_params.flags & NEIGHBOURS_WRAP) != 0u;
    var seen: Seen;
    if (wrap) {   // a box grid over the flock's box: the cells around x, wrapped
        let home = grid_cell_coords(x, nb_grid);
        let sx = axis_cells(home.x, nb_grid.grid.x, true);
        let sy = axis_cells(home.y, nb_grid.grid.y, true);
        let sz = axis_cells(home.z, nb_grid.grid.z, true);
        for (var kz = 0u; kz < sz.y; kz++) {
            for (var ky = 0u; ky < sy.y; ky++) {
                for (var kx = 0u; kx < sx.y; kx++) {
                    let c = vec3u((sx.x + kx) % nb_grid.grid.x, (sy.x + ky) % nb_grid.grid.y,
                                  (sz.x + kz) % nb_grid.grid.z);
                    let cell = grid_cell_index(c, nb_grid);
                    for (var s = nb_cell_start[cell]; s < nb_cell_start[cell + 1u]; s++) {
                        see(s, g, x, true, &seen);
                    }
                }
            }
        }
    } else {
        var walk = neighbour_walk(x);
        while (neighbour_next(&walk)) { see(walk.slot, g, x, false, &seen); }
    }
    var a = support;
    if (seen.count > 0u) {
        a += nb_params.separation * steer(seen.away, v)
             + nb_params.alignment * steer(seen.heading, v)
             + nb_params.cohesion * steer(seen.offset, v);
    }
    if ((nb_params.flags & NEIGHBOURS_BOUNDS) != 0u && !wrap) {
        let r = nb_params.boids_radius;
        let lo = nb_params.bounds_center.xyz - 0.5 * nb_params.bounds_size.xyz;
        let hi = lo + nb_params.bounds_size.xyz;
        let push = max(vec3f(0.0), 1.0 - (x - lo) / r) - max(vec3f(0.0), 1.0 - (hi - x) / r);
        a += nb_params.separation * steer(push, v) * min(1.0, length(push));
    }
    return a;
}

fn neighbour_constrain(x: ptr<function, vec3f>, v: ptr<function, vec3f>) {
    if ((nb_params.flags & NEIGHBOURS_BOIDS) != 0u) {
        let speed = length(*v);
        if (speed > nb_params.max_speed) { *v *= nb_params.max_speed / speed; }
    }
    if ((nb_params.flags & NEIGHBOURS_BOUNDS) == 0u) { return; }
    let size = nb_params.bounds_size.xyz;
    let lo = nb_params.bounds_center.xyz - 0.5 * size;
    if ((nb_params.flags & NEIGHBOURS_WRAP) != 0u) {
        *x = lo + size * fract((*x - lo) / size);
        return;
    }
    let hi = lo + size;
    let out_low = *x < lo;
    let out_high = *x > hi;
    *v = select(*v, abs(*v), out_low);
    *v = select(*v, -abs(*v), out_high);
    *x = clamp(*x, lo, hi);
}
