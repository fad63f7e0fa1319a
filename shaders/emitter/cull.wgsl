// emitter/cull.wgsl  --  pass `<batch>:emitter:cull` (RENDER phase; batches whose alive list
// reaches systems/emitter/culling.py's CULL_FROM entries)
//
// Marks the alive-list entries whose sprite the rasteriser would shade. A sprite is dropped only
// when no pixel centre of the target can lie in it: the rasteriser would shade nothing of it
// either, so the image stays byte-identical while the draw launches fewer instances. (Where few
// units can run the graphics pipeline, as on the H200, launching a sprite's six vertices is the
// draw's cost whether or not the sprite covers a pixel.)
// The test: the four corners' clip positions come from emitter/billboard.wgsl's billboard(), the
// draw's own code. If all four have w > 0 and are finite, and their window-space bounding box,
// grown by SNAP_MARGIN pixels, holds no pixel centre (i + 0.5, j + 0.5) of the viewport, the
// entry is culled. The margin covers the rasteriser snapping vertices to its sub-pixel grid
// (Vulkan guarantees at least 4 bits: at most 1/32 pixel of error) and, with RELATIVE_MARGIN,
// rounding in the viewport transform. Everything else is kept: sprites crossing the camera plane, non-finite positions.
// The box bounds the quad's pixels even where clipping cuts it, since clipping only removes area.
//
// Writes one bit per entry (drawn_mask: BLOCK_WORDS words per BLOCK entries) and each block's
// count of set bits (drawn_block), which a PrefixScan turns into offsets for
// emitter/cull_compact.wgsl.
//
// Workgroup size BLOCK; dispatch one workgroup per BLOCK entries of the batch's alive list,
// folded into (x, y) past the per-dimension limit (excess workgroups return at once).
// Bindings (group 0): as emitter/billboard.wgsl (0 frame, 1 emitters, 2 particles, 3 alive_list,
// 4 looks, 5 sprite_looks, 6 sprite_texture, 7 sprite_sampler, 9 list_owner), and
// 10 alive_totals (read: word 0 of each emitter's record is its alive count),
// 11 drawn_mask (rw), 12 drawn_block (rw).

//! include common/dispatch.wgsl
//! include emitter/billboard.wgsl

@group(0) @binding(10) var<storage, read> alive_totals: array<u32>;
@group(0) @binding(11) var<storage, read_write> drawn_mask: array<u32>;
@group(0) @binding(12) var<storage, read_write> drawn_block: array<u32>;

// pixels: Vulkan's worst sub-pixel snapping error (4 bits, to the nearest 1/16 pixel: 1/32), and
// 1/1024 so that a centre snapped exactly onto an edge is still counted
const SNAP_MARGIN: f32 = 1.0 / 32.0 + 1.0 / 1024.0;
const RELATIVE_MARGIN: f32 = 1.0 / 65536.0;  // of a coordinate's size: float rounding far out

var<workgroup> block_bits: array<atomic<u32>, BLOCK_WORDS>;

// Whether some pixel centre k + 0.5 (0 <= k < extent) lies in [low, high] grown by the margins.
// Comparisons with NaN are false, so a non-finite bound keeps the sprite.
fn holds_centre(low: f32, high: f32, extent: f32) -> bool {
    let grow = SNAP_MARGIN + RELATIVE_MARGIN * max(abs(low), abs(high));
    let first = max(ceil(low - grow - 0.5), 0.0);
    let last = min(floor(high + grow - 0.5), extent - 1.0);
    return !(first > last);
}

// Whether the draw would shade any pixel of entry `entry` (particle `slot` of emitter `owner`).
fn shaded(owner: u32, slot: u32) -> bool {
    var low = vec2f(3.0e38);
    var high = vec2f(-3.0e38);
    var ahead = true;
    for (var corner = 0u; corner < 4u; corner++) {
        // sprite_corner's vertices 0, 1, 2 and 5 are the quad's four corners
        let clip = billboard(owner, slot, select(corner, 5u, corner == 3u)).clip;
        ahead = ahead && clip.w > 0.0;
        let ndc = clip.xy / clip.w;
        let window = vec2f((ndc.x + 1.0) * 0.5, (1.0 - ndc.y) * 0.5) * frame.viewport;
        low = min(low, window);
        high = max(high, window);
    }
    // min/max may drop a NaN: recheck the corners' sum, which a NaN anywhere poisons
    let finite = abs(low.x + low.y + high.x + high.y) < 3.0e38;
    if (!ahead || !finite) { return true; }
    return holds_centre(low.x, high.x, frame.viewport.x)
        && holds_centre(low.y, high.y, frame.viewport.y);
}

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let block = folded_workgroup(wid, groups);
    let in_list = block < arrayLength(&list_owner);
    if (lid < BLOCK_WORDS) { atomicStore(&block_bits[lid], 0u); }
    workgroupBarrier();
    if (in_list) {
        let owner = list_owner[block];
        let entry = block * BLOCK + lid;
        let local = entry - emitters[owner].alive_base;
        if (local < alive_totals[owner * RECORD_WORDS] && shaded(owner, alive_list[entry])) {
            atomicOr(&block_bits[lid / 32u], 1u << (lid % 32u));
        }
    }
    workgroupBarrier();
    if (!in_list) { return; }
    if (lid < BLOCK_WORDS) {
        drawn_mask[block * BLOCK_WORDS + lid] = atomicLoad(&block_bits[lid]);
    }
    if (lid == 0u) {
        var count = 0u;
        for (var w = 0u; w < BLOCK_WORDS; w++) { count += countOneBits(atomicLoad(&block_bits[w])); }
        drawn_block[block] = count;
    }
}
