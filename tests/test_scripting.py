"""Python scripts: hooks drive the scene headless; failures never stop the loop."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from emberfx.engine import Engine
from emberfx.errors import SceneError
from emberfx.scene import load_scene

DATA = Path(__file__).parent / "data"


def scene_with(tmp_path: Path, script: str, extra: str = "", entity_script: str | None = None) -> Engine:
    (tmp_path / "scripts").mkdir(exist_ok=True)
    shutil.copy(DATA / "scripts" / script, tmp_path / "scripts" / script)
    if entity_script:
        shutil.copy(DATA / "scripts" / entity_script, tmp_path / "scripts" / entity_script)
    text = f"""
[scene]
script = "scripts/{script}"
[camera]
kind = "orthographic"
[[entity]]
name = "jet"
{f'script = "scripts/{entity_script}"' if entity_script else ""}
[entity.emitter]
capacity = 2000
rate = 60.0
lifetime = 100.0
[[entity]]
name = "well"
[entity.attractor]
position = [0.0, 0.0, 0.0]
{extra}
"""
    path = tmp_path / "scene.toml"
    path.write_text(text)
    return Engine(load_scene(path), size=(32, 32))


def test_a_script_moves_the_attractor_along_its_path(gpu, tmp_path):
    engine = scene_with(tmp_path, "orbit.py")
    for step in range(1, 31):
        engine.step()
        t = step / 60.0
        expected = (2 * math.cos(2 * math.pi * t), 2 * math.sin(2 * math.pi * t), 0.0)
        np.testing.assert_allclose(engine.entity("well").attractor.position, expected, atol=1e-9)


def test_a_raising_script_leaves_the_loop_running(gpu, tmp_path, capsys):
    engine = scene_with(tmp_path, "raises.py")
    engine.step(10)                                     # raises from step 4 on
    err = capsys.readouterr().err
    assert "scripted failure" in err and "raises.py" in err and "Traceback" in err
    assert err.count("RuntimeError: scripted failure") == 1   # reported once, then skipped
    assert engine.clock.steps == 10
    assert engine.entity("jet").emitter.rate == 1800.0  # the last good update stays
    assert int(engine.state("jet")["alive"].sum()) > 0


def test_a_script_that_does_not_import_is_reported_and_the_scene_runs(gpu, tmp_path, capsys):
    engine = scene_with(tmp_path, "broken.py")
    engine.step(3)
    err = capsys.readouterr().err
    assert "broken.py" in err and "no_such_module_for_emberfx" in err
    assert int(engine.state("jet")["alive"].sum()) == 3


def test_a_hook_with_the_wrong_signature_is_reported(gpu, tmp_path, capsys):
    engine = scene_with(tmp_path, "wrong_signature.py")
    engine.step(2)
    err = capsys.readouterr().err
    assert "on_update must take (ctx, dt)" in err
    assert engine.entity("jet").emitter.rate == 60.0    # the bad hook never ran


def test_spawn_burst_event_and_delete_from_scripts(gpu, tmp_path):
    engine = scene_with(tmp_path, "orbit.py", entity_script="spawner.py")
    engine.step(1)
    assert engine.entity("late").attractor.strength == 2.0
    assert engine.entity("jet").emitter.size == 0.05   # on_event("ping") reached the entity script
    assert int(engine.state("jet")["alive"].sum()) == 251   # 1 from the rate + the burst of 250
    system = engine.system_of("jet", "emitter")
    strengths = lambda: sorted(f.strength for f in system.forces_on(system.pools["jet"]))  # noqa: E731
    assert strengths() == [1.0, 2.0]                   # the spawned attractor acts on the emitter
    engine.step(5)
    with pytest.raises(Exception, match="no entity named 'late'"):
        engine.entity("late")
    assert strengths() == [1.0]


def test_a_fixed_script_is_picked_up_again(gpu, tmp_path):
    engine = scene_with(tmp_path, "raises.py")
    engine.step(6)
    assert engine.entity("jet").emitter.rate == 1800.0
    script = tmp_path / "scripts" / "raises.py"
    script.write_text("def on_update(ctx, dt):\n    ctx.entity('jet').emitter.rate = 7.0\n")
    import os
    os.utime(script, (1e9, 1e9))                       # a new modification time
    engine.step(1)
    assert engine.entity("jet").emitter.rate == 7.0


def test_a_missing_scene_script_is_a_scene_error(tmp_path):
    path = tmp_path / "scene.toml"
    path.write_text('[scene]\nscript = "scripts/nope.py"\n')
    with pytest.raises(SceneError, match="scene.script: expected an existing file"):
        load_scene(path)
