// common/sort_global.wgsl  --  pass `<owner>:sort:k<k>:j<j>` (shared by every system)
//
// Global stages of the bitonic sort that runtime/blocks/sort.py drives, for one block size k > 1024:
// the distances j, j/2, ... (STAGES of them, all >= 1024; smaller ones run in
// common/sort_local.wgsl). The network here is the "flip" form: the first stage of a block
// (j == k / 2) pairs position i with i ^ (k - 1), later stages pair i with i + j, and the smaller
// pair always goes to the smaller position, so positions >= count act as padding
// (0xFFFFFFFF, 0xFFFFFFFF) that is held in registers but never read or written. Pairs are ordered
// by (key, value).
// Each invocation holds the 2^STAGES positions that these stages connect: its smallest position
// with any combination of the stage vectors (k - 1 or j, then j/2, j/4, ...) xor-ed in, so all
// STAGES stages run in registers and memory is read and written once per dispatch.
//
// Override STAGES (1 ... 4). Workgroup size 64; dispatch one invocation per group of 2^STAGES
// positions whose smallest position is < n, in workgroups folded into (x, y) past the
// per-dimension limit (invocation = (y * nx + x) * 64 + local index).
// Bindings (group 0): 0 params (uniform SortParams), 1 keys (rw, n words), 2 values (rw, n words),
//   3 counts (read; segment s sorts min(n, counts[count_word + s count_stride]) pairs)
// Segments: the positions may hold several independent sorts of n each (n a power of two >=
// 1024, so no tile and no compare straddles two), each with its own count; one segment when the
// dispatch covers only [0, n).

//! include common/dispatch.wgsl

struct SortParams {
    n: u32,           // capacity of one segment: segment s holds positions [s n, s n + n)
    count_word: u32,  // index into counts of the number of pairs to sort
    k: u32,           // (first) bitonic block size of this dispatch
    j: u32,           // first compare distance (global stages only)
    k_last: u32,      // last block size of this dispatch (local stages only)
    count_stride: u32,   // words between the count words of consecutive segments
};

@group(0) @binding(0) var<uniform> params: SortParams;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> values: array<u32>;
@group(0) @binding(3) var<storage, read> counts: array<u32>;

override STAGES: u32 = 1u;
const PAD: u32 = 0xFFFFFFFFu;

var<private> held_keys: array<u32, 16>;
var<private> held_values: array<u32, 16>;
var<private> held_at: array<u32, 16>;   // the position each held pair came from

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let invocation = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    let j = params.j;
    let low = firstTrailingBit(j) + 1u - STAGES;   // the smallest distance is 2^low
    // smallest held position: the invocation index with STAGES zero bits inserted at bit low
    let first_at = ((invocation >> low) << (low + STAGES)) | (invocation & ((1u << low) - 1u));
    // every held position lies in the segment of the first (the stage vectors are < n)
    let segment = first_at / params.n;
    let base = segment * params.n;
    let count = min(params.n, counts[params.count_word + segment * params.count_stride]);
    let first = first_at - base;   // positions below are within the segment
    if (first >= count) { return; }
    let first_vector = select(j, params.k - 1u, j == params.k >> 1u);
    let held = 1u << STAGES;
    for (var m = 0u; m < held; m++) {
        var at = first ^ select(0u, first_vector, (m & 1u) != 0u);
        for (var s = 1u; s < STAGES; s++) {
            at ^= select(0u, j >> s, ((m >> s) & 1u) != 0u);
        }
        held_at[m] = at;
        let inside = at < count;
        held_keys[m] = select(PAD, keys[base + min(at, count - 1u)], inside);
        held_values[m] = select(PAD, values[base + min(at, count - 1u)], inside);
    }
    for (var s = 0u; s < STAGES; s++) {
        for (var pair = 0u; pair < held / 2u; pair++) {
            let a = ((pair >> s) << (s + 1u)) | (pair & ((1u << s) - 1u));
            let b = a | (1u << s);
            let ka = held_keys[a];
            let kb = held_keys[b];
            let va = held_values[a];
            let vb = held_values[b];
            let a_after_b = ka > kb || (ka == kb && va > vb);
            // the smaller pair belongs at the smaller position
            let swap = a_after_b == (held_at[a] < held_at[b]);
            held_keys[a] = select(ka, kb, swap);
            held_keys[b] = select(kb, ka, swap);
            held_values[a] = select(va, vb, swap);
            held_values[b] = select(vb, va, swap);
        }
    }
    for (var m = 0u; m < held; m++) {
        let at = held_at[m];
        if (at < count) {
            keys[base + at] = held_keys[m];
            values[base + at] = held_values[m];
        }
    }
}
