// life/paint.wgsl  --  `<entity>:life:paint` (on demand, outside the frame graph: LifeSystem.paint)
//
// Sets (ALIVE = 1) or clears (ALIVE = 0) painted cells in the state the next generation reads.
// The CPU has already turned the cells into (word index, bit mask) edits, one per touched word, so
// a stroke of many cells costs one atomic per word. The atomics are what keep it exact anyway if
// two edits ever name the same word: the read-modify-write of a plain store could lose a bit.
// Workgroup size 64, one invocation per edit; dispatch ceil(edits / 64) workgroups, folded into
// (x, y) past the per-dimension limit (edit = (wid.y * groups.x + wid.x) * 64 + lid).
// Bindings (group 0): 0 edits (read, vec2u(word, mask), bound to exactly the edits in use),
//                     1 state (rw, the packed words of the current generation)

//! include common/dispatch.wgsl

override ALIVE: u32 = 1u;

@group(0) @binding(0) var<storage, read> edits: array<vec2u>;
@group(0) @binding(1) var<storage, read_write> state: array<atomic<u32>>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= arrayLength(&edits)) { return; }
    let edit = edits[i];
    if (edit.x >= arrayLength(&state)) { return; }
    if (ALIVE == 1u) {
        atomicOr(&state[edit.x], edit.y);
    } else {
        atomicAnd(&state[edit.x], ~edit.y);
    }
}
