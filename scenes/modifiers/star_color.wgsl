// galaxy.toml's colour: warm gold in the bulge, blue-white along the arms by distance from the
// emitter's centre (linear rgb, straight alpha), fading in over the first fifth of a star's life
// and out over the last; a bulge star is dimmer than an arm star.
fn color(p: ParticleState, ctx: ModifierContext) -> vec4f {
    let r = length((p.position - ctx.origin).xz);
    let core = vec3f(1.0, 0.62, 0.25);
    let arm = vec3f(0.45, 0.62, 1.0);
    let rgb = mix(core, arm, smoothstep(0.3, 1.6, r));
    let life = p.age / p.lifetime;
    let fade = smoothstep(0.0, 0.2, life) * (1.0 - smoothstep(0.7, 1.0, life));
    // the dense bulge dimmer per star, so it glows without burning out
    return vec4f(rgb, fade * mix(0.3, 1.0, smoothstep(0.2, 1.2, r)));
}
