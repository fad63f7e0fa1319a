// emitter/life_hook.wgsl: the Life emission shape's hook, as built in (no pass of its own).
//
// Included by emitter/types.wgsl, so every emitter pass compiles sample_life_shape. This default
// has no layer and no bindings: an emitter whose shape is not "life" never reads one. The passes
// that give births to an emitter with shape.kind = "life" are compiled with
// emitter/life_shape.wgsl in place of this file (systems/emitter/life_shape.py).
// Bindings: none.

const HAS_LIFE_SHAPE: bool = false;

fn sample_life_shape(params: EmitterParams, key: u32) -> ShapeSample {
    return ShapeSample(vec3f(0.0), vec3f(0.0, 0.0, 1.0));
}

// Whether the layer has no eligible cell this step (its births are then born dead).
fn life_shape_empty() -> bool {
    return false;
}
