// emitter/life_cells.wgsl  --  pass `<entity>:emitter:life_cells` (shape.kind = "life")
//
// Lists the cells of the emitter's Life layer that births may come from, once per step, after
// the layer's step: alive now (on = "alive"), or alive now and dead in the previous displayed
// state (on = "birth"), whatever generations the layer ran in between. The previous displayed
// state is this emitter's own copy (`previous`), refreshed here after the list is made, so
// pingpong and in-place layers give the same births. Until the copy is first made (`primed`
// = 0) the current state stands for the previous one: the first step lists no births.
//
// One workgroup of 256 invocations: invocation t takes a contiguous run of the state's words,
// counts its eligible cells, the counts are scanned in workgroup memory, and each writes its
// cells at its offset: the list comes out in cell order, the same bytes on every run (no
// atomics). Each invocation reads ceil(words / 256) words twice: meant for layers up to about a
// million cells.
// Dispatch: 1 workgroup.
// Bindings (group 0): 0 shape (rw: LifeShape), 1 state (read: the layer's current state words),
//                     2 previous (rw: the state at the previous step, as this pass saw it).

//! include emitter/life_shape_types.wgsl

const GROUP: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> shape: LifeShape;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> previous: array<u32>;

var<workgroup> counts: array<u32, GROUP>;

fn eligible(w: u32, primed: bool, on: u32) -> u32 {
    let now = state[w];
    if (on == LIFE_ON_ALIVE) { return now; }
    let before = select(now, previous[w], primed);
    return now & ~before;
}

@compute @workgroup_size(GROUP)
fn main(@builtin(local_invocation_index) t: u32) {
    let words = min(shape.head.words, min(arrayLength(&state), arrayLength(&previous)));
    let per = (words + GROUP - 1u) / GROUP;
    let first = min(t * per, words);
    let last = min(first + per, words);
    let primed = shape.head.primed == 1u;
    let on = shape.head.on;
    var n = 0u;
    for (var w = first; w < last; w++) { n += countOneBits(eligible(w, primed, on)); }
    counts[t] = n;
    workgroupBarrier();
    if (t == 0u) {   // exclusive scan of the 256 counts, in order
        var sum = 0u;
        for (var k = 0u; k < GROUP; k++) {
            let c = counts[k];
            counts[k] = sum;
            sum += c;
        }
        shape.head.count = min(sum, arrayLength(&shape.cells));
        shape.head.primed = 1u;
    }
    workgroupBarrier();
    var at = counts[t];
    let room = arrayLength(&shape.cells);
    let stride = max(shape.head.stride, 1u);
    for (var w = first; w < last; w++) {
        var bits = eligible(w, primed, on);
        let row = w / stride;
        let col0 = (w % stride) * 32u;
        while (bits != 0u) {
            let b = firstTrailingBit(bits);
            bits &= bits - 1u;
            if (at < room) { shape.cells[at] = row * shape.head.width + col0 + b; }
            at += 1u;
        }
    }
    storageBarrier();
    for (var w = first; w < last; w++) { previous[w] = state[w]; }
}
