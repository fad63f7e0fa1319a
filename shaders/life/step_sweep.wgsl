// life/step_sweep.wgsl  --  pass `<entity>:life:sweep<k>` (memory = "pingpong", the default
// where the device has subgroups)
//
// GENS generations in one dispatch, from state_in to state_out, with no workgroup memory and no
// barrier. Each subgroup owns a strip of `subgroup_size` word columns (HALO halo columns on each
// side, the rest its own) and CHUNK rows, and sweeps down it from GENS rows above the chunk. At
// each step a lane loads one word of generation 0 and carries it through GENS levels: level g
// takes the row entering its three-row window (the west and east words come from the
// neighbouring lanes by subgroup shuffles), emits the row above it one generation on, and hands
// that to level g + 1. The state is read and written once per GENS generations.
//
// The count is the 3x3 block total (swar.wgsl's block rows): a row's west + own + east sum is
// computed once, when it enters a level, and used by the three windows that hold it. Each
// level keeps its three rows in a ring of registers, and the main loop is unrolled three times
// so that the ring turns by renaming, without copies: in phase p the entering row replaces
// slot p, the oldest.
//
// Why the strip's own cells are exact: a cell's generation g depends only on generation 0 within
// g cells of it. What the lanes do not hold (beyond the strip's edge lanes, above the first row
// loaded) is taken as dead, which is wrong; the error spreads one cell per generation, so after
// GENS generations it has not crossed the GENS rows loaded above the chunk, nor the halo columns,
// which the caller makes at least GENS cells wide: one word, or two on a torus whose last word
// is ragged (width % 32 = r > 0, where a halo word may hold only r cells). Rows and words past a
// dead edge are forced to zero in every generation; on a torus indices wrap (a strip or chunk
// longer than the grid just repeats it, which is still exact), and make_row's ragged-edge shifts
// are used, as in the single-generation kernels. The caller keeps rows of one word on a torus
// (a lane's own west and east neighbour) for the single-generation kernels.
//
// Workgroup size 64: subgroup_id = strip within the workgroup, subgroup_invocation_id = column.
// Dispatch: (ceil(stride / ((64 / S) * (S - 2 HALO))), ceil(height / CHUNK), 1) for the smallest
// subgroup size S the device may use; workgroups past the grid return at once.
// Bindings (group 0): 0 params (uniform LifeParams), 1 state_in (read), 2 state_out (rw)

//! include life/swar.wgsl
//! include life/sweep_lane.wgsl

const MAX_GENS: u32 = 16u;
override GENS: u32 = 8u;          // generations per dispatch, 1..MAX_GENS
override CHUNK: u32 = 256u;       // rows a subgroup writes
// false only where no word has padding bits or lies past an edge (a torus whose width is a
// multiple of 32): the per-level mask is then all ones, and skipping it saves an op a word
override MASKED: bool = true;

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read> state_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> state_out: array<u32>;

// One level's three most recent rows; which slot is the oldest depends on the phase.
struct Ring {
    r0: BlockRow,
    r1: BlockRow,
    r2: BlockRow,
};

// One ring per level, each its own variable so that it stays in registers (an array indexed by
// the level would not); levels at or past GENS are never touched and fold away.
var<private> ring0: Ring; var<private> ring1: Ring; var<private> ring2: Ring;
var<private> ring3: Ring; var<private> ring4: Ring; var<private> ring5: Ring;
var<private> ring6: Ring; var<private> ring7: Ring; var<private> ring8: Ring;
var<private> ring9: Ring; var<private> ring10: Ring; var<private> ring11: Ring;
var<private> ring12: Ring; var<private> ring13: Ring; var<private> ring14: Ring;
var<private> ring15: Ring;

