"""The window's frame loop without a display: the real _Runner on a real Engine, presenting to
rendercanvas's offscreen canvas (same draw function and surface API as the glfw window). Keys,
bindings, mouse gestures, hot reload, the inspector and error survival are driven through the
same handlers the window registers."""

from __future__ import annotations

import math
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

SCENES = Path(__file__).resolve().parent.parent / "scenes"
SIZE = (160, 96)

SCENE = """
[scene]
name = "window test"
seed = 3
size = [160, 96]
script = "keys.py"
[bindings]
b = "burst"
[camera]
kind = "perspective"
position = [0.0, 0.0, 8.0]
target = [0.0, 0.0, 0.0]
[[entity]]
name = "jet"
[entity.emitter]
capacity = 5000
rate = 60.0
lifetime = 100.0
[[entity]]
name = "well"
[entity.attractor]
position = [1.0, 0.5, -2.0]
follow_mouse = true
"""

SCRIPT = """
seen = []

def on_key(ctx, key):
    seen.append(key)
    ctx.entity("jet").emitter.size = 0.01 + 0.001 * len(seen)

def on_event(ctx, name, data):
    if name == "burst":
        ctx.burst("jet", 1000)
"""


class _Loop:
    def __init__(self):
        self.calls = []

    def call_soon(self, fn, *args):
        self.calls.append(fn)


def key(name: str) -> dict:
    return {"event_type": "key_down", "key": name, "modifiers": ()}


def pointer(kind: str, x: float, y: float, button: int = 0, buttons=(), modifiers=()) -> dict:
    return {"event_type": kind, "x": x, "y": y, "button": button, "buttons": buttons,
            "modifiers": modifiers}


def project(engine, point) -> tuple[float, float]:
    """World point -> logical pixel, through the engine's own matrices (the oracle for the
    cursor mappings, which invert them)."""
    w, h = engine.size
    clip = engine.camera.projection_matrix(w / h) @ engine.camera.view_matrix() @ [*point, 1.0]
    ndc = clip[:3] / clip[3]
    return (ndc[0] + 1) * 0.5 * w, (1 - ndc[1]) * 0.5 * h


def offscreen_runner(engine, size):
    """The window's _Runner on an offscreen canvas of ``size``, its draw function registered."""
    from rendercanvas.offscreen import RenderCanvas

    from emberfx.app.window import _Runner

    canvas = RenderCanvas(size=size, pixel_ratio=1)
    ctx = canvas.get_wgpu_context()
    ctx.configure(device=engine.device, format=ctx.get_preferred_format(engine.adapter))
    loop = _Loop()
    runner = _Runner(engine, canvas, ctx, loop, None, None, "emberfx - t", reload_interval=0.0)
    runner.titles, runner.loop_calls = [], loop.calls
    canvas.set_title = runner.titles.append
    canvas.request_draw(runner.draw)

    def frame():
        image = np.asarray(canvas.draw())
        assert runner.error is None, runner.error
        return image

    runner.frame = frame
    return runner


@pytest.fixture
def window(gpu, tmp_path):
    (tmp_path / "keys.py").write_text(SCRIPT)
    (tmp_path / "scene.toml").write_text(SCENE)
    engine = Engine(load_scene(tmp_path / "scene.toml"), size=SIZE)
    yield offscreen_runner(engine, SIZE)
    engine.close()


def test_frames_draw_the_scene(window):
    for _ in range(3):
        image = window.frame()
    assert image.shape == (SIZE[1], SIZE[0], 4) and image[..., :3].std() > 0
    assert window.drawn == 3


def test_space_pauses_and_period_steps_once(window):
    engine = window.engine
    window.frame()
    window.on_key(key(" "))
    assert window.paused
    steps = engine.clock.steps
    window.frame()
    window.frame()
    assert engine.clock.steps == steps
    window.on_key(key("."))
    window.frame()
    assert engine.clock.steps == steps + 1
    window.on_key(key(" "))
    assert not window.paused


def test_plus_and_minus_change_the_simulation_speed(window):
    assert window.speed == 1.0
    window.on_key(key("="))
    window.on_key(key("+"))
    assert window.speed == 4.0
    for _ in range(10):
        window.on_key(key("-"))
    assert window.speed == 0.125
    window.last = None
    window.frame()
    # pretend 100 ms passed since that frame began, however long it took (a GPU's first frame
    # builds pipelines): at 1/8 speed that is 12.5 ms, no whole step
    window.last = time.perf_counter() - 0.1
    steps = window.engine.clock.steps
    window.frame()
    assert window.engine.clock.steps == steps


