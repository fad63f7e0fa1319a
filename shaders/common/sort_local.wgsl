// common/sort_local.wgsl  --  passes `<owner>:sort:local` and `<owner>:sort:merge<k>` (shared)
//
// The in-tile stages of the bitonic sort of (key, value) u32 pairs that runtime/blocks/sort.py drives,
// ordered by (key, value) so the result does not depend on timing. Each workgroup owns one tile
// of 1024 positions; the pairs of the tile at positions >= count are padding (0xFFFFFFFF,
// 0xFFFFFFFF), held here but never read from or written to memory. (A real pair equal to the
// padding is indistinguishable from it, so which of them lands inside count does not matter.)
//   `local`:    block sizes k = 2 ... k_last (<= 1024), the classic network (a block runs
//               descending when position & k != 0), which leaves every tile ascending;
//   `merge<k>`: the stages j = 512 ... 1 of one block size k > 1024, after common/sort_global.wgsl
//               ran the larger distances; all ascending (position & k == 0 inside a tile).
// Barriers are the cost on software rasterisers (lavapipe), so each invocation holds 16 pairs in
// registers: the ones whose tile position varies only in bits [low, low + 4). Every stage whose
// compare distance is one of those bits runs without touching workgroup memory; only when the next
// distance leaves the window do the pairs go through workgroup memory (one barrier) to the next
// window. The first window reads the tile from memory, the last writes it back.
//
// Workgroup size 64; dispatch ceil(n / 1024) workgroups, folded into (x, y) past the per-dimension
// limit (tile = y * nx + x).
// Bindings (group 0): 0 params (uniform SortParams), 1 keys (rw, n words), 2 values (rw, n words),
//   3 counts (read; segment s sorts min(n, counts[count_word + s count_stride]) pairs)
// Segments: the positions may hold several independent sorts of n each (n a power of two >=
// 1024, so no tile and no compare straddles two), each with its own count; one segment when the
// dispatch covers only [0, n).

//! include common/dispatch.wgsl

struct SortParams {
    n: u32,           // capacity of one segment: segment s holds positions [s n, s n + n)
    count_word: u32,  // index into counts of the number of pairs to sort
    k: u32,           // first bitonic block size of this dispatch
    j: u32,           // compare distance (global stages only)
    k_last: u32,      // last block size of this dispatch (local stages only)
    count_stride: u32,   // words between the count words of consecutive segments
};

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> values: array<u32>;
@group(0) @binding(3) var<storage, read> counts: array<u32>;

const TILE: u32 = 1024u;
const TOP_BIT: u32 = 9u;      // log2(TILE / 2): the largest distance handled here
const HELD_BITS: u32 = 4u;    // an invocation holds 2^4 = 16 pairs
const PAD: u32 = 0xFFFFFFFFu;

var<workgroup> tile_keys: array<u32, 1024>;
var<workgroup> tile_values: array<u32, 1024>;
var<private> held_keys: array<u32, 16>;
var<private> held_values: array<u32, 16>;

// Tile position of held pair m when this invocation holds position bits [low, low + 4).
fn position(lid: u32, low: u32, m: u32) -> u32 {
    let below = lid & ((1u << low) - 1u);
    return ((lid >> low) << (low + HELD_BITS)) | (m << low) | below;
}

fn load_window(lid: u32, low: u32, from_memory: bool, base: u32, live: u32) {
    for (var m = 0u; m < 16u; m++) {
        let p = position(lid, low, m);
        if (from_memory) {
            let inside = p < live;
            held_keys[m] = select(PAD, keys[base + min(p, live - 1u)], inside);
            held_values[m] = select(PAD, values[base + min(p, live - 1u)], inside);
        } else {
            held_keys[m] = tile_keys[p];
            held_values[m] = tile_values[p];
        }
    }
}

fn store_window(lid: u32, low: u32, to_memory: bool, base: u32, live: u32) {
    for (var m = 0u; m < 16u; m++) {
        let p = position(lid, low, m);
        if (to_memory) {
            if (p < live) {
                keys[base + p] = held_keys[m];
                values[base + p] = held_values[m];
            }
        } else {
            tile_keys[p] = held_keys[m];
            tile_values[p] = held_values[m];
        }
    }
}

// One compare-exchange stage on the held pairs: distance 2^(low + q), blocks of size k.
fn stage(lid: u32, low: u32, q: u32, k: u32) {
    // q is spelled out as a constant per case so the held arrays are indexed statically.
    switch q {
        case 0u: { stage_at(lid, low, 0u, k); }
        case 1u: { stage_at(lid, low, 1u, k); }
        case 2u: { stage_at(lid, low, 2u, k); }
        default: { stage_at(lid, low, 3u, k); }
    }
}

fn stage_at(lid: u32, low: u32, q: u32, k: u32) {
    for (var pair = 0u; pair < 8u; pair++) {
        let a = ((pair >> q) << (q + 1u)) | (pair & ((1u << q) - 1u));
        let b = a | (1u << q);
        let descending = (position(lid, low, a) & k) != 0u;
        let ka = held_keys[a];
        let kb = held_keys[b];
        let va = held_values[a];
        let vb = held_values[b];
        let a_after_b = ka > kb || (ka == kb && va > vb);
        let swap = a_after_b != descending;
        held_keys[a] = select(ka, kb, swap);
        held_keys[b] = select(kb, ka, swap);
        held_values[a] = select(va, vb, swap);
        held_values[b] = select(vb, va, swap);
    }
}

// The largest distance bit of block size k that runs in a tile.
fn top_bit(k: u32) -> u32 {
    return min(firstTrailingBit(k) - 1u, TOP_BIT);
}

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let at = (folded_workgroup(wid, groups)) * TILE;    // the tile's first position
    let segment = at / params.n;
    let count = min(params.n, counts[params.count_word + segment * params.count_stride]);
    let local_base = at - segment * params.n;
    // Workgroup-uniform (read-only storage and the workgroup id), so the barriers stay legal.
    if (local_base >= count) { return; }
    let live = min(TILE, count - local_base);   // real pairs in this tile
    let base = at;
    var k = params.k;
    var bit = top_bit(k);                 // the next stage: block size k, distance 2^bit
    var first = true;
    loop {
        let low = select(0u, bit - (HELD_BITS - 1u), bit >= HELD_BITS - 1u);
        load_window(lid, low, first, base, live);
        first = false;
        loop {   // every following stage whose distance stays inside the window
            stage(lid, low, bit - low, k);
            if (bit > 0u) {
                bit -= 1u;
            } else {
                k <<= 1u;
                bit = top_bit(k);
            }
            if (k > params.k_last || bit < low || bit >= low + HELD_BITS) { break; }
        }
        let done = k > params.k_last;
        store_window(lid, low, done, base, live);
        if (done) { break; }
        workgroupBarrier();
    }
}
