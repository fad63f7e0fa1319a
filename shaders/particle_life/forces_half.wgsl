// particle_life/forces_half.wgsl  --  pass `<entity>:particle_life:forces`
// (neighbours = "grid", grid_kernel = "gathered", precision = "half")
//
// The approximate variant of particle_life/forces_gathered.wgsl (an opt-in: it does not give
// the exact kernels' bits). Neighbours come from the 8-byte records of the order pass
// (sort_gather_half.wgsl, format in particle_life/half_positions.wgsl): each position relative
// to its cell's corner as 16-bit floats, so the neighbour loop reads half the bytes. A
// neighbour's offset is its relative position plus its cell's shift from the home cell (whole
// cells, f32) minus the particle's own relative position (its own record); the shift is
// taken before wrapping, so it is already the minimum image (boxes have >= 3 cells a side and
// cells are >= r_max). The law is seed 003's force law without divisions or branches
// (inverseSqrt and reciprocals of the parameters, taken once per invocation); terms accumulate
// in f32 in the exact kernels' order. Error per offset: <= 2 * cell_size * 2^-11 per axis (both
// ends rounded); coincident particles still give exactly zero.
// The three cells of a row are one run (as in forces_gathered.wgsl), each slot shifted by the
// cell it falls in; at the box edge in x the three cells are separate runs.
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

// The force law's parameters in the forms the loop multiplies by.
struct Law {
    beta: f32,
    inv_beta: f32,
    inv_fall: f32,        // 1 / (1 - beta)
    inv_r_max: f32,
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

// f(|d| / r_max, a) * d / |d| for 0 < |d| < r_max and `keep`, else zero; every lane evaluates
// the same instructions (the lanes of a subgroup rarely agree on near or far).
fn term(d: vec3f, a: f32, keep: bool, law: Law) -> vec3f {
    let d2 = dot(d, d);
    let inv = inverseSqrt(d2);          // inf at d2 = 0: not selected below
    let r = d2 * inv * law.inv_r_max;
    let f = select(a * (1.0 - abs(2.0 * r - 1.0 - law.beta) * law.inv_fall),
                   r * law.inv_beta - 1.0, r < law.beta);
    return select(vec3f(0.0), (f * inv) * d, keep & (d2 > 0.0) & (d2 < law.r_max_sq));
}

// acc plus the terms of slots [first, end) but `own`, in slot order. The slots before
// `middle` lie in the row's left cell, those before `right` in its middle cell, the rest in its
// right cell; base_x holds, per cell, its corner's x minus the particle's (relative to the home
// corner), base_yz the same in y and z for the whole row. A lone cell is a row with
// first = middle = right.
fn add_row(acc_in: vec3f, first: u32, middle: u32, right: u32, end: u32, own: u32,
           base_x: vec3f, base_yz: vec2f, row: u32, law: Law) -> vec3f {
    var acc = acc_in;
    for (var n = first; n < end; n++) {
        let record = gathered_half[n];
        let bx = select(select(base_x.z, base_x.y, n < right), base_x.x, n < middle);
        let d = flat(unpack_relative(record) + vec3f(bx, base_yz));
        acc += term(d, attraction[row + (record.y >> 16u)], n != own, law);
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
    let cs = params.cell_size.xyz;
    // the particle's own record, relative to its cell's corner: coincident particles then have
    // an offset of exactly zero (no term), as in the exact kernels
    let x = flat(unpack_relative(gathered_half[k]));
    let row = u32(me.position.w) * params.species;
    let law = Law(params.beta, 1.0 / params.beta, 1.0 / (1.0 - params.beta),
                  1.0 / params.r_max, params.r_max * params.r_max);
    let grid = vec3i(params.grid.xyz);
    let reach = select(1, 0, DIMS == 2u);
    let rows = home.x >= 1 && home.x + 1 < grid.x;    // dx = -1..1 not across the edge in x
    let base_x = vec3f(-cs.x, 0.0, cs.x) - x.x;
    var acc = vec3f(0.0);
    for (var dz = -reach; dz <= reach; dz++) {
        for (var dy = -1; dy <= 1; dy++) {
            let yz = home.yz + vec2i(dy, dz);
            let base_yz = vec2f(f32(dy), f32(dz)) * cs.yz - x.yz;
            let wrapped = vec2u((yz + grid.yz) % grid.yz);
            let row_first = (wrapped.y * params.grid.y + wrapped.x) * params.grid.x;
            if (rows) {
                let left = row_first + u32(home.x) - 1u;
                acc = add_row(acc, cell_start[left], cell_start[left + 1u],
                              cell_start[left + 2u], run_end(left + 2u), k, base_x, base_yz,
                              row, law);
            } else {
                for (var dx = -1; dx <= 1; dx++) {
                    let cell = row_first + u32((home.x + dx + grid.x) % grid.x);
                    let first = cell_start[cell];
                    acc = add_row(acc, first, first, first, run_end(cell), k,
                                  vec3f(base_x[dx + 1]), base_yz, row, law);
                }
            }
        }
    }
    acc *= params.r_max * params.force;
    let dst = select(i, k, params.reorder == 1u);
    particles_out[dst] = pl_integrate(particles_in[i], acc, params);
    ids_out[dst] = ids_in[i];
}
