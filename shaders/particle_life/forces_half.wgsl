// particle_life/forces_half.wgsl  --  pass `<entity>:particle_life:forces`
// (neighbours = "grid", grid_kernel = "gathered", precision = "half")
//
// The approximate variant of particle_life/forces_gathered.wgsl (an opt-in: it does not give
// the exact kernels' bits). Neighbours come from the 8-byte records of the order pass
// (sort_gather_half.wgsl, format in particle_life/half_positions.wgsl): 16-bit fixed-point
// coordinates modulo 8 cells, so the neighbour loop reads half the bytes and takes an offset as
// one integer subtraction per axis (the coordinates' difference modulo 2^16 is the offset
// itself, since neighbours are less than 2 cells apart), then one conversion and one scaling.
// Cells across the box edge need a whole box added or removed: that goes into the reference
// the run subtracts (the particle's own coordinates), once per run, so it is the minimum image.
// The law is seed 003's force law without divisions or branches (inverseSqrt and slopes taken
// once per invocation); terms accumulate in f32 in the exact kernels' order. Error per offset:
// <= 2 * cell_size * 2^-(FRACTION_BITS + 1) per axis plus f32 rounding (both ends rounded);
// equal positions give an offset of exactly zero (no term), so the particle itself needs no test.
// The three cells of a row are one run (as in forces_gathered.wgsl); at the box edge in x the
// three cells are separate runs, each with its own reference. The loop takes four records per
// iteration, all loaded before the first term, so four loads are in flight (on the H200 at 4M
// particles: 1.05x the steps/s of two records per iteration, 1.22x those of one; same bits).
// For the k-th particle in cell order: acc = sum(f(|d| / r_max, matrix[s_i][s_j]) * d / |d|) *
// r_max * force, then pl_integrate; written at the particle's own index, or at k on a reorder
// step; ids travel along.
// Workgroup size 256; dispatch ceil(count / 256) workgroups, folded into (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles_in (read), 2 particles_out (rw),
//   3 ids_in (read), 4 ids_out (rw), 5 matrix (read, species^2 f32), 6 cell_start (read),
//   7 cell_particles (read), 8 gathered_half (read, count vec2u in cell order)

//! include common/dispatch.wgsl
//! include particle_life/grid_step_io.wgsl
//! include particle_life/half_positions.wgsl

// bindings 0-7 (params ... cell_particles): declared in particle_life/grid_step_io.wgsl
@group(0) @binding(8) var<storage, read> gathered_half: array<vec2u>;

override DIMS: u32 = 3u;
const WORKGROUP_SIZE: u32 = 256u;
const MAX_MATRIX: u32 = 256u;          // 16 species squared

var<workgroup> attraction: array<f32, MAX_MATRIX>;

// The force law's parameters in the forms the loop multiplies by (dist in world units):
// f = dist * near_slope - 1 below near_end = beta * r_max, else
// a * (1 - |dist * far_slope - far_center|), which is seed 003's law at r = dist / r_max.
struct Law {
    near_slope: f32,      // 1 / (beta * r_max)
    far_slope: f32,       // 2 / ((1 - beta) * r_max)
    far_center: f32,      // (1 + beta) / (1 - beta)
    near_end: f32,
    r_max_sq: f32,
};

// z dropped in 2D (DIMS is an override, so the z arithmetic folds away).
fn flat(v: vec3f) -> vec3f {
    if (DIMS == 2u) { return vec3f(v.xy, 0.0); }
    return v;
}

// The end of cell `cell`'s run (the next cell's start).
fn run_end(cell: u32) -> u32 {
    if (cell + 1u < params.grid.w) { return cell_start[cell + 1u]; }
    return params.count;
}

// f(|d| / r_max, a) * d / |d| for 0 < |d| < r_max, else zero; every lane evaluates the same
// instructions (the lanes of a subgroup rarely agree on near or far). |d| is 0 or at least one
// unit of the records, so d2 is never subnormal.
fn term(d: vec3f, a: f32, law: Law) -> vec3f {
    let d2 = dot(d, d);
    let inv = inverseSqrt(d2);          // inf at d2 = 0: not selected below
    let dist = d2 * inv;
    let f = select(a - a * abs(dist * law.far_slope - law.far_center),
                   dist * law.near_slope - 1.0, dist < law.near_end);
    return select(0.0, f * inv, (d2 > 0.0) & (d2 < law.r_max_sq)) * d;
}

