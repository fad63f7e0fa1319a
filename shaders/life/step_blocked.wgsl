// life/step_blocked.wgsl  --  pass `<entity>:life:block<k>` (memory = "pingpong")
//
// GENS generations per dispatch, from state_in to state_out, computed in workgroup memory
// (temporal blocking). A workgroup owns TILE_W words x TILE_H rows of output and loads them with a
// halo of two words on each side and GENS rows above and below. Each generation is
// computed over the whole loaded region; values near the region's edge go wrong (their outer
// neighbours are missing), but wrongness spreads only one cell or row per generation, so after
// GENS <= 31 generations the tile itself is still exact. (Two words on each side because a row's
// last word may hold as little as one cell; of two neighbouring words one is whole when the row
// has two or more words. Rows of a single ragged word on a torus use life/step.wgsl instead.)
// The state is read once and written once per GENS generations. Used only where verified exact
// on both lavapipe and the H200 (systems/life.py: dead edges, opt-in).
// Workgroup size 256; dispatch one workgroup per tile, tiles_x * tiles_y folded into (x, y) past
// the per-dimension limit (tile = y * nx + x; ceil(stride / TILE_W) tiles per row of tiles).
// Bindings (group 0): 0 params (uniform LifeParams), 1 state_in (read), 2 state_out (rw)

//! include life/swar.wgsl

const GENS: u32 = 8u;
const TILE_W: u32 = 32u;                    // words
const TILE_H: u32 = 64u;                    // rows
const HALO_LEFT: u32 = 2u;                  // words on each side
const REGION_W: u32 = 36u;                  // TILE_W + 2 * HALO_LEFT
const REGION_H: u32 = 80u;                  // TILE_H + 2 * GENS
const REGION: u32 = 2880u;                  // REGION_W * REGION_H

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read> state_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> state_out: array<u32>;

var<workgroup> region: array<u32, 5760>;   // two generations of the region, REGION words each

struct Place {
    word: u32,    // word column in the grid (wrapped on a torus)
    row: u32,     // row in the grid (wrapped on a torus)
    inside: bool, // false past a dead edge: such words stay 0
};

fn place(tile_x: u32, tile_y: u32, c: u32, r: u32) -> Place {
    let stride = i32(params.stride);
    let h = i32(params.height);
    let w = i32(tile_x * TILE_W + c) - i32(HALO_LEFT);
    let y = i32(tile_y * TILE_H + r) - i32(GENS);
    var out: Place;
    if (params.torus == 1u) {
        out.word = u32(((w % stride) + stride) % stride);
        out.row = u32(((y % h) + h) % h);
        out.inside = true;
    } else {
        out.inside = w >= 0 && w < stride && y >= 0 && y < h;
        out.word = u32(clamp(w, 0, stride - 1));
        out.row = u32(clamp(y, 0, h - 1));
    }
    return out;
}

// One generation of the region word at (c, r), reading the half of `region` that starts at src.
fn evolve(src: u32, tile_x: u32, tile_y: u32, c: u32, r: u32) -> u32 {
    let at = place(tile_x, tile_y, c, r);
    if (!at.inside) { return 0u; }
    // Past the region's edge the neighbours count as dead (not as a copy of the edge word): on a
    // ragged torus row, make_row shifts `left` by fewer than 31 bits, and a whole copied word would
    // then spread wrong cells across a word in one generation instead of one cell.
    let cl = select(c - 1u, 0u, c == 0u);
    let cr = min(c + 1u, REGION_W - 1u);
    let has_left = c > 0u;
    let has_right = c + 1u < REGION_W;
    let up_row = src + select(r - 1u, 0u, r == 0u) * REGION_W;
    let mid_row = src + r * REGION_W;
    let down_row = src + min(r + 1u, REGION_H - 1u) * REGION_W;
    let width = params.width;
    let torus = params.torus == 1u;
    let up = make_row(region[up_row + c], select(0u, region[up_row + cl], has_left),
                      select(0u, region[up_row + cr], has_right), at.word, width, torus);
    let mid = make_row(region[mid_row + c], select(0u, region[mid_row + cl], has_left),
                       select(0u, region[mid_row + cr], has_right), at.word, width, torus);
    let down = make_row(region[down_row + c], select(0u, region[down_row + cl], has_left),
                        select(0u, region[down_row + cr], has_right), at.word, width, torus);
    return next_word(up, mid, down) & word_mask(at.word, params);
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let tile = wid.y * groups.x + wid.x;
    let tiles_x = (params.stride + TILE_W - 1u) / TILE_W;
    let tiles_y = (params.height + TILE_H - 1u) / TILE_H;
    let working = tile < tiles_x * tiles_y;   // barriers below need every invocation
    let tile_x = tile % tiles_x;
    let tile_y = tile / tiles_x;

    if (working) {
        for (var k = lid; k < REGION; k += 256u) {
            let at = place(tile_x, tile_y, k % REGION_W, k / REGION_W);
            region[k] = select(0u, state_in[at.row * params.stride + at.word], at.inside);
        }
    }
    workgroupBarrier();
    for (var g = 0u; g < GENS; g++) {
        let src = (g % 2u) * REGION;
        let dst = REGION - src;
        if (working) {
            for (var k = lid; k < REGION; k += 256u) {
                region[dst + k] = evolve(src, tile_x, tile_y, k % REGION_W, k / REGION_W);
            }
        }
        workgroupBarrier();
    }
    if (!working) { return; }
    // GENS is even, so the result is back in the first half; write the tile itself
    for (var k = lid; k < TILE_W * TILE_H; k += 256u) {
        let c = k % TILE_W + HALO_LEFT;
        let r = k / TILE_W + GENS;
        let word = tile_x * TILE_W + c - HALO_LEFT;
        let row = tile_y * TILE_H + r - GENS;
        if (word < params.stride && row < params.height) {
            state_out[row * params.stride + word] = region[r * REGION_W + c];
        }
    }
}
