// common/random.wgsl: stateless counter-based random numbers (no pass of its own).
//
// Every random number is a pure function of (scene seed, entity, slot, frame, draw): no state is
// stored and no atomic ticket order is involved, so a run replays bit for bit. The mixer is the
// PCG-RXS-M-XS 32-bit output permutation (O'Neill 2014).

fn pcg_hash(x0: u32) -> u32 {
    let state = x0 * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

// The key of one particle's birth: distinct for every (seed, entity, slot, frame).
fn birth_key(seed: u32, entity: u32, slot: u32, frame: u32) -> u32 {
    return pcg_hash(slot ^ pcg_hash(frame ^ pcg_hash(entity ^ pcg_hash(seed))));
}

// The draw-th uniform number in [0, 1) from a key (24 bits, exact in f32).
fn random01(key: u32, draw: u32) -> f32 {
    return f32(pcg_hash(key + draw) >> 8u) * (1.0 / 16777216.0);
}