// One level in phase `phase` (a constant at every call): `cells` is the row entering the
// window; returns generation + 1 of row `y`, the row above it.
fn advance(ring: ptr<private, Ring>, phase: u32, cells: u32, y: i32, lane: Lane) -> u32 {
    let down = block_row(lane_row(cells, lane));
    var next: u32;
    if (phase == 0u) {
        next = next_from_block_rows((*ring).r1, (*ring).r2, down);
        (*ring).r0 = down;
    } else if (phase == 1u) {
        next = next_from_block_rows((*ring).r2, (*ring).r0, down);
        (*ring).r1 = down;
    } else {
        next = next_from_block_rows((*ring).r0, (*ring).r1, down);
        (*ring).r2 = down;
    }
    if (MASKED) { next &= lane.mask; }
    return select(0u, next, TORUS || (y >= 0 && y < lane.height));
}

// Step `s` of the sweep, in phase s % 3: load row top + s, carry it through the levels, and
// write what leaves the last level when it is one of the chunk's rows.
fn sweep_step(phase: u32, s: u32, top: i32, row: ptr<function, u32>, lane: Lane) {
    let y = top + i32(s);
    var cells = 0u;
    if (TORUS || (lane.inside_x && y >= 0 && y < lane.height)) {
        cells = state_in[*row * params.stride + lane.word];
    }
    *row = select(*row + 1u, 0u, *row + 1u == params.height);
    // level k turns row y - k of generation k into row y - k - 1 of generation k + 1
    cells = advance(&ring0, phase, cells, y - 1, lane);
    if (GENS > 1u) { cells = advance(&ring1, phase, cells, y - 2, lane); }
    if (GENS > 2u) { cells = advance(&ring2, phase, cells, y - 3, lane); }
    if (GENS > 3u) { cells = advance(&ring3, phase, cells, y - 4, lane); }
    if (GENS > 4u) { cells = advance(&ring4, phase, cells, y - 5, lane); }
    if (GENS > 5u) { cells = advance(&ring5, phase, cells, y - 6, lane); }
    if (GENS > 6u) { cells = advance(&ring6, phase, cells, y - 7, lane); }
    if (GENS > 7u) { cells = advance(&ring7, phase, cells, y - 8, lane); }
    if (GENS > 8u) { cells = advance(&ring8, phase, cells, y - 9, lane); }
    if (GENS > 9u) { cells = advance(&ring9, phase, cells, y - 10, lane); }
    if (GENS > 10u) { cells = advance(&ring10, phase, cells, y - 11, lane); }
    if (GENS > 11u) { cells = advance(&ring11, phase, cells, y - 12, lane); }
    if (GENS > 12u) { cells = advance(&ring12, phase, cells, y - 13, lane); }
    if (GENS > 13u) { cells = advance(&ring13, phase, cells, y - 14, lane); }
    if (GENS > 14u) { cells = advance(&ring14, phase, cells, y - 15, lane); }
    if (GENS > 15u) { cells = advance(&ring15, phase, cells, y - 16, lane); }
    let out_row = y - i32(GENS);          // `cells`: this row of generation GENS
    if (lane.writes && s >= 2u * GENS && s < CHUNK + 2u * GENS && out_row < lane.height) {
        state_out[u32(out_row) * params.stride + lane.word] = cells;
    }
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_id) subgroup: u32,
        @builtin(subgroup_size) lanes: u32, @builtin(subgroup_invocation_id) lane_index: u32) {
    let strip = wid.x * (64u / lanes) + subgroup;
    if (strip * (lanes - 2u * HALO) >= params.stride) { return; }   // the whole subgroup
    let lane = sweep_lane(strip, lanes, lane_index, params);
    let top = i32(wid.y * CHUNK) - i32(GENS);   // grid row loaded at step 0
    var row = wrap(top, lane.height);           // the same, wrapped into the grid
    // steps past CHUNK + 2 GENS (at most two, to finish the last turn of the rings) load
    // and compute but write nothing
    for (var s = 0u; s < CHUNK + 2u * GENS; s += 3u) {
        sweep_step(0u, s, top, &row, lane);
        sweep_step(1u, s + 1u, top, &row, lane);
        sweep_step(2u, s + 2u, top, &row, lane);
    }
}
