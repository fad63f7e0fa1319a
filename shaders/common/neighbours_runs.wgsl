// common/neighbours_runs.wgsl: a cell's run of point indices in cell_particles and the two ways
// a workgroup sorts it, shared by the order passes of a neighbour grid
// (common/neighbours_sort.wgsl, common/neighbours_order.wgsl, and a family's own order shader
// such as particle_life/sort_gather_half.wgsl; no pass of its own): a run of up to CAPACITY
// indices is loaded into workgroup memory and each index goes to its rank (the number of smaller
// indices in the run; indices are distinct); a longer one is sorted in place by a bitonic
// network. Sorting each run by index makes the order inside a cell independent of the
// scheduling order in which the assign pass handed out slots.
// Bindings (group 0) of every pass including it: 0 grid (read: GridParams), 1 cell_start (read,
// exclusive scan of the cell counts, grid.w + 1 entries), 2 cell_particles (rw).

//! include common/neighbours.wgsl

@group(0) @binding(0) var<storage, read> grid: GridParams;
@group(0) @binding(1) var<storage, read> cell_start: array<u32>;
@group(0) @binding(2) var<storage, read_write> cell_particles: array<u32>;

// Runs up to this long are ranked in workgroup memory (about 13 times the ~20 particles of a
// usual cell; clusters take the bitonic network). Per invocation the rank loop then runs at most
// CAPACITY^2 / lanes iterations (2048 with 32 lanes), far under llvmpipe's silent
// 65535-iteration loop cap. Why not more: the workgroup memory a pass declares costs on every
// workgroup (one per cell), and on the H200 at 1M particles the order pass took 0.101 ms with
// 1024 words against 0.047 ms with 256 or 64.
const CAPACITY: u32 = 256u;

var<workgroup> run: array<u32, CAPACITY>;
var<workgroup> run_length: u32;

// [first, end) of cell `cell` in cell_particles (cell_start is the exclusive scan of the counts,
// with one entry past the last cell: where the dead points' run starts). An end below the start
// (a cell_start without that entry reads 0 there) gives an empty run rather than one of 2^32
// slots, whose sort would never end on a GPU.
fn cell_run(cell: u32) -> vec2u {
    let first = cell_start[cell];
    return vec2u(first, max(first, cell_start[cell + 1u]));
}

// end - first in every invocation of the workgroup (call it in uniform control flow).
fn uniform_length(first: u32, end: u32, lid: u32) -> u32 {
    if (lid == 0u) { run_length = end - first; }
    return workgroupUniformLoad(&run_length);
}

// Copies cell_particles[first, first + n) (n <= CAPACITY) into `run`, for rank_in_run; every
// invocation of the workgroup calls it.
fn load_run(first: u32, n: u32, lid: u32, lanes: u32) {
    for (var q = lid; q < n; q += lanes) { run[q] = cell_particles[first + q]; }
    workgroupBarrier();
}

// Where index v goes in its sorted run of n (loaded by load_run): the count of smaller indices.
fn rank_in_run(v: u32, n: u32) -> u32 {
    var rank = 0u;
    for (var t = 0u; t < n; t++) { rank += u32(run[t] < v); }
    return rank;
}

// Sorts cell_particles[first, first + n) ascending in place with all `lanes` invocations of the
// workgroup; every invocation calls it with the same first and n (n is workgroup-uniform). A
// bitonic network in its all-ascending form: for a width P, the next power of two >= n, there
// are log2(P) * (log2(P) + 1) / 2 steps of P / 2 compare-exchanges, and each comparator puts the
// smaller value at the lower slot, so the slots past n behave as +infinity and are never touched.
// Why not one invocation's insertion sort: llvmpipe (lavapipe) silently leaves any loop after
// 65535 iterations, and a crowded cell's insertion sort needs more (one shift per inversion).
// Here an invocation runs steps * P / (2 * lanes) compare-exchanges: 2112 for n = 2048, 32 lanes.
fn sort_run_by_workgroup(first: u32, n: u32, lid: u32, lanes: u32) {
    var width = 1u;
    while (width < n) { width <<= 1u; }
    let comparators = width >> 1u;
    for (var block = 2u; block <= width; block <<= 1u) {
        for (var span = block >> 1u; span > 0u; span >>= 1u) {
            for (var c = lid; c < comparators; c += lanes) {
                // the comparator's lower slot: c with a 0 bit inserted at span's bit
                let low = ((c & ~(span - 1u)) << 1u) | (c & (span - 1u));
                // the first step of a block compares mirror slots, the later ones slots span apart
                var high = low | span;
                if (span == block >> 1u) { high = low ^ (block - 1u); }
                if (high < n) {
                    let a = cell_particles[first + low];
                    let b = cell_particles[first + high];
                    if (a > b) {
                        cell_particles[first + low] = b;
                        cell_particles[first + high] = a;
                    }
                }
            }
            storageBarrier();
        }
    }
}
