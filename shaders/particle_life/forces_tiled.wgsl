// particle_life/forces_tiled.wgsl  --  pass `<entity>:particle_life:forces`
// (neighbours = "grid", grid_kernel = "cell_tiled")
//
// The sums of particle_life/forces.wgsl, organised by cell: CELL_LANES invocations (a subgroup
// on most GPUs) per home cell stage the particles of the 9 (2D) or 27 (3D) cells around it
// (wrapped) in workgroup memory, CHUNK at a time, and each sums, for one particle of the home
// cell, over the staged ones. A neighbour is read from device memory once per home cell instead
// of once per particle, and all lanes of a cell visit the same neighbour at the same time.
// The staged list runs through the cells in forces.wgsl's order (dz, dy, dx), and inside a
// cell in cell_particles order (ascending, from the order pass), so each particle adds the same
// terms in the same order as there: the results are equal bit for bit. Neighbour cells that are
// not across the box edge skip the minimum-image division (pair_accel_inside, same bits).
// A home cell with more than CELL_LANES particles is taken CELL_LANES at a time.
// Workgroup size 64 (CELLS = 2 cells); dispatch ceil(grid.w / CELLS) workgroups, folded into
// (x, y) past the limit.
// Bindings (group 0): 0 params (uniform PLParams), 1 particles_in (read), 2 particles_out (rw),
//   3 ids_in (read), 4 ids_out (rw), 5 matrix (read, species^2 f32), 6 cell_start (read),
//   7 cell_particles (read)

//! include common/dispatch.wgsl
//! include particle_life/grid_step_io.wgsl

// bindings 0-7 (params ... cell_particles): declared in particle_life/grid_step_io.wgsl

const WORKGROUP_SIZE: u32 = 64u;
const CELL_LANES: u32 = 32u;
const CELLS: u32 = WORKGROUP_SIZE / CELL_LANES;   // home cells per workgroup
const CHUNK: u32 = 64u;           // neighbours staged at once per cell (more is slower on the H200)
const MAX_RUNS: u32 = 27u;        // neighbour cells in 3D
const MAX_MATRIX: u32 = 256u;     // 16 species squared
const ACROSS_EDGE: u32 = 0x80000000u;   // flag bit on a slot or index (count <= 2^26)

