// life/step.wgsl  --  pass `<entity>:life:step<k>` (memory = "pingpong")
//
// One generation from state_in to state_out. Each invocation owns one word column over ROWS
// consecutive rows and slides a three-row window down them, so each row of words is loaded once
// per invocation instead of three times.
// Workgroup size (64, 1): x = word, y = a group of ROWS rows; dispatch
// (ceil(stride / 64), ceil(height / ROWS), 1).
// Bindings (group 0): 0 params (uniform LifeParams), 1 state_in (read), 2 state_out (rw)

//! include life/swar.wgsl

override ROWS: u32 = 4u;

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read> state_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> state_out: array<u32>;

fn load_row(y: i32, word: u32) -> Row {
    // Wraps by comparison rather than integer %, which costs tens of instructions on a GPU; y is
    // never more than one row outside the grid. Rows past a dead edge load a clamped row and are
    // zeroed afterwards, so the code has no branch.
    let torus = params.torus == 1u;
    let h = i32(params.height);
    let inside = torus || (y >= 0 && y < h);
    let wrapped = select(select(y, y - h, y >= h), y + h, y < 0);
    let row = u32(select(clamp(y, 0, h - 1), wrapped, torus));
    let base = row * params.stride;
    let last = params.stride - 1u;
    let mid = state_in[base + word];
    let left = state_in[base + select(word - 1u, last, word == 0u)];
    let right = state_in[base + select(word + 1u, 0u, word == last)];
    let r = make_row(mid, select(0u, left, torus || word > 0u),
                     select(0u, right, torus || word < last), word, params.width, torus);
    return Row(select(0u, r.cells, inside), select(0u, r.west, inside), select(0u, r.east, inside));
}

@compute @workgroup_size(64, 1)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let word = gid.x;
    let first = gid.y * ROWS;
    if (word >= params.stride || first >= params.height) { return; }
    let mask = word_mask(word, params);
    var up = load_row(i32(first) - 1, word);
    var mid = load_row(i32(first), word);
    for (var r = 0u; r < ROWS; r++) {
        let y = first + r;
        if (y >= params.height) { break; }
        let down = load_row(i32(y) + 1, word);
        state_out[y * params.stride + word] = next_word(up, mid, down) & mask;
        up = mid;
        mid = down;
    }
}
