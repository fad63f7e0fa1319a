// galaxy.toml's init: a star is born on one of two logarithmic spiral arms (about one in eight
// in the central bulge, one in eight in the disk between the arms), in the x-z plane around the
// emitter's centre, on the circular orbit of the core attractor (strength G, softening EPS, as
// the scene's `core` entity: a = G r / (r^2 + EPS^2)^(3/2)), turning from +x towards +z, the way
// the arms trail.
const G: f32 = 3.0;
const EPS: f32 = 0.6;
const PITCH: f32 = 0.3;     // r = R0 e^(PITCH (theta0 - theta)): tan of the pitch angle
const R0: f32 = 0.5;
const R_MAX: f32 = 4.2;
const TAU: f32 = 6.2831853;

fn gauss(ctx: ModifierContext) -> f32 {   // Box-Muller: a standard normal deviate
    let u = max(rand(ctx), 1e-6);
    return sqrt(-2.0 * log(u)) * cos(TAU * rand(ctx));
}

fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    var r: f32;
    var theta: f32;
    var height: f32;
    let kind = rand(ctx);
    if (kind < 0.12) {
        r = 0.4 * abs(gauss(ctx)) + 0.02;
        theta = TAU * rand(ctx);
        height = 0.15 * gauss(ctx) * exp(-r);
    } else if (kind < 0.25) {   // the disk between the arms
        r = R0 + (R_MAX - R0) * sqrt(rand(ctx));
        theta = TAU * rand(ctx);
        height = 0.05 * gauss(ctx);
    } else {
        r = R0 + (R_MAX - R0) * pow(rand(ctx), 1.3);
        let arm = floor(rand(ctx) * 2.0) * 0.5 * TAU;
        // the arm's angle at r, widened with radius so the arms fray into the disk
        theta = arm - log(r / R0) / PITCH + (0.06 + 0.035 * r) * gauss(ctx);
        height = 0.04 * gauss(ctx);
    }
    let radial = vec3f(cos(theta), 0.0, sin(theta));
    let along = vec3f(-sin(theta), 0.0, cos(theta));
    (*p).position = ctx.origin + r * radial + vec3f(0.0, height, 0.0);
    let speed = r * sqrt(G / pow(r * r + EPS * EPS, 1.5));
    (*p).velocity = speed * along;
}
