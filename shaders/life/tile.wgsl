// life/tile.wgsl: the tiling shared by the in-place passes (no pass of its own).
//
// A workgroup owns a tile of TILE_W words x TILE_H rows (one invocation per word). Its border
// words (first and last row and column of the tile, clipped to the grid) are what neighbouring
// tiles read as their halo, so within the step dispatch they are not written to the state buffer
// but to the tile's slots in a staging buffer; life/tile_commit.wgsl copies them back afterwards.

//! include life/swar.wgsl

const TILE_W: u32 = 8u;
const TILE_H: u32 = 32u;
const BORDER_SLOTS: u32 = 76u;   // 2 * TILE_W + 2 * (TILE_H - 2)

struct TileCell {
    word: u32,       // word column in the grid
    y: u32,          // row in the grid
    inside: bool,    // within the grid
    slot: u32,       // border slot in the staging buffer, or 0xffffffff for interior words
};

fn tile_cell(tile: u32, lid: u32, p: LifeParams) -> TileCell {
    let tx = tile % p.tiles_x;
    let ty = tile / p.tiles_x;
    let c = lid % TILE_W;
    let r = lid / TILE_W;
    var out: TileCell;
    out.word = tx * TILE_W + c;
    out.y = ty * TILE_H + r;
    out.inside = out.word < p.stride && out.y < p.height;
    // the tile as clipped by the grid's right and bottom edges
    let cols = min(TILE_W, p.stride - tx * TILE_W);
    let rows = min(TILE_H, p.height - ty * TILE_H);
    var slot = 0xffffffffu;
    if (r == 0u) { slot = c; }
    else if (r == rows - 1u) { slot = cols + c; }
    else if (c == 0u) { slot = 2u * cols + (r - 1u); }
    else if (c == cols - 1u) { slot = 2u * cols + (rows - 2u) + (r - 1u); }
    if (slot != 0xffffffffu) { slot += tile * BORDER_SLOTS; }
    out.slot = slot;
    return out;
}
