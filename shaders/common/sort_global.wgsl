// common/sort_global.wgsl  --  pass `<owner>:sort:k<k>:j<j>` (shared by every system)
//
// One global stage of the bitonic sort (see common/sort_local.wgsl for the network): block size k,
// compare distance j >= 1024 (smaller distances run in workgroup memory). Invocation p handles
// the p-th compare-exchange: lower index i (p with a 0 bit inserted at log2(j)), upper index
// i ^ (k - 1) on the first stage of a block (j == k / 2), else i + j; the smaller key goes to i.
// Pairs whose upper index is >= count are skipped: those positions are +infinity padding.
//
// Workgroup size 256 (one compare-exchange each); dispatch ceil(pairs / 256) workgroups, where
// pairs counts the compare-exchanges with i < n, folded into (x, y) past the per-dimension limit
// (p = (y * nx + x) * 256 + local index).
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

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let p = (wid.y * groups.x + wid.x) * 256u + lid;
    let k = params.k;
    let j = params.j;
    let i = ((p & ~(j - 1u)) << 1u) | (p & (j - 1u));
    let partner = select(i + j, i ^ (k - 1u), j == k >> 1u);
    if (partner >= min(params.n, counts[params.count_word])) { return; }
    let a = keys[i];
    let b = keys[partner];
    if (b < a) {
        keys[i] = b;
        keys[partner] = a;
        let v = values[i];
        values[i] = values[partner];
        values[partner] = v;
    }
}