// acc plus the terms of slots [first, end), in slot order: each offset is the slot's
// coordinates minus `reference` (record_high form), in units of `unit` world units.
fn add_run(acc_in: vec3f, first: u32, end: u32, reference: vec3u, unit: vec3f, row: u32,
           law: Law) -> vec3f {
    var acc = acc_in;
    var n = first;
    for (; n + 3u < end; n += 4u) {
        let r0 = gathered_half[n];
        let r1 = gathered_half[n + 1u];
        let r2 = gathered_half[n + 2u];
        let r3 = gathered_half[n + 3u];
        acc += term(flat(vec3f(bitcast<vec3i>(record_high(r0) - reference)) * unit),
                    attraction[row + (r0.y >> 16u)], law);
        acc += term(flat(vec3f(bitcast<vec3i>(record_high(r1) - reference)) * unit),
                    attraction[row + (r1.y >> 16u)], law);
        acc += term(flat(vec3f(bitcast<vec3i>(record_high(r2) - reference)) * unit),
                    attraction[row + (r2.y >> 16u)], law);
        acc += term(flat(vec3f(bitcast<vec3i>(record_high(r3) - reference)) * unit),
                    attraction[row + (r3.y >> 16u)], law);
    }
    for (; n < end; n++) {
        let record = gathered_half[n];
        acc += term(flat(vec3f(bitcast<vec3i>(record_high(record) - reference)) * unit),
                    attraction[row + (record.y >> 16u)], law);
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
    let i = cell_particles[k];
    let me = particles_in[i];
    let home = vec3i(cell_coords(me.position.xyz, params));
    let own = record_high(gathered_half[k]);
    let row = u32(me.position.w) * params.species;
    let r_max = params.r_max;
    let beta = params.beta;
    let law = Law(1.0 / (beta * r_max), 2.0 / ((1.0 - beta) * r_max),
                  (1.0 + beta) / (1.0 - beta), beta * r_max, r_max * r_max);
    let unit = params.cell_size.xyz / f32(1u << (FRACTION_BITS + 16u));   // a power of 2 apart
    // one box per axis in record_high units (modulo 2^32, as the coordinates wrap)
    let box_units = params.grid.xyz << vec3u(FRACTION_BITS + 16u);
    let grid = vec3i(params.grid.xyz);
    let reach = select(1, 0, DIMS == 2u);
    let rows = home.x >= 1 && home.x + 1 < grid.x;    // dx = -1..1 not across the edge in x
    var acc = vec3f(0.0);
    for (var dz = -reach; dz <= reach; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            let yz = home.yz + vec2i(dy, dz);
            // -1 below the box, +1 past it: such a cell's coordinates are a box too high (low)
            let boxes_yz = select(vec2i(0), vec2i(-1), yz < vec2i(0))
                         + select(vec2i(0), vec2i(1), yz >= grid.yz);
            let reference_yz = own.yz - bitcast<vec2u>(boxes_yz) * box_units.yz;
            let wrapped = vec2u(yz - boxes_yz * grid.yz);
            let row_first = (wrapped.y * params.grid.y + wrapped.x) * params.grid.x;
            if (rows) {
                let left = row_first + u32(home.x) - 1u;
                acc = add_run(acc, cell_start[left], run_end(left + 2u),
                              vec3u(own.x, reference_yz), unit, row, law);
            } else {
                for (var dx = -1; dx <= 1; dx++) {
                    let cx = home.x + dx;
                    let boxes_x = select(0, -1, cx < 0) + select(0, 1, cx >= grid.x);
                    let cell = row_first + u32(cx - boxes_x * grid.x);
                    let reference = vec3u(own.x - bitcast<u32>(boxes_x) * box_units.x,
                                          reference_yz);
                    acc = add_run(acc, cell_start[cell], run_end(cell), reference, unit, row,
                                  law);
                }
            }
        }
    }
    acc = flat(acc) * (r_max * params.force);
    let dst = select(i, k, params.reorder == 1u);
    particles_out[dst] = pl_integrate(particles_in[i], acc, params);
    ids_out[dst] = ids_in[i];
}
