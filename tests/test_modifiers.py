"""WGSL modifiers (`init`, `update`, `color` files) on a real GPU against the numpy model of
emitter_model.py, their hot reload and their one-line errors."""

from __future__ import annotations

import io
import math
import os
from pathlib import Path

import emitter_model as model
import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.hot_reload import HotReloader
from emberfx.model.scene import load_scene

DT = 1.0 / 60.0
RADIUS = 0.75
VELOCITY = (0.5, 1.0, -0.25)
CIRCLE = f"""// on a circle of radius {RADIUS} around the emitter, in the x-z plane
fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {{
    let angle = 6.2831853 * rand(ctx);
    (*p).position = ctx.origin + {RADIUS} * vec3f(cos(angle), 0.0, sin(angle));
    (*p).velocity = vec3f{VELOCITY};
}}
"""
CONSTANT = f"""fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {{
    (*p).velocity = vec3f{VELOCITY};
}}
"""


def scene_text(extra: str, capacity: int = 700, rate: float = 1800.0) -> str:
    return f"""
[scene]
seed = 11
fixed_dt = {DT!r}
[camera]
kind = "orthographic"
center = [0.0, 0.5]
height = 4.0
[[entity]]
name = "jet"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = [0.3, 0.8]
speed = [2.0, 5.0]
position = [0.5, -0.25, 0.0]
gravity = [0.0, -9.81, 0.0]
drag = 0.3
{extra}
"""


def write_scene(folder: Path, extra: str, files: dict[str, str], **kw) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text)
    path = folder / "scene.toml"
    path.write_text(scene_text(extra, **kw))
    return path


def save(path: Path, text: str) -> None:
    """Write and move the modification time on, as an editor's save does."""
    before = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_circle_init_and_constant_velocity_update_match_numpy_model(gpu, tmp_path):
    """Births on the circle (the angle from rand's first draw of the birth key), then each step
    the built-in integration followed by the update that sets the velocity: x += (V + (g - drag
    V) h) h. Positions within 1e-4 (float32 accumulation), velocities exact."""
    path = write_scene(tmp_path, 'init = "circle.wgsl"\nupdate = "constant.wgsl"',
                       {"circle.wgsl": CIRCLE, "constant.wgsl": CONSTANT}, rate=900.0)
    engine = Engine(load_scene(path), size=(64, 48))
    comp = engine.entity("jet").emitter
    n = comp.capacity
    origin, v_set = np.array(comp.position), np.array(VELOCITY)
    gravity = np.array(comp.gravity)
    pos, age, life = np.zeros((n, 3)), np.zeros(n), np.zeros(n)
    for frame, budget in enumerate(model.budgets(comp.rate, DT, 30)):
        alive = age < life
        step_v = v_set + (gravity - comp.drag * v_set) * DT
        pos[alive] += step_v * DT
        age[alive] += DT
        slots = model.ordered_births(~(age < life), budget)
        _, _, life[slots] = model.spawn(slots, seed=11, entity=0, frame=frame, origin=origin,
                                        direction=comp.direction, spread_deg=comp.spread_deg,
                                        speed=comp.speed, lifetime=comp.lifetime)
        key = model.birth_key(11, 0, slots, frame)
        angle = 6.2831853 * model.random01(key, 129)   # MODIFIER_DRAWS + 1
        pos[slots] = origin + RADIUS * np.stack([np.cos(angle), 0 * angle, np.sin(angle)], 1)
        age[slots] = 0.0
        engine.step()
    state = engine.state("jet")
    alive = age < life
    np.testing.assert_array_equal(state["alive"], alive)
    assert 200 < alive.sum() < n
    np.testing.assert_allclose(state["position"][alive], pos[alive], rtol=0, atol=1e-4)
    np.testing.assert_array_equal(state["velocity"][alive],
                                  np.broadcast_to(v_set.astype(np.float32), (alive.sum(), 3)))
    newborn = alive & (state["age"] == 0.0)   # born in the last step: still on the circle
    assert newborn.sum() == 15
    radial = np.hypot(*(state["position"][newborn] - origin)[:, [0, 2]].T)
    np.testing.assert_allclose(radial, RADIUS, atol=1e-6)


def test_colour_modifier_draws_what_the_same_colour_stops_draw(gpu, tmp_path):
    """`color` returning a constant replaces the colour over life: byte-identical to the stops
    of that colour (whose linear value it returns)."""
    red = "fn color(p: ParticleState, ctx: ModifierContext) -> vec4f {\n" \
          "    return vec4f(1.0, 0.0, 0.0, 1.0);\n}\n"
    images = []
    for extra in ('color = "red.wgsl"', 'color = "#ff0000"'):
        path = write_scene(tmp_path, extra + "\nsize = 0.2", {"red.wgsl": red}, rate=300.0)
        engine = Engine(load_scene(path), size=(64, 48))
        engine.step(20)
        images.append(engine.render())
    green = images[0][..., 1]
    assert images[0][..., 0].max() > 200 and np.all(green == green[0, 0])   # red on the background
    assert images[0].tobytes() == images[1].tobytes()


