// common/scan_add.wgsl  --  pass `<owner>:scan:add<level>` (shared by every system)
//
// Second half of the prefix sum (see common/scan_tiles.wgsl): after the tile sums of this level
// have themselves been scanned, add tile t's offset to every value of tile t.
//
// Workgroup size 256 (4 values per invocation); dispatch ceil(n / 1024) workgroups, folded into
// (x, y) past the per-dimension limit (tile = y * nx + x).
// Bindings (group 0): 0 params (uniform ScanParams), 1 values (rw, n words), 2 tile_offsets (read)

//! include common/dispatch.wgsl

struct ScanParams {
    n: u32,   // values at this level
};

@group(0) @binding(0) var<uniform> params: ScanParams;
@group(0) @binding(1) var<storage, read_write> values: array<u32>;
@group(0) @binding(2) var<storage, read> tile_offsets: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let tile = folded_workgroup(wid, groups);
    let first = tile * 1024u + lid * 4u;
    if (first >= params.n) { return; }
    let offset = tile_offsets[tile];
    for (var k = 0u; k < 4u; k++) {
        if (first + k < params.n) { values[first + k] += offset; }
    }
}
