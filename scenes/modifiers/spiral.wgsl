// swirl.toml's init: each particle starts hot, at a random height of a thin column.
fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).temperature = 0.8 + 0.4 * rand(ctx);
    (*p).position.y += 0.3 * rand(ctx);
}