def test_keys_reach_scripts_and_bindings_send_events(window):
    engine = window.engine
    window.frame()
    window.on_key(key("x"))
    window.on_key(key("F5"))
    assert math.isclose(engine.entity("jet").emitter.size, 0.012)
    alive = int(engine.state("jet")["alive"].sum())
    window.on_key(key("b"))                        # [bindings] b = "burst" -> on_event
    engine.step(1)
    assert int(engine.state("jet")["alive"].sum()) == alive + 1000 + 1
    assert "x" in engine.scripts.input.keys and "f5" in engine.scripts.input.keys
    window.on_key_up({"event_type": "key_up", "key": "x"})
    assert "x" not in engine.scripts.input.keys


def test_s_saves_a_screenshot(window, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    window.frame()
    window.on_key(key("s"))
    shots = list(tmp_path.glob("window_test-*.png"))
    assert len(shots) == 1
    from PIL import Image

    assert np.asarray(Image.open(shots[0])).shape == (SIZE[1], SIZE[0], 4)


def test_escape_closes_once(window):
    window.on_key(key("Escape"))
    window.on_key(key("Escape"))
    assert len(window.loop_calls) == 1 and window.closing


def test_an_attractor_with_follow_mouse_sits_under_the_cursor(window):
    engine = window.engine
    window.frame()
    window.on_pointer(pointer("pointer_move", 40.0, 30.0))
    position = engine.entity("well").attractor.position
    np.testing.assert_allclose(project(engine, position), (40.0, 30.0), atol=1e-3)
    # in the plane through its old position that faces the camera (here: z = -2)
    assert math.isclose(position[2], -2.0, abs_tol=1e-6)
    assert engine.scripts.input.mouse == (40.0, 30.0) and engine.scripts.input.inside
    window.on_pointer({"event_type": "pointer_leave"})
    assert not engine.scripts.input.inside


def test_drag_orbits_and_wheel_zooms_the_camera(window):
    engine = window.engine
    camera = engine.camera
    distance = np.linalg.norm(np.subtract(camera.position, camera.target))
    window.on_pointer(pointer("pointer_down", 80, 48, button=1, buttons=(1,)))
    window.on_pointer(pointer("pointer_move", 120, 40, buttons=(1,)))
    window.on_pointer(pointer("pointer_up", 120, 40, button=1))
    moved = np.linalg.norm(np.subtract(camera.position, (0.0, 0.0, 8.0)))
    assert moved > 0.1
    assert math.isclose(np.linalg.norm(np.subtract(camera.position, camera.target)), distance,
                        rel_tol=1e-9)
    window.on_pointer({**pointer("wheel", 80, 48), "dy": -100.0})   # one notch toward the scene
    assert np.linalg.norm(np.subtract(camera.position, camera.target)) < distance
    assert engine.scene.camera.position == (0.0, 0.0, 8.0)   # the file's camera is untouched


def test_a_drag_whose_move_comes_after_its_release_orbits_as_far(window):
    """jupyter_rfb holds a move up to 20 ms and sends the release at once: a quick drag reaches
    the kernel as down, up, move. It orbits the camera as far as the same drag in order, and the
    late move (a hover by then) turns it no further."""
    engine = window.engine
    start = engine.camera.with_reference(engine.scene.settings.size)   # a copy
    window.on_pointer(pointer("pointer_down", 80, 48, button=1, buttons=(1,)))
    window.on_pointer(pointer("pointer_move", 120, 40, buttons=(1,)))
    window.on_pointer(pointer("pointer_up", 120, 40, button=1))
    in_order = engine.camera.position
    assert np.linalg.norm(np.subtract(in_order, start.position)) > 0.1
    engine.camera = start.with_reference(engine.scene.settings.size)
    assert engine.camera.position == start.position
    window.on_pointer(pointer("pointer_down", 80, 48, button=1, buttons=(1,)))
    window.on_pointer(pointer("pointer_up", 120, 40, button=1))
    window.on_pointer(pointer("pointer_move", 120, 40, buttons=(1,)))
    assert engine.camera.position == in_order


def test_a_valid_and_an_invalid_edit_while_running(window, tmp_path, capsys):
    engine = window.engine
    path = tmp_path / "scene.toml"
    window.frame()
    good = SCENE.replace("rate = 60.0", "rate = 600.0")
    _save(path, good)
    window.frame()
    assert engine.entity("jet").emitter.rate == 600.0
    _save(path, good.replace("rate = 600.0", 'rate = "fast"'))
    window.next_title = 0.0
    window.frame()
    err = capsys.readouterr().err
    assert "reload failed" in err and "emitter.rate" in err and "Traceback" not in err
    assert any("RELOAD FAILED" in t and "emitter.rate" in t for t in window.titles)
    assert window.inspector is not None and not window.inspector.visible   # the banner only
    steps = engine.clock.steps
    window.last -= 0.05
    window.frame()
    assert engine.clock.steps > steps and engine.entity("jet").emitter.rate == 600.0
    _save(path, good)
    window.frame()
    assert window.reloader.error is None


def test_r_reloads_now(window, tmp_path):
    path = tmp_path / "scene.toml"
    window.reloader.interval = 3600.0       # polling alone would not see the edit for an hour
    window.frame()
    _save(path, SCENE.replace("rate = 60.0", "rate = 90.0"))
    window.frame()
    assert window.engine.entity("jet").emitter.rate == 60.0
    window.on_key(key("r"))
    assert window.engine.entity("jet").emitter.rate == 90.0


def test_an_edit_the_device_refuses_is_reported_and_the_loop_runs_on(window, capsys):
    engine = window.engine
    window.frame()
    engine.entity("jet").emitter.capacity = 1 << 31     # as a script or the inspector might
    window.frame()
    window.frame()
    err = capsys.readouterr().err
    assert err.count("the scene keeps running") == 1     # rate-limited
    assert engine.entity("jet").emitter.capacity == 5000
    assert window.error is None and not window.closing


def test_f1_shows_the_inspector_over_the_scene(window):
    pytest.importorskip("imgui_bundle")
    window.frame()
    window.frame()
    plain = window.frame()
    window.on_key(key("F1"))
    assert window.inspector.visible
    for _ in range(3):   # imgui lays a new window out over its first frames
        shown = window.frame()
    changed = np.any(shown[..., :3] != plain[..., :3], axis=-1)
    assert changed[:40, :60].mean() > 0.2        # the panel sits in the top-left corner
    window.on_key(key("F1"))
    assert not window.inspector.visible


def test_sampler_runs_in_the_loop_with_its_scripts(gpu, tmp_path):
    """The bundled sampler through the runner: every system, scripts, bindings, no errors."""
    shutil.copytree(SCENES, tmp_path / "scenes")
    engine = Engine(load_scene(tmp_path / "scenes" / "sampler.toml"), size=(192, 108))
    runner = offscreen_runner(engine, (192, 108))
    try:
        for _ in range(3):
            runner.frame()
            runner.last -= 1 / 60
        engine.step(2)
        population = int(engine.state("life")["cells"].sum())
        runner.on_key(key("c"))          # [bindings] c = "life_clear" (scripts/life_keys.py)
        assert population > 0 and int(engine.state("life")["cells"].sum()) == 0
        assert runner.frame()[..., :3].std() > 0
        assert engine.scripts.errors == 0
    finally:
        engine.close()


def _save(path: Path, text: str) -> None:
    before = os.stat(path).st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_key_names_have_one_spelling():
    from emberfx.model.keys import key_name

    assert [key_name(k) for k in (" ", "+", "=", "_", "A", "F1", "ArrowUp", ".", "Shift", None)] \
        == ["space", "=", "=", "-", "a", "f1", "arrowup", ".", None, None]


def test_a_resized_window_renders_at_its_new_size(window):
    window.frame()
    window.canvas.set_physical_size(100, 140)
    image = window.frame()
    assert image.shape == (140, 100, 4) and window.engine.size == (100, 140)
    assert image[..., :3].std() > 0


def test_the_inspector_draws_every_field_editor(window):
    """Every entity and component open: each field gets its widget (numbers, vectors, colours,
    choices, switches, read-only tables) without an error, over several frames."""
    pytest.importorskip("imgui_bundle")
    window.on_key(key("F1"))
    window.inspector.open_all = True
    for _ in range(6):
        window.frame()
    assert window.inspector.visible and window.error is None
    assert window.engine.profiling             # the open "Pass timings" section switched it on
    assert "jet:emitter:draw" in window.engine.pass_times()
    window.on_key(key("F1"))
    window.frame()
    assert not window.engine.profiling         # and closing the panel switches it off


def test_inspector_edits_are_validated_like_a_scene_file():
    from emberfx.app.inspector import _literal_choices, check_field
    from emberfx.systems.emitter.component import Emitter
    from emberfx.systems.life.component import Life

    emitter = Emitter()
    assert check_field(emitter, "rate", 250.0) is None
    assert "rate" in check_field(emitter, "rate", -1.0) and emitter.rate != -1.0
    assert "color" in check_field(emitter, "color", "#zz0000")
    life = Life()
    assert check_field(life, "rule", "B3/S23") is None
    assert check_field(life, "rule", "B9") is not None
    import typing
    assert _literal_choices(typing.get_type_hints(Life, include_extras=True)["topology"]) == \
        ["torus", "dead"]