var<workgroup> run_first: array<u32, CELLS * MAX_RUNS>;    // neighbour cells' first slots
var<workgroup> run_offset: array<u32, CELLS * (MAX_RUNS + 1u)>;   // where each begins in the list
var<workgroup> staged: array<vec4f, CELLS * CHUNK>;        // position xyz, species w
var<workgroup> staged_index: array<u32, CELLS * CHUNK>;    // particle index | ACROSS_EDGE
var<workgroup> attraction: array<f32, MAX_MATRIX>;
var<workgroup> list_length: array<u32, CELLS>;
var<workgroup> home_length: array<u32, CELLS>;
var<workgroup> longest_list: u32;
var<workgroup> longest_home: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let slot = lid / CELL_LANES;
    let lane = lid % CELL_LANES;
    let cell = folded_workgroup(wid, groups) * CELLS + slot;   // may be past the last cell
    let grid = vec3i(params.grid.xyz);
    let plane = params.grid.x * params.grid.y;
    let home = vec3i(vec3u(cell % params.grid.x, (cell % plane) / params.grid.x, cell / plane));
    // 9 cells in 2D, 27 in 3D; the buffer size joins the bound (see forces.wgsl on lavapipe)
    let runs = select(MAX_RUNS, 9u, (params.dims == 2u) | (arrayLength(&matrix) == 0u));
    let runs_of_slot = slot * MAX_RUNS;
    let offsets_of_slot = slot * (MAX_RUNS + 1u);
    if (lane < runs) {
        let dz = select(i32(lane / 9u) - 1, 0, runs == 9u);
        let d = vec3i(i32(lane % 3u) - 1, i32((lane / 3u) % 3u) - 1, dz);
        let moved = home + d;
        let across = any((moved < vec3i(0)) | (moved >= grid));
        var first = 0u;
        var end = 0u;
        if (cell < params.grid.w) {
            let c = cell_index(vec3u((moved + grid) % grid), params);
            first = cell_start[c];
            end = params.count;
            if (c + 1u < params.grid.w) { end = cell_start[c + 1u]; }
        }
        run_first[runs_of_slot + lane] = first | select(0u, ACROSS_EDGE, across);
        run_offset[offsets_of_slot + lane + 1u] = end - first;   // lengths; summed below
    }
    for (var s = lid; s < min(arrayLength(&matrix), MAX_MATRIX); s += WORKGROUP_SIZE) {
        attraction[s] = matrix[s];
    }
    workgroupBarrier();
    let home_run = runs / 2u;                   // the cell with d = 0
    if (lane == 0u) {
        run_offset[offsets_of_slot] = 0u;
        for (var r = 1u; r <= runs; r++) {
            run_offset[offsets_of_slot + r] += run_offset[offsets_of_slot + r - 1u];
        }
        list_length[slot] = run_offset[offsets_of_slot + runs];
        home_length[slot] = run_offset[offsets_of_slot + home_run + 1u]
                            - run_offset[offsets_of_slot + home_run];
    }
    workgroupBarrier();
    if (lid == 0u) {
        var longest = vec2u(0u);
        for (var c = 0u; c < CELLS; c++) {
            longest = max(longest, vec2u(list_length[c], home_length[c]));
        }
        longest_list = longest.x;
        longest_home = longest.y;
    }
    let rounds_total = workgroupUniformLoad(&longest_list);
    let rounds_home = workgroupUniformLoad(&longest_home);
    let total = list_length[slot];
    let home_count = home_length[slot];
    let staging = slot * CHUNK;

    for (var base = 0u; base < rounds_home; base += CELL_LANES) {
        let has_particle = base + lane < home_count;
        let k = (run_first[runs_of_slot + home_run] & ~ACROSS_EDGE) + base + lane;   // cell order
        var i = 0xffffffffu;
        var me: LifeParticle;
        if (has_particle) {
            i = cell_particles[k];
            me = particles_in[i];
        }
        let x = me.position.xyz;
        let row = u32(me.position.w) * params.species;
        var acc = vec3f(0.0);
        for (var first = 0u; first < rounds_total; first += CHUNK) {
            workgroupBarrier();                 // nobody reads the previous chunk any more
            for (var q = lane; q < CHUNK; q += CELL_LANES) {
                let g = first + q;
                if (g < total) {
                    var r = 0u;
                    while (run_offset[offsets_of_slot + r + 1u] <= g) { r++; }
                    let tagged = run_first[runs_of_slot + r];
                    let n = (tagged & ~ACROSS_EDGE) + (g - run_offset[offsets_of_slot + r]);
                    let j = cell_particles[n];
                    staged[staging + q] = particles_in[j].position;
                    staged_index[staging + q] = j | (tagged & ACROSS_EDGE);
                }
            }
            workgroupBarrier();
            if (has_particle && first < total) {
                let staged_count = min(CHUNK, total - first);
                for (var q = 0u; q < staged_count; q++) {
                    let tagged = staged_index[staging + q];
                    if ((tagged & ~ACROSS_EDGE) == i) { continue; }
                    let other = staged[staging + q];
                    let a = attraction[row + u32(other.w)];
                    if ((tagged & ACROSS_EDGE) != 0u) {
                        acc += pair_accel(x, other.xyz, a, params);
                    } else {
                        acc += pair_accel_inside(x, other.xyz, a, params);
                    }
                }
            }
        }
        if (has_particle) {
            acc *= params.r_max * params.force;
            let dst = select(i, k, params.reorder == 1u);
            particles_out[dst] = pl_integrate(me, acc, params);
            ids_out[dst] = ids_in[i];
        }
    }
}
