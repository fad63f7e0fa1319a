// emitter/births.wgsl  --  pass `<entity>:emitter:births` (after the one-pass ordered step)
//
// The births that emitter/update_ranked.wgsl ranked: born free rank r of emitter e (r below its
// Counters.born, the step's births) is slot birth_slots[e's first slot + r], and gets the same
// particle as emitter/spawn.wgsl gives it: the emitter's shape centred on its origin, its inherit
// velocity added, then born_particle (emitter/modifiers.wgsl: attributes zeroed, birth
// expressions, `init`). The update pass leaves the births out (unless its BIRTHS_HERE says)
// because their code, which about 1% of slots run, would set the registers (and so the
// occupancy) of the whole update.
//
// Workgroup size BLOCK; dispatch (ceil(the most births any emitter of the batch may have this
// step / BLOCK), emitters of the batch): workgroup (x, y) gives emitter y its births
// [x * BLOCK, x * BLOCK + BLOCK).
// Bindings (group 0): 0 emitters (read: EmitterParams per emitter of the batch),
//                     1 counters (rw: Counters per emitter; reads born),
//                     2 particles (rw, the batch's arena),
//                     3 birth_slots (read, the batch's: emitter slots by free rank, from each
//                       emitter's first slot in the arena)
//                     group 1: 0 attributes (rw, only with custom attributes: generated code)

//! include common/random.wgsl
//! include emitter/types.wgsl
//! include emitter/modifiers.wgsl

@group(0) @binding(0) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(1) var<storage, read_write> counters: array<Counters>;
@group(0) @binding(2) var<storage, read_write> particles: array<Particle>;
@group(0) @binding(3) var<storage, read> birth_slots: array<u32>;

// the emitter of this workgroup's births (private, so that modifier code reads `params` as a
// uniform)
var<private> params: EmitterParams;

@compute @workgroup_size(BLOCK)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u) {
    let e = wid.y;
    let rank = wid.x * BLOCK + lid;
    if (rank >= atomicLoad(&counters[e].born)) { return; }
    params = emitters[e];
    let first_slot = params.first_block * BLOCK;   // the emitter's, in the arena
    let slot = birth_slots[first_slot + rank];
    particles[first_slot + slot] = born_particle(spawn_particle(params, slot), slot, params);
}
