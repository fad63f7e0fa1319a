// common/sort_local.wgsl  --  passes `<owner>:sort:local` and `<owner>:sort:merge<k>` (shared)
//
// The workgroup-memory half of a bitonic sort of (key, value) u32 pairs, ascending by key, in
// place (runtime/sort.py drives it). The network is the "flip" form: every compare-exchange puts
// the smaller key at the lower index, the first stage of a block of size k pairs i with
// i ^ (k - 1) and the later stages pair i with i + j. Positions >= count act as +infinity that
// never moves, so a comparison whose upper index is >= count is simply skipped and those
// positions are neither read nor written.
// Each workgroup loads one tile of 1024 pairs into workgroup memory and runs, for every block size
// k from params.k to params.k_last (powers of two), the stages j = min(k / 2, 512) ... 1:
//   `local`:    k = 2 ... min(1024, padded n): sorts each tile on its own;
//   `merge<k>`: k = k_last = that k (> 1024): the tail of block size k whose distances fit in a
//               tile, after the global stages (common/sort_global.wgsl) did the larger ones.
//
// Workgroup size 256 (2 pairs per invocation per stage); dispatch ceil(n / 1024) workgroups, folded
// into (x, y) past the per-dimension limit (tile = y * nx + x).
// Bindings (group 0): 0 params (uniform SortParams), 1 keys (rw, n words), 2 values (rw, n words),
//   3 counts (read; count = min(n, counts[params.count_word]))

struct SortParams {
    n: u32,           // capacity: keys and values hold n words
    count_word: u32,  // index into counts of the number of pairs to sort
    k: u32,           // (first) bitonic block size of this dispatch
    j: u32,           // compare distance (global stages only)
    k_last: u32,      // last block size of this dispatch (local stages only)
};

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> values: array<u32>;
@group(0) @binding(3) var<storage, read> counts: array<u32>;

const TILE: u32 = 1024u;
const HALF: u32 = 512u;   // compare-exchanges per stage in one tile

var<workgroup> tile_keys: array<u32, 1024>;
var<workgroup> tile_values: array<u32, 1024>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let base = (wid.y * groups.x + wid.x) * TILE;
    let count = min(params.n, counts[params.count_word]);
    // Workgroup-uniform (read-only storage and the workgroup id), so the barriers below stay legal.
    if (base >= count) { return; }
    let live = min(TILE, count - base);   // pairs of this tile that take part
    for (var e = lid; e < live; e += 256u) {
        tile_keys[e] = keys[base + e];
        tile_values[e] = values[base + e];
    }
    workgroupBarrier();
    for (var k = params.k; k <= params.k_last; k <<= 1u) {
        for (var j = min(k >> 1u, HALF); j > 0u; j >>= 1u) {
            for (var p = lid; p < HALF; p += 256u) {
                // the p-th lower index of this stage: insert a 0 bit at position log2(j)
                let i = ((p & ~(j - 1u)) << 1u) | (p & (j - 1u));
                let partner = select(i + j, i ^ (k - 1u), j == k >> 1u);
                if (partner < live) {
                    let a = tile_keys[i];
                    let b = tile_keys[partner];
                    if (b < a) {
                        tile_keys[i] = b;
                        tile_keys[partner] = a;
                        let v = tile_values[i];
                        tile_values[i] = tile_values[partner];
                        tile_values[partner] = v;
                    }
                }
            }
            workgroupBarrier();
        }
    }
    for (var e = lid; e < live; e += 256u) {
        keys[base + e] = tile_keys[e];
        values[base + e] = tile_values[e];
    }
}
