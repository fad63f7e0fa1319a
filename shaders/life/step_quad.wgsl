// life/step_quad.wgsl  --  pass `<entity>:life:step<k>` (memory = "pingpong", width % 128 == 0)
//
// One generation from state_in to state_out, four words per invocation: each row is read as one
// 16-byte load plus the word on either side, instead of three 4-byte loads per word as in
// life/step.wgsl, and a three-row window slides down ROWS rows. Used when rows hold whole groups
// of four words and no ragged word (width a multiple of 128), which makes the shifts uniform; the
// general kernel covers every other width. Results are the same bits (tests/test_life.py).
// Workgroup size (64, 1): x = group of four words, y = group of ROWS rows; dispatch
// (ceil(stride / 4 / 64), ceil(height / ROWS), 1).
// Bindings (group 0): 0 params (uniform LifeParams), 1 state_in (read, vec4 view),
//   2 state_out (rw, vec4 view), 3 state_in again (read, word view: the words beside a group)

//! include life/swar.wgsl

override ROWS: u32 = 4u;

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read> quads_in: array<vec4u>;
@group(0) @binding(2) var<storage, read_write> quads_out: array<vec4u>;
@group(0) @binding(3) var<storage, read> words_in: array<u32>;

// Four words of one row with their west and east neighbour bits (see make_row in swar.wgsl).
struct Quad {
    cells: vec4u,
    west: vec4u,
    east: vec4u,
};

fn load_quad(y: i32, group: u32, west_word: u32, east_word: u32, edge_west: bool,
             edge_east: bool) -> Quad {
    // As in step.wgsl: rows wrap by comparison; past a dead edge a clamped row is loaded and
    // zeroed, so there is no branch.
    let torus = params.torus == 1u;
    let h = i32(params.height);
    let inside = torus || (y >= 0 && y < h);
    let wrapped = select(select(y, y - h, y >= h), y + h, y < 0);
    let row = u32(select(clamp(y, 0, h - 1), wrapped, torus));
    let cells = quads_in[row * (params.stride / 4u) + group];
    let west = select(0u, words_in[row * params.stride + west_word], torus || !edge_west);
    let east = select(0u, words_in[row * params.stride + east_word], torus || !edge_east);
    let before = vec4u(west, cells.x, cells.y, cells.z);
    let after = vec4u(cells.y, cells.z, cells.w, east);
    let keep = select(vec4u(0u), vec4u(0xffffffffu), inside);
    return Quad(cells & keep, ((cells << vec4u(1u)) | (before >> vec4u(31u))) & keep,
                ((cells >> vec4u(1u)) | (after << vec4u(31u))) & keep);
}

fn lane(q: Quad, i: u32) -> Row {
    return Row(q.cells[i], q.west[i], q.east[i]);
}

@compute @workgroup_size(64, 1)
fn main(@builtin(global_invocation_id) gid: vec3u) {
    let group = gid.x;
    let groups = params.stride / 4u;
    let first = gid.y * ROWS;
    if (group >= groups || first >= params.height) { return; }
    let edge_west = group == 0u;
    let edge_east = group == groups - 1u;
    let west_word = select(4u * group - 1u, params.stride - 1u, edge_west);
    let east_word = select(4u * group + 4u, 0u, edge_east);
    var up = load_quad(i32(first) - 1, group, west_word, east_word, edge_west, edge_east);
    var mid = load_quad(i32(first), group, west_word, east_word, edge_west, edge_east);
    for (var r = 0u; r < ROWS; r++) {
        let y = first + r;
        if (y >= params.height) { break; }
        let down = load_quad(i32(y) + 1, group, west_word, east_word, edge_west, edge_east);
        var next: vec4u;
        for (var i = 0u; i < 4u; i++) {
            next[i] = next_word(lane(up, i), lane(mid, i), lane(down, i));
        }
        quads_out[y * groups + group] = next;
        up = mid;
        mid = down;
    }
}
