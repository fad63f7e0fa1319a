// particle_life/forces_gathered.wgsl  --  pass `<entity>:particle_life:forces`
// (neighbours = "grid", grid_kernel = "gathered")
//
// The sums of particle_life/forces.wgsl with the same bits, read from positions that the order
// pass (common/neighbours_order.wgsl) copied into cell order: a neighbour cell is a contiguous run of
// `gathered`, and the three cells dx = -1, 0, 1 of a row are one run when the home cell is not
// at the box edge in x, so a particle walks 3 runs (2D) or 9 (3D) instead of 9 or 27 cells, with
// no index lookup per neighbour. The terms come in forces.wgsl's order (dz, dy, dx, then slot
// order in a cell; the order pass sorted each cell); the particle itself gives no term (its
// offset is exactly zero; see add_run). Runs that are not across the box edge skip the minimum
// image (pair_accel_inside in types.wgsl: same bits) in a loop of their own. The law has no
// branches (see term). The loop takes four slots per iteration, all loaded before the first
// term, so four loads are in flight (on the H200 at 1M particles: 1.06x the steps/s of two
// slots per iteration; same bits).
// DIMS (2 or 3, an override) fixes the neighbourhood and lets the compiler drop the z of 2D
// positions: z is zero in the data too, so the sums do not change.
// For the k-th particle in cell order: acc = sum(f(d / r_max, matrix[s_i][s_j]) * d / |d|) *
// r_max * force, then pl_integrate; written at the particle's own index, or at k on a reorder
// step; ids travel along.
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles_in (read), 2 particles_out (rw),
//   3 ids_in (read), 4 ids_out (rw), 5 matrix (read, species^2 f32), 6 cell_start (read),
//   7 cell_particles (read), 8 gathered (read, count vec4f in cell order)

//! include common/dispatch.wgsl
//! include particle_life/grid_step_io.wgsl

// bindings 0-7 (params ... cell_particles): declared in particle_life/grid_step_io.wgsl
@group(0) @binding(8) var<storage, read> gathered: array<vec4f>;

override DIMS: u32 = 3u;
const WORKGROUP_SIZE: u32 = 256u;
const MAX_MATRIX: u32 = 256u;          // 16 species squared

var<workgroup> attraction: array<f32, MAX_MATRIX>;

fn spatial(v: vec4f) -> vec3f {
    if (DIMS == 2u) { return vec3f(v.xy, 0.0); }
    return v.xyz;
}

// The end of cell `cell`'s run (the next cell's start).
fn run_end(cell: u32) -> u32 {
    if (cell + 1u < params.grid.w) { return cell_start[cell + 1u]; }
    return params.count;
}

// The term of a neighbour at offset d (its position minus x, or the minimum image) with
// attraction a: pair_accel (pair_accel_inside for d = y - x; types.wgsl) and pl_force with their
// branches turned into selects, so every lane runs the same instructions (the lanes of a
// subgroup rarely agree on near or far). The same expressions give the same bits; a zero term
// adds +0.0, which leaves acc as it was (acc starts at +0.0 and a round-to-nearest sum is never
// -0.0 after that).
fn term(d: vec3f, a: f32) -> vec3f {
    let dist = length(d);
    let r = dist / params.r_max;
    let beta = params.beta;
    let f = select(select(0.0, a * (1.0 - abs(2.0 * r - 1.0 - beta) / (1.0 - beta)), r < 1.0),
                   r / beta - 1.0, r < beta);
    return select(vec3f(0.0), f * d / dist, (dist > 0.0) & (dist < params.r_max));
}

// matrix[s_i][s_j] for a neighbour whose w is species s_j (a small whole number as a float).
// s + 2^23 is exact and its bits are those of 2^23 plus s, so one float add and one integer
// add give the index (`row_key` = s_i * species - bitcast<u32>(2^23), wrapping) in place of a
// float-to-integer conversion, which the H200 runs at 1/8 the rate of adds (1.06x the steps/s
// of u32(w) at 1M and 4M particles).
const SPECIES_BIAS: f32 = 8388608.0;            // 2^23

fn attraction_of(w: f32, row_key: u32) -> f32 {
    return attraction[bitcast<u32>(w + SPECIES_BIAS) + row_key];
}

// acc plus the terms of slots [first, end), in slot order. `across`: the slots' cells lie across
// the box edge (minimum image needed; a few runs at the edge). The particle itself needs no
// test: its cell's row is never across, so its offset is exactly zero, and a zero distance
// gives no term (as for any coincident pair in pair_accel). The inner loop takes four slots per
// iteration, all loaded before the first term, so four loads are in flight.
fn add_run(acc_in: vec3f, first: u32, end: u32, x: vec3f, row_key: u32, across: bool) -> vec3f {
    var acc = acc_in;
    var n = first;
    if (across) {
        for (; n < end; n++) {
            let other = gathered[n];
            acc += term(min_image(x, spatial(other), params), attraction_of(other.w, row_key));
        }
        return acc;
    }
    for (; n + 3u < end; n += 4u) {
        let o0 = gathered[n];
        let o1 = gathered[n + 1u];
        let o2 = gathered[n + 2u];
        let o3 = gathered[n + 3u];
        acc += term(spatial(o0) - x, attraction_of(o0.w, row_key));
        acc += term(spatial(o1) - x, attraction_of(o1.w, row_key));
        acc += term(spatial(o2) - x, attraction_of(o2.w, row_key));
        acc += term(spatial(o3) - x, attraction_of(o3.w, row_key));
    }
    for (; n < end; n++) {
        let other = gathered[n];
        acc += term(spatial(other) - x, attraction_of(other.w, row_key));
    }
    return acc;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    for (var s = lid; s < min(arrayLength(&matrix), MAX_MATRIX); s += WORKGROUP_SIZE) {
        attraction[s] = matrix[s];
    }
    workgroupBarrier();
    let k = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (k >= params.count) { return; }
    let own = gathered[k];
    let x = spatial(own);
    let row_key = u32(own.w) * params.species - bitcast<u32>(SPECIES_BIAS);
    let home = vec3i(cell_coords(x, params));
    let grid = vec3i(params.grid.xyz);
    let reach = select(1, 0, DIMS == 2u);
    let rows = home.x >= 1 && home.x + 1 < grid.x;    // dx = -1..1 not across the edge in x
    var acc = vec3f(0.0);
    for (var dz = -reach; dz <= reach; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            let yz = home.yz + vec2i(dy, dz);
            let row_across = any((yz < vec2i(0)) | (yz >= grid.yz));
            let wrapped = vec2u((yz + grid.yz) % grid.yz);
            let row_first = (wrapped.y * params.grid.y + wrapped.x) * params.grid.x;
            if (rows) {
                let left = row_first + u32(home.x) - 1u;
                acc = add_run(acc, cell_start[left], run_end(left + 2u), x, row_key, row_across);
            } else {
                for (var dx = -1; dx <= 1; dx++) {
                    let cx = home.x + dx;
                    let across = row_across || cx < 0 || cx >= grid.x;
                    let cell = row_first + u32((cx + grid.x) % grid.x);
                    acc = add_run(acc, cell_start[cell], run_end(cell), x, row_key, across);
                }
            }
        }
    }
    acc *= params.r_max * params.force;
    let i = cell_particles[k];
    let dst = select(i, k, params.reorder == 1u);
    particles_out[dst] = pl_integrate(particles_in[i], acc, params);
    ids_out[dst] = ids_in[i];
}
