"""Mistakes made through the Python API are the project's one-line SceneError, with the field's
path, what was expected and what was found, as a scene file's are: a component built with a bad
value or a misspelt keyword, a field that does not exist set on a live component, a component
replaced on an entity view."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.registry import component_types
from emberfx.model.scene import Scene, SceneSettings
from emberfx.model.scene_fields import field_names
from emberfx.systems.emitter.component import Emitter, Shape, SubEmitter


@pytest.mark.parametrize("build, text", [
    (lambda: Emitter(rate=math.nan),
     "Emitter(...): emitter.rate: expected finite numbers, found nan"),
    (lambda: Emitter(direction=(0.0, 0.0, 0.0)),
     "Emitter(...): emitter.direction: expected a non-zero vector, found [0, 0, 0]"),
    (lambda: Emitter(rat=5.0),   # type: ignore[call-arg]
     "Emitter(...): emitter.rat: unknown key 'rat', did you mean 'rate'?"),
    (lambda: Shape(kind="ring", radius=0.1, thickness=1.0),
     "Shape(...): thickness: expected <= radius (0.1), found 1.0"),
    (lambda: SubEmitter(), "SubEmitter(...): emitter: expected a value (required), found nothing"),
    (lambda: Emitter(*range(80)),
     f"Emitter(...): emitter: expected at most {len(dataclasses.fields(Emitter))} values in field "
     "order (or fields by keyword), found 80"),
])
def test_a_component_built_badly_in_python_is_a_one_line_scene_error(build, text):
    with pytest.raises(SceneError) as info:
        build()
    assert str(info.value) == text


@pytest.mark.parametrize("key", sorted(component_types()))
def test_every_component_refuses_a_misspelt_keyword_with_its_path(key):
    cls = component_types()[key].cls
    name = field_names(cls)[0]
    with pytest.raises(SceneError) as info:
        cls(**{name + "x": 1})
    assert info.value.field == f"{key}.{name}x"
    assert info.value.detail == f"unknown key '{name}x', did you mean '{name}'?"


def test_setting_a_field_that_does_not_exist_is_a_scene_error():
    emitter = Emitter()
    with pytest.raises(SceneError) as info:
        emitter.rat = 5.0
    assert str(info.value) == "Emitter(...): rat: unknown field 'rat', did you mean 'rate'?"


def _engine() -> Engine:
    scene = Scene(SceneSettings(seed=2), Camera(kind="orthographic"))
    scene.add("jet", emitter={"capacity": 64, "rate": 120.0})
    return Engine(scene, size=(32, 24))


def test_replacing_or_removing_a_component_on_a_view_is_a_scene_error_and_runs_on(gpu):
    engine = _engine()
    try:
        engine.step()
        with pytest.raises(SceneError) as info:
            engine.entity("jet").emitter = None
        text = str(info.value)
        assert "\n" not in text
        assert text.startswith("live edit: entity 'jet': emitter: expected an edit of the "
                               "component's fields")
        assert text.endswith("found emitter = None")
        with pytest.raises(SceneError) as info:
            engine.entity("jet").emitter.rat = 5.0
        assert info.value.detail == "unknown field 'rat', did you mean 'rate'?"
        engine.step(3)
        assert engine.state("jet")["alive"].sum() > 0
        assert np.isfinite(engine.state("jet")["position"]).all()
    finally:
        engine.close()


def test_a_script_that_builds_a_bad_component_gets_one_line(tmp_path):
    """As a user's program: the error prints as one line (str), no traceback of ours."""
    program = tmp_path / "bad.py"
    program.write_text("import math\nfrom emberfx.core.errors import EmberError\n"
                       "from emberfx.systems.emitter.component import Emitter\n"
                       "try:\n    Emitter(rate=math.nan)\n"
                       "except EmberError as exc:\n    print(type(exc).__name__, exc)\n")
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("SceneError Emitter(...): emitter.rate: expected finite "
                                   "numbers, found nan")
