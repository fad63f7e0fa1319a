// life/step_inplace.wgsl  --  pass `<entity>:life:step<k>` (memory = "inplace")
//
// One generation on a single state buffer. The workgroup loads its tile plus a one-word, one-row
// halo into workgroup memory, computes every word from there, writes interior words straight back
// (no other workgroup reads them in this dispatch) and border words to the staging buffer (other
// workgroups may still be reading the old values as their halo). The next dispatch,
// life/tile_commit.wgsl, copies the border words back.
// Workgroup size 256 = TILE_W x TILE_H words; dispatch one workgroup per tile,
// (tiles_x * tiles_y) folded into (x, y) past the per-dimension limit (tile = y * nx + x).
// Bindings (group 0): 0 params (uniform LifeParams), 1 state (rw), 2 staging (rw)

//! include common/dispatch.wgsl
//! include life/swar.wgsl
//! include life/tile.wgsl

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> staging: array<u32>;

const HALO_W: u32 = 10u;   // TILE_W + 2
const HALO_H: u32 = 34u;   // TILE_H + 2
var<workgroup> words: array<u32, 340>;   // HALO_W * HALO_H, row-major

fn load_word(word: i32, y: i32) -> u32 {
    let p = params;
    var w = word;
    var row = y;
    if (p.torus == 1u) {
        w = (word + i32(p.stride)) % i32(p.stride);
        row = (y + i32(p.height)) % i32(p.height);
    } else if (word < 0 || word >= i32(p.stride) || y < 0 || y >= i32(p.height)) {
        return 0u;
    }
    return state[u32(row) * p.stride + u32(w)];
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let tile = folded_workgroup(wid, groups);
    let tx = tile % params.tiles_x;
    let ty = tile / params.tiles_x;
    let tiles = params.tiles_x * ((params.height + TILE_H - 1u) / TILE_H);
    // every invocation reaches the barrier: the guard on `tile` wraps the work, not a return
    if (tile < tiles) {
        for (var k = lid; k < HALO_W * HALO_H; k += 256u) {
            let word = i32(tx * TILE_W) - 1 + i32(k % HALO_W);
            let y = i32(ty * TILE_H) - 1 + i32(k / HALO_W);
            words[k] = load_word(word, y);
        }
    }
    workgroupBarrier();
    if (tile >= tiles) { return; }
    let cell = tile_cell(tile, lid, params);
    if (!cell.inside) { return; }
    let c = lid % TILE_W + 1u;   // position in the halo'd tile
    let r = lid / TILE_W + 1u;
    var rows: array<Row, 3>;
    for (var k = 0u; k < 3u; k++) {
        let base = (r + k - 1u) * HALO_W;
        rows[k] = make_row(words[base + c], words[base + c - 1u], words[base + c + 1u],
                           cell.word, params.width, params.torus == 1u);
    }
    let next = next_word(rows[0], rows[1], rows[2]) & word_mask(cell.word, params);
    if (cell.slot == 0xffffffffu) {
        state[cell.y * params.stride + cell.word] = next;
    } else {
        staging[cell.slot] = next;
    }
}
