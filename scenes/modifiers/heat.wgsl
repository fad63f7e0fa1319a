// swirl.toml's colour: a black-body-like ramp of the particle's temperature attribute, linear
// rgb with straight alpha (white-hot -> orange -> dull red -> gone).
fn color(p: ParticleState, ctx: ModifierContext) -> vec4f {
    let k = clamp(p.temperature, 0.0, 1.2);
    let rgb = vec3f(smoothstep(0.05, 0.45, k), smoothstep(0.3, 0.8, k), smoothstep(0.7, 1.15, k));
    let fade = 1.0 - smoothstep(0.8, 1.0, p.age / p.lifetime);
    return vec4f(rgb * 1.6, fade * smoothstep(0.02, 0.15, k));
}
