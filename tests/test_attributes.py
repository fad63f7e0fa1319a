"""Custom particle attributes on a real GPU: zero at birth, set by `init`, written by `update`,
read back through Engine.state against formulas, and their one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene

DT = 1.0 / 60.0
INIT = """fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).home = (*p).position;
    (*p).tint = vec4f(1.0, 2.0, 3.0, (*p).lifetime);
}
"""
UPDATE = """fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).temperature += 2.0 * ctx.dt;
    (*p).steps += 1u;
    (*p).offset -= 1i;
}
"""
ATTRIBUTES = ('attributes = { temperature = "f32", home = "vec3f", steps = "u32", '
              'tint = "vec4f", offset = "i32", uv = "vec2f" }')


def scene(folder: Path, extra: str, allocation: str = "ordered", substeps: int = 1) -> Path:
    (folder / "init.wgsl").write_text(INIT)
    (folder / "update.wgsl").write_text(UPDATE)
    path = folder / "scene.toml"
    path.write_text(f"""
[scene]
seed = 5
fixed_dt = {DT!r}
[[entity]]
name = "hot"
[entity.emitter]
capacity = 777
rate = 600.0
lifetime = [0.4, 0.9]
substeps = {substeps}
allocation = "{allocation}"
shape = {{ kind = "sphere", radius = 0.5 }}
{extra}
""")
    return path


@pytest.mark.parametrize("allocation, substeps", [("ordered", 1), ("ordered", 3),
                                                  ("atomic", 1), ("ticket", 2)])
def test_attributes_follow_their_formulas_through_engine_state(gpu, tmp_path, allocation,
                                                               substeps):
    """After k steps of life: temperature = 2 k dt (float32 sums, 1e-5), steps = k x substeps
    and offset = -steps (exact), home = the birth position, tint set once by init; every birth
    path (spawn, atomic and ticket births in the update) zeroes and runs init."""
    path = scene(tmp_path, f'init = "init.wgsl"\nupdate = "update.wgsl"\n{ATTRIBUTES}',
                 allocation, substeps)
    engine = Engine(load_scene(path), size=(32, 32))
    engine.step(25)
    state = engine.state("hot")
    alive = state["alive"]
    assert 150 < alive.sum() < 777
    assert state["temperature"].shape == (777,) and state["temperature"].dtype == np.float32
    assert state["home"].shape == (777, 3) and state["tint"].shape == (777, 4)
    assert state["steps"].dtype == np.uint32 and state["offset"].dtype == np.int32
    assert state["uv"].shape == (777, 2)
    k = np.rint(state["age"][alive] / DT).astype(np.int64)
    np.testing.assert_array_equal(state["steps"][alive], k * substeps)
    np.testing.assert_array_equal(state["offset"][alive], -k * substeps)
    np.testing.assert_allclose(state["temperature"][alive], 2.0 * k * DT, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(state["uv"][alive], 0.0)   # never written: zero from birth
    tint = state["tint"][alive]
    np.testing.assert_array_equal(tint[:, :3], np.broadcast_to([1.0, 2.0, 3.0], (len(tint), 3)))
    np.testing.assert_array_equal(tint[:, 3], state["lifetime"][alive])
    newborn = alive & (state["age"] == 0.0)
    assert newborn.any()
    np.testing.assert_array_equal(state["home"][newborn], state["position"][newborn])
    # the sphere shape: homes lie within the radius around the emitter (at the origin)
    assert np.all(np.linalg.norm(state["home"][alive], axis=1) <= 0.5 + 1e-6)


def test_attributes_without_modifiers_are_zero_and_reborn_slots_are_zeroed(gpu, tmp_path):
    path = scene(tmp_path, 'update = "update.wgsl"\n' + ATTRIBUTES)
    engine = Engine(load_scene(path), size=(32, 32))
    engine.step(80)   # lifetimes <= 0.9 s: every slot in use has been reborn at least once
    state = engine.state("hot")
    alive = state["alive"]
    k = np.rint(state["age"][alive] / DT).astype(np.int64)
    np.testing.assert_array_equal(state["steps"][alive], k)   # counted from the last birth
    np.testing.assert_array_equal(state["home"], 0.0)


def test_engine_state_keeps_the_built_in_arrays_in_slot_order(gpu, tmp_path):
    """An emitter with attributes moves exactly as one without (same bytes); Engine.state
    adds one array per attribute."""
    plain = scene(tmp_path, "")
    a = Engine(load_scene(plain), size=(32, 32))
    path = tmp_path / "attr.toml"
    path.write_text(plain.read_text().replace('shape = {', ATTRIBUTES + "\nshape = {"))
    b = Engine(load_scene(path), size=(32, 32))
    a.step(20)
    b.step(20)
    sa, sb = a.state("hot"), b.state("hot")
    for key in ("position", "velocity", "age", "lifetime", "alive"):
        assert sa[key].tobytes() == sb[key].tobytes(), key
    assert set(sb) - set(sa) == {"temperature", "home", "steps", "tint", "offset", "uv"}


@pytest.mark.parametrize("attributes, expected", [
    ('{ temperature = "f64" }', "emitter.attributes.temperature: expected one of f32, i32, u32, "
                                "vec2f, vec3f, vec4f, found 'f64'"),
    ('{ heat = "mat4x4f" }', "emitter.attributes.heat: expected one of f32, i32, u32, vec2f, "
                             "vec3f, vec4f, found 'mat4x4f'"),
    ('{ age = "f32" }', "emitter.attributes.age: expected a name other than the built-in ones"),
    ('{ "2hot" = "f32" }', "emitter.attributes.2hot: expected a WGSL identifier"),
    ('{ heat = 3 }', "emitter.attributes.heat: expected one of f32, i32, u32, vec2f, vec3f, "
                     "vec4f, found 3"),
])
def test_bad_attributes_are_one_line_scene_errors(attributes, expected):
    with pytest.raises(SceneError) as caught:
        loads_scene(f'[[entity]]\nname = "x"\n[entity.emitter]\nattributes = {attributes}\n',
                    path="bad.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("bad.toml: entity 'x': ") and expected in message
