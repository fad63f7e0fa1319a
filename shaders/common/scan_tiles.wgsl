// common/scan_tiles.wgsl  --  pass `<owner>:scan:tiles<level>` (shared by every system)
//
// First half of an exclusive prefix sum of u32 values of any length, in place: each workgroup
// scans one tile of 1024 values (256 invocations x 4 consecutive values; the 256 per-invocation
// sums are scanned in workgroup memory, Hillis-Steele) and writes the tile's total to
// tile_sums[tile]. When there is more than one tile, the tile sums are scanned the same way (the
// next level) and common/scan_add.wgsl adds each tile's offset back. A one-tile level's tile_sums[0]
// is the grand total.
//
// Workgroup size 256; dispatch ceil(n / 1024) workgroups, folded into (x, y) past the per-dimension
// limit (tile = y * nx + x).
// Bindings (group 0): 0 params (uniform ScanParams), 1 values (rw, n words), 2 tile_sums (rw)

//! include common/dispatch.wgsl

struct ScanParams {
    n: u32,   // values at this level
};

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read_write> values: array<u32>;
@group(0) @binding(2) var<storage, read_write> tile_sums: array<u32>;

const PER_INVOCATION: u32 = 4u;
const TILE: u32 = 1024u;

var<workgroup> sums: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let tile = folded_workgroup(wid, groups);
    let first = tile * TILE + lid * PER_INVOCATION;
    var own: array<u32, 4>;
    var total = 0u;
    for (var k = 0u; k < PER_INVOCATION; k++) {
        let i = first + k;
        own[k] = select(0u, values[min(i, params.n - 1u)], i < params.n);
        total += own[k];
    }
    sums[lid] = total;
    workgroupBarrier();
    for (var offset = 1u; offset < 256u; offset <<= 1u) {
        var add = 0u;
        if (lid >= offset) { add = sums[lid - offset]; }
        workgroupBarrier();
        sums[lid] += add;
        workgroupBarrier();
    }
    var running = sums[lid] - total;    // exclusive prefix of this invocation's first value
    for (var k = 0u; k < PER_INVOCATION; k++) {
        let i = first + k;
        if (i < params.n) { values[i] = running; }
        running += own[k];
    }
    if (lid == 255u && tile * TILE < params.n) { tile_sums[tile] = sums[255]; }
}
