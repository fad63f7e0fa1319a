// emitter/receive.wgsl: the light a sprite receives, for emitter/billboard.wgsl (no pass of its
// own). This default is for sprites that do not receive shadows: their colour is their own.
// An emitter with receive_shadows = true swaps in emitter/receive_shadows.wgsl (its draws only,
// systems/emitter/opacity.py).

// The factor on the colour of a sprite centred at world point `centre`.
fn received_light(centre: vec3f) -> vec3f {
    return vec3f(1.0);
}
