// emitter/publish_alive.wgsl: where an emitter's alive count goes after a step (no pass of its
// own). Shared by emitter/prepare.wgsl, emitter/ranks.wgsl and emitter/update_ranked.wgsl, which
// must write the same words.
// Bindings of every pass including it: group 0: 1 counters (rw: Counters per emitter),
// 4 alive_totals (rw: word 0 of each emitter's record); group 1: 0 draw_args (rw: 5 words at the
// start of each emitter's record; alone in its group: the indirect draw may not see it bound as
// storage).

//! include common/random.wgsl
//! include emitter/types.wgsl

@group(0) @binding(1) var<storage, read_write> counters: array<Counters>;
@group(0) @binding(4) var<storage, read_write> alive_totals: array<u32>;
@group(1) @binding(0) var<storage, read_write> draw_args: array<u32>;

// Emitter e (record p) has `alive` slots alive: its counters' `alive` for the readback ring, its
// alive total that its depth sort reads, and its drawIndexedIndirect arguments (the 6 indices of
// runtime/blocks/sprites.py's SPRITE_INDICES, two triangles, per alive particle, first index 0,
// base vertex 0, from instance alive_base: emitter/billboard.wgsl explains).
fn publish_alive(e: u32, p: EmitterParams, alive: u32) {
    atomicStore(&counters[e].alive, alive);
    alive_totals[e * RECORD_WORDS] = alive;
    let args = e * RECORD_WORDS;
    draw_args[args] = 6u;
    draw_args[args + 1u] = alive;
    draw_args[args + 2u] = 0u;
    draw_args[args + 3u] = 0u;
    draw_args[args + 4u] = p.alive_base;   // first_instance: the draw finds its emitter by it
}
