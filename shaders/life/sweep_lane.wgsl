// life/sweep_lane.wgsl: what a lane of the sweep kernels (life/step_sweep.wgsl and
// life/step_sweep_neighbours.wgsl) knows about its word column, and its row's west and east
// neighbours from the neighbouring lanes (no pass of its own).

//! include life/swar.wgsl

override HALO: u32 = 1u;               // halo columns on each side of a strip
override TORUS: bool = true;           // the layer's topology: torus, or dead edges
override RAGGED_TORUS: bool = false;   // torus and width % 32 != 0: make_row's edge shifts

// i mod n in [0, n) for any i: unsigned arithmetic only, because `%` on a negative i32 gave
// wrong results on the H200 (NVIDIA Vulkan) though right ones on lavapipe.
fn wrap(i: i32, n: i32) -> u32 {
    let m = u32(n);
    return select(u32(i) % m, m - 1u - (u32(-1 - i) % m), i < 0);
}

// The lane's constants that every level uses.
struct Lane {
    mask: u32,         // the word's real cells; 0 past a dead edge
    west_shift: u32,   // make_row's shifts (swar.wgsl); 31 unless the torus is ragged
    east_shift: u32,
    height: i32,
    word: u32,         // the lane's word column, wrapped into [0, stride)
    inside_x: bool,    // the column before wrapping lies in the grid
    writes: bool,      // one of the strip's own columns, inside the grid
};

// Lane `lane_index` of the subgroup sweeping strip `strip` with `lanes` lanes.
fn sweep_lane(strip: u32, lanes: u32, lane_index: u32, p: LifeParams) -> Lane {
    let stride = i32(p.stride);
    let raw = i32(strip * (lanes - 2u * HALO) + lane_index) - i32(HALO);   // may lie outside
    let inside_x = raw >= 0 && raw < stride;
    let word = wrap(raw, stride);
    // The edge lanes' outer neighbours are not in the subgroup (the shuffle gives them an
    // undefined word), so they keep the plain shift: one wrong cell enters per generation, not
    // a whole word's worth as a ragged edge's shift would let in.
    let b = select(31u, (p.width - 1u) % 32u, RAGGED_TORUS);
    return Lane(select(0u, word_mask(word, p), TORUS || inside_x),
                select(31u, b, word == 0u && lane_index > 0u),
                select(31u, b, word == p.stride - 1u && lane_index + 1u < lanes),
                i32(p.height), word, inside_x,
                inside_x && lane_index >= HALO && lane_index < lanes - HALO);
}

// The lane's word of a row with its west and east neighbours, taken from the neighbouring
// lanes' words of the same row.
fn lane_row(cells: u32, lane: Lane) -> Row {
    let west = subgroupShuffleUp(cells, 1u);
    let east = subgroupShuffleDown(cells, 1u);
    return Row(cells, (cells << 1u) | (west >> lane.west_shift),
               (cells >> 1u) | (east << lane.east_shift));
}
