// emitter/life_shape.wgsl: births in the cells of a Life layer (shape.kind = "life"; no pass of
// its own).
//
// In place of emitter/life_hook.wgsl (systems/emitter/life_shape.py swaps it in) in the passes
// that give births (emitter/update.wgsl, update_ranked.wgsl, spawn.wgsl, births.wgsl) of an
// emitter with a Life shape. emitter/life_cells.wgsl lists the eligible cells earlier in the
// step; a birth picks one of them uniformly (draw 9) and a uniform point of its square in the
// layer's plane (draws 10, 11): the quad at the layer's quad_center, row 0 at the top. Its
// `outward` is the plane's normal, +z. With no eligible cell the birth is born dead (lifetime 0:
// the step's births are dropped).
// Draws of the birth key: 9..11, below the modifiers' (systems/emitter/modifier_code.py).
//
// Bindings (group 3): 0 life_shape (read: LifeShape, the placement and the list).

//! include emitter/life_shape_types.wgsl

const HAS_LIFE_SHAPE: bool = true;

@group(3) @binding(0) var<storage, read> life_shape: LifeShape;

fn sample_life_shape(params: EmitterParams, key: u32) -> ShapeSample {
    let count = life_shape.head.count;
    var out: ShapeSample;
    out.outward = vec3f(0.0, 0.0, 1.0);
    out.offset = vec3f(0.0);
    if (count == 0u) { return out; }
    let pick = min(u32(random01(key, 9u) * f32(count)), count - 1u);
    let cell = life_shape.cells[pick];
    let width = max(life_shape.head.width, 1u);
    let x = f32(cell % width) + random01(key, 10u);
    let y = f32(cell / width) + random01(key, 11u);
    let world = life_shape.head.corner.xyz + vec3f(x * life_shape.head.cell.x, -y * life_shape.head.cell.y, 0.0);
    out.offset = world - params.origin.xyz;
    return out;
}

fn life_shape_empty() -> bool {
    return life_shape.head.count == 0u;
}
