// swirl.toml's update: particles are steered towards a vortex whose radius widens with height
// (a funnel), spinning about the emitter's axis while they rise, and their heat radiates away
// (faster the faster a particle moves).
fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    let r = (*p).position - ctx.origin;
    let height = dot(r, ctx.direction);
    let radial = r - height * ctx.direction;
    let radius = max(length(radial), 1e-4);
    let funnel = 0.25 + 0.3 * height;                       // the vortex's radius at this height
    let around = cross(ctx.direction, radial) / radius;     // unit tangent
    let goal = 3.0 * around + (funnel - radius) * 2.0 * radial / radius + 1.1 * ctx.direction;
    (*p).velocity += (goal - (*p).velocity) * (1.0 - exp(-4.0 * ctx.dt));
    (*p).temperature *= exp(-(0.3 + 0.05 * length((*p).velocity)) * ctx.dt);
}
