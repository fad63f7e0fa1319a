"""Expression fields (a WGSL expression string in `size`, `speed`, `lifetime`) on a real GPU:
the same bytes as the equivalent modifier file, and errors that point at the field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene

LIFETIME = "0.4 + 0.3 * rand(ctx) + 0.1 * position.x"
SPEED = "2.0 + length(position)"
# the same as an init file: speed first (the direction kept), then lifetime, as the fields are
INIT = f"""fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {{
    let position = (*p).position;
    let along = (*p).velocity / max(length((*p).velocity), 1e-30);
    (*p).velocity = along * f32({SPEED});
    (*p).lifetime = f32({LIFETIME});
}}
"""


def scene(folder: Path, extra: str, name: str = "scene.toml", size: str = "0.08") -> Path:
    (folder / "init.wgsl").write_text(INIT)
    path = folder / name
    path.write_text(f"""
[scene]
seed = 9
[camera]
kind = "orthographic"
center = [0.0, 1.0]
height = 5.0
[[entity]]
name = "fx"
[entity.emitter]
capacity = 1500
rate = 900.0
spread_deg = 40.0
size = {size}
shape = {{ kind = "box", size = [1.0, 0.2, 1.0] }}
{extra}
""")
    return path


def frames(path: Path, steps: int = 30):
    engine = Engine(load_scene(path), size=(96, 64))
    engine.step(steps)
    return engine.state("fx"), engine.render()


def test_birth_expressions_give_the_bytes_of_the_equivalent_init_file(gpu, tmp_path):
    by_fields = scene(tmp_path, f'speed = "{SPEED}"\nlifetime = "{LIFETIME}"', "fields.toml")
    # an expression field's built-in value is 1.0 (the birth direction at unit speed)
    by_file = scene(tmp_path, 'init = "init.wgsl"\nspeed = 1.0\nlifetime = 1.0', "file.toml")
    (state_a, image_a), (state_b, image_b) = frames(by_fields), frames(by_file)
    assert 200 < state_a["alive"].sum() < 1500
    for key in state_a:
        assert state_a[key].tobytes() == state_b[key].tobytes(), key
    assert image_a.tobytes() == image_b.tobytes()
    # and the expressions did act: lifetimes follow the formula's range, speeds its value
    newborn = state_a["alive"] & (state_a["age"] == 0.0)
    x = state_a["position"][newborn, 0]
    life = state_a["lifetime"][newborn]
    assert np.all(life >= 0.4 + 0.1 * x - 1e-6) and np.all(life <= 0.7 + 0.1 * x + 1e-6)
    speed = np.linalg.norm(state_a["velocity"][newborn], axis=1)
    np.testing.assert_allclose(speed, 2.0 + np.linalg.norm(state_a["position"][newborn], axis=1),
                               rtol=1e-5)


def test_constant_size_expression_draws_the_bytes_of_the_number(gpu, tmp_path):
    a = frames(scene(tmp_path, "", "expression.toml", size='"0.08"'))[1]
    b = frames(scene(tmp_path, "", "number.toml"))[1]
    assert a.tobytes() == b.tobytes()
    grown = frames(scene(tmp_path, "", "grows.toml", size='"0.08 + 0.3 * t"'))[1]
    lit = (grown[..., :3].astype(int) - a[..., :3]).sum()
    assert lit > 0   # sprites grow over life: more of the image is lit


@pytest.mark.parametrize("field, value, expected", [
    ("size", "sin(age", "emitter.size: expected balanced brackets in the WGSL expression "
                        "'sin(age'"),
    ("lifetime", "1.0; return 2.0", "emitter.lifetime: expected one WGSL expression, found a "
                                    "';' in '1.0; return 2.0'"),
    ("speed", "", "emitter.speed: expected a WGSL expression, found an empty string"),
])
def test_malformed_expressions_are_refused_at_load(field, value, expected):
    with pytest.raises(SceneError) as caught:
        loads_scene(f'[[entity]]\nname = "fx"\n[entity.emitter]\n{field} = "{value}"\n',
                    path="x.toml")
    assert "\n" not in str(caught.value)
    assert str(caught.value) == f"x.toml: entity 'fx': {expected}"


def test_an_expression_that_does_not_compile_points_at_the_field(gpu, tmp_path):
    path = scene(tmp_path, "", size='"0.02 + 0.01 * sin(6.0 * agee)"')
    with pytest.raises(SceneError) as caught:
        Engine(load_scene(path), size=(96, 64))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: entity 'fx': emitter.size: WGSL error at column ")
    assert "agee" in message
    assert message.endswith("in expression '0.02 + 0.01 * sin(6.0 * agee)'")


def test_a_live_edit_to_a_bad_expression_is_undone_and_the_emitter_runs_on(gpu, tmp_path):
    engine = Engine(load_scene(scene(tmp_path, "")), size=(96, 64))
    engine.step(3)
    engine.entity("fx").emitter.size = "2.0 * speed_of_light"
    with pytest.raises(SceneError, match="emitter.size: WGSL error"):
        engine.step()
    assert engine.entity("fx").emitter.size == 0.08
    engine.step(2)
    engine.entity("fx").emitter.size = "0.02 + 0.01 * t"
    engine.step(2)
    assert engine.state("fx")["alive"].sum() == 7 * 15   # 900/s at 60 steps/s, none died yet
