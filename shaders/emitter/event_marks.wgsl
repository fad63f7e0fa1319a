// emitter/event_marks.wgsl: the update pass's marking of GPU events (included by
// emitter/update.wgsl; no pass of its own).
//
// Each alive particle of an emitter that sends events sets, per event kind, its bit in this
// block's mask: death (alive at the start of the step, dead after it), collision (touched a
// collider during the step), age (still alive and its age passed a whole multiple of
// on_age.every: floor(age x rate) grew, so at most one per step; the host refuses every <
// fixed_dt). After the block's barrier the masks and per-block counts go to `event_marks`:
//   words [0, S x B)                   event count of block b of kind segment s at s x B + b
//   words [S x B, S x B + S x B x 8)   the masks: segment s, block b, word w at
//                                      S x B + (s x B + b) x BLOCK_WORDS + w
// with B = block_count and S = countOneBits(EVENT_KINDS) segments, one per kind sent, in EVENT_*
// order. The counts are scanned in place (one scan for all kinds) before the tallies read them.
// Binding (group 0): 12 event_marks (rw: the layout above; 4 bytes when EVENT_KINDS = 0).

//! include emitter/types.wgsl

// Bit k: the emitter sends events of kind k (EVENT_* in emitter/event_types.wgsl); with 0 the
// marking compiles out.
override EVENT_KINDS: u32 = 0u;

@group(0) @binding(12) var<storage, read_write> event_marks: array<u32>;

var<workgroup> event_bits: array<atomic<u32>, 24>;   // BLOCK_WORDS per kind, 3 kinds

fn clear_events(lid: u32) {
    if (EVENT_KINDS != 0u && lid < 3u * BLOCK_WORDS) { atomicStore(&event_bits[lid], 0u); }
}

fn mark_event(kind: u32, lid: u32) {
    atomicOr(&event_bits[kind * BLOCK_WORDS + lid / 32u], 1u << (lid % 32u));
}

// For a particle alive at the start of the step, after its update (ages in seconds; rate:
// EmitterParams.age_event_rate).
fn mark_events(lid: u32, died: bool, collided: bool, age_before: f32, age_after: f32, rate: f32) {
    if (EVENT_KINDS == 0u) { return; }
    if ((EVENT_KINDS & 1u) != 0u && died) { mark_event(0u, lid); }
    if ((EVENT_KINDS & 2u) != 0u && collided) { mark_event(1u, lid); }
    if ((EVENT_KINDS & 4u) != 0u && !died) {
        if (floor(age_after * rate) != floor(age_before * rate)) { mark_event(2u, lid); }
    }
}

// After the block's final barrier: its masks and counts, per kind sent.
fn store_events(block: u32, lid: u32, blocks: u32) {
    if (EVENT_KINDS == 0u || block >= blocks) { return; }
    let segments = countOneBits(EVENT_KINDS);
    var segment = 0u;
    for (var kind = 0u; kind < 3u; kind++) {
        if ((EVENT_KINDS & (1u << kind)) == 0u) { continue; }
        if (lid < BLOCK_WORDS) {
            event_marks[segments * blocks + (segment * blocks + block) * BLOCK_WORDS + lid] =
                atomicLoad(&event_bits[kind * BLOCK_WORDS + lid]);
        }
        if (lid == 0u) {
            var n = 0u;
            for (var k = 0u; k < BLOCK_WORDS; k++) {
                n += countOneBits(atomicLoad(&event_bits[kind * BLOCK_WORDS + k]));
            }
            event_marks[segment * blocks + block] = n;
        }
        segment++;
    }
}