def test_syntax_error_reported_at_file_and_line_while_the_last_program_runs(gpu, tmp_path):
    path = write_scene(tmp_path, 'update = "constant.wgsl"', {"constant.wgsl": CONSTANT})
    engine = Engine(load_scene(path), size=(64, 48))
    reloader = HotReloader(engine, interval=0.0, out=io.StringIO())
    engine.step(5)
    before = engine.state("jet")["alive"].sum()
    save(tmp_path / "constant.wgsl", CONSTANT.replace(");", ";"))   # line 2 loses its ')'
    message = reloader.poll() or ""
    assert "\n" not in message
    assert "reload failed" in message and f"{tmp_path / 'constant.wgsl'}:2:" in message
    assert "emitter.update" in message
    engine.step(5)   # the last good pipeline keeps running: velocities stay as it sets them
    state = engine.state("jet")
    assert state["alive"].sum() > before
    np.testing.assert_array_equal(state["velocity"][state["alive"]][0],
                                  np.array(VELOCITY, np.float32))
    save(tmp_path / "constant.wgsl", CONSTANT.replace("vec3f(", "2.0 * vec3f("))
    assert "reloaded" in (reloader.poll() or "")
    engine.step(1)   # the particles stayed; the new program runs
    state = engine.state("jet")
    assert state["alive"].sum() > before
    np.testing.assert_array_equal(state["velocity"][state["alive"]][0],
                                  2 * np.array(VELOCITY, np.float32))


def test_compile_error_refuses_the_engine_in_one_line(gpu, tmp_path):
    bad = CONSTANT.replace("(*p).velocity = ", "(*p).velocity = speed_of_light * ")
    path = write_scene(tmp_path, 'update = "constant.wgsl"', {"constant.wgsl": bad})
    with pytest.raises(SceneError) as caught:
        Engine(load_scene(path), size=(64, 48))
    message = str(caught.value)
    assert "\n" not in message
    assert "entity 'jet': emitter.update: WGSL error at" in message
    assert "constant.wgsl:2:" in message and "speed_of_light" in message


@pytest.mark.parametrize("extra, files, expected", [
    ('update = "missing.wgsl"', {}, "emitter.update: expected an existing file, found "
                                    "'missing.wgsl'"),
    ('update = "wrong.wgsl"', {"wrong.wgsl": "fn update(p: ParticleState) {}\n"},
     "emitter.update: expected `fn update(p: ptr<function, ParticleState>, ctx: ModifierContext)`"
     " in {dir}/wrong.wgsl, found `fn update(p: ParticleState)`"),
    ('init = "other.wgsl"', {"other.wgsl": "fn start(p: ptr<function, ParticleState>) {}\n"},
     "emitter.init: expected `fn init(p: ptr<function, ParticleState>, ctx: ModifierContext)` "
     "in {dir}/other.wgsl, found no fn init (it declares start)"),
    ('color = "tint.wgsl"', {"tint.wgsl": "fn color(p: ParticleState, ctx: ModifierContext) "
                                          "-> vec3f { return vec3f(); }\n"},
     "emitter.color: expected `fn color(p: ParticleState, ctx: ModifierContext) -> vec4f` in "
     "{dir}/tint.wgsl, found `fn color(p: ParticleState, ctx: ModifierContext) -> vec3f`"),
])
def test_bad_modifier_files_are_one_line_scene_errors(tmp_path, extra, files, expected):
    path = write_scene(tmp_path, extra, files)
    with pytest.raises(SceneError) as caught:
        load_scene(path)   # no GPU: `emberfx validate` refuses these too
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: entity 'jet': ")
    assert expected.format(dir=tmp_path) in message


def test_modifiers_run_under_no_scripts_and_validate_from_the_cli(gpu, tmp_path):
    import subprocess
    import sys

    path = write_scene(tmp_path, 'init = "circle.wgsl"', {"circle.wgsl": CIRCLE})
    engine = Engine(load_scene(path), size=(64, 48), scripts=False)
    engine.step(3)
    state = engine.state("jet")
    radial = np.hypot(*(state["position"][state["alive"]] - (0.5, 0.0, 0.0))[:, [0, 2]].T)
    assert state["alive"].any() and np.all(radial > RADIUS - 0.2)
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert math.isfinite(radial.mean())
