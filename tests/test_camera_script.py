"""``ctx.camera`` in a script (emberfx.engine.camera_view): a hook moves the live camera, and the
picture follows; a value the [camera] table refuses is one reported script error, the camera
keeps its last valid values and the loop runs on."""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.camera_view import CameraView
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

SCENE = """
[scene]
size = [64, 36]
fixed_dt = 0.02
script = "shot.py"

[camera]
position = [0.0, 1.0, 6.0]
target = [0.0, 1.0, 0.0]

[[entity]]
name = "ball"
[entity.collider]
shape = "sphere"
center = [0.0, 1.0, 0.0]
radius = 0.5
color = "#ff8000"
"""


def engine_with(tmp_path, script: str) -> Engine:
    (tmp_path / "shot.py").write_text(script)
    (tmp_path / "s.toml").write_text(SCENE)
    return Engine(load_scene(tmp_path / "s.toml"), size=(64, 36))


def orange_columns(image: np.ndarray) -> np.ndarray:
    ball = (image[..., 0] > 120) & (image[..., 2] < 80)
    return np.nonzero(ball.any(axis=0))[0]


def test_a_script_dollies_the_camera_and_the_picture_follows(gpu, tmp_path):
    """The hook slides the camera 1 unit a step along +x, looking straight ahead: after 2 steps
    the eye is at x = 2 and the ball, 6 units ahead, sits left of the middle by the pinhole's
    offset (2 / (6 tan(fov/2)) of the half-width), checked to 1.5 pixels."""
    script = ("def on_update(ctx, dt):\n"
              "    x = ctx.camera.position[0] + 1.0\n"
              "    ctx.camera.position = (x, 1.0, 6.0)\n"
              "    ctx.camera.target = (x, 1.0, 0.0)\n")
    with engine_with(tmp_path, script) as engine:
        engine.step(2)
        assert engine.camera.position == (2.0, 1.0, 6.0)
        columns = orange_columns(engine.render())
        assert engine.scripts.errors == 0
    fov = np.radians(engine.camera.fov_deg)
    aspect = 64 / 36
    offset = 2.0 / (6.0 * np.tan(fov / 2) * aspect) * 32   # pixels left of the middle
    assert columns.size > 0
    assert abs((columns.min() + columns.max() + 1) / 2 - (32 - offset)) <= 1.5


@pytest.mark.parametrize("assignment, needle", [
    ("ctx.camera.fov_deg = 200.0", "ctx.camera.fov_deg: expected float < 180.0, found 200.0"),
    ("ctx.camera.positon = (1.0, 2.0, 3.0)", "did you mean 'position'?"),
    ("ctx.camera.position = (float('nan'), 0.0, 0.0)", "ctx.camera.position: expected finite"),
])
def test_a_refused_value_is_a_reported_error_and_the_camera_keeps_its_values(
        gpu, tmp_path, capsys, assignment, needle):
    with engine_with(tmp_path, f"def on_update(ctx, dt):\n    {assignment}\n") as engine:
        before = (engine.camera.position, engine.camera.fov_deg)
        engine.step(3)
        engine.render()
        assert (engine.camera.position, engine.camera.fov_deg) == before
        assert engine.scripts.errors >= 1
    assert needle in capsys.readouterr().err


def test_the_view_reads_the_live_camera(gpu, tmp_path):
    with engine_with(tmp_path, "") as engine:
        view = CameraView(engine)
        engine.camera.position = (3.0, 2.0, 1.0)
        assert view.position == (3.0, 2.0, 1.0) and view.kind == "perspective"
        with pytest.raises(SceneError):
            view.height = -1.0
