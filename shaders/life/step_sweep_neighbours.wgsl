// life/step_sweep_neighbours.wgsl  --  pass `<entity>:life:sweep<k>` (kernel = "sweep_neighbours":
// the sweep of life/step_sweep.wgsl with the 8-neighbour count, kept as its measured baseline)
//
// GENS generations in one dispatch, from state_in to state_out, with no workgroup memory and no
// barrier. Each subgroup owns a strip of `subgroup_size` word columns (HALO halo columns on each
// side, the rest its own) and CHUNK rows, and sweeps down it from GENS rows above the chunk. At
// each step a lane loads one word of generation 0 and carries it through GENS levels: level g
// takes the row entering its three-row window (the west and east words come from the
// neighbouring lanes by subgroup shuffles), emits the row above it one generation on, and hands
// that to level g + 1. Each level's window (the row above and the row being advanced, as
// swar.wgsl's row sums) lives in registers and moves up one row per step. The state is read
// and written once per GENS generations instead of once per generation.
//
// Why the strip's own cells are exact, and the halo the caller gives: see life/step_sweep.wgsl.
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

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read> state_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> state_out: array<u32>;

// One level's three-row window: the sums of the row above and of the row being advanced.
struct Window {
    up: RowSums,
    mid: RowSums,
};

// One level: `cells` is the row entering the window (its west and east words come from the
// neighbouring lanes); returns generation + 1 of row `y`, the row above it.
fn advance(window: ptr<function, Window>, cells: u32, y: i32, lane: Lane) -> u32 {
    let down = row_sums(lane_row(cells, lane));
    let live = TORUS || (y >= 0 && y < lane.height);
    let next = select(0u, next_from_sums((*window).up, (*window).mid, down) & lane.mask, live);
    (*window).up = (*window).mid;
    (*window).mid = down;
    return next;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(subgroup_id) subgroup: u32,
        @builtin(subgroup_size) lanes: u32, @builtin(subgroup_invocation_id) lane_index: u32) {
    let strip = wid.x * (64u / lanes) + subgroup;
    if (strip * (lanes - 2u * HALO) >= params.stride) { return; }   // the whole subgroup
    let lane = sweep_lane(strip, lanes, lane_index, params);
    let height = lane.height;
    let word = lane.word;

    // One window per level, unrolled by hand so that each stays in registers (an array indexed
    // by the level would not); the `GENS > k` tests fold away when the pipeline is created.
    var w0: Window; var w1: Window; var w2: Window; var w3: Window;
    var w4: Window; var w5: Window; var w6: Window; var w7: Window;
    var w8: Window; var w9: Window; var w10: Window; var w11: Window;
    var w12: Window; var w13: Window; var w14: Window; var w15: Window;
    let top = i32(wid.y * CHUNK) - i32(GENS);   // grid row loaded at step 0
    var row = wrap(top, height);                 // the same, wrapped into the grid
    for (var s = 0u; s < CHUNK + 2u * GENS; s++) {
        let y = top + i32(s);
        var cells = 0u;
        if (TORUS || (lane.inside_x && y >= 0 && y < height)) {
            cells = state_in[row * params.stride + word];
        }
        row = select(row + 1u, 0u, row + 1u == params.height);
        // level k turns row y - k of generation k into row y - k - 1 of generation k + 1
        cells = advance(&w0, cells, y - 1, lane);
        if (GENS > 1u) { cells = advance(&w1, cells, y - 2, lane); }
        if (GENS > 2u) { cells = advance(&w2, cells, y - 3, lane); }
        if (GENS > 3u) { cells = advance(&w3, cells, y - 4, lane); }
        if (GENS > 4u) { cells = advance(&w4, cells, y - 5, lane); }
        if (GENS > 5u) { cells = advance(&w5, cells, y - 6, lane); }
        if (GENS > 6u) { cells = advance(&w6, cells, y - 7, lane); }
        if (GENS > 7u) { cells = advance(&w7, cells, y - 8, lane); }
        if (GENS > 8u) { cells = advance(&w8, cells, y - 9, lane); }
        if (GENS > 9u) { cells = advance(&w9, cells, y - 10, lane); }
        if (GENS > 10u) { cells = advance(&w10, cells, y - 11, lane); }
        if (GENS > 11u) { cells = advance(&w11, cells, y - 12, lane); }
        if (GENS > 12u) { cells = advance(&w12, cells, y - 13, lane); }
        if (GENS > 13u) { cells = advance(&w13, cells, y - 14, lane); }
        if (GENS > 14u) { cells = advance(&w14, cells, y - 15, lane); }
        if (GENS > 15u) { cells = advance(&w15, cells, y - 16, lane); }
        let out_row = y - i32(GENS);          // `cells`: this row of generation GENS
        if (lane.writes && s >= 2u * GENS && out_row < height) {
            state_out[u32(out_row) * params.stride + word] = cells;
        }
    }
}
