"""Hot reload: what a scene edit changes, that untouched entities keep their GPU state, and that a
bad edit leaves the last good scene running."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import EmberError
from emberfx.engine.engine import Engine
from emberfx.model.hot_reload import HotReloader, plan_reload
from emberfx.model.scene import load_scene, loads_scene

BASE = """
[scene]
seed = 7
[camera]
kind = "orthographic"
[[entity]]
name = "left"
[entity.emitter]
capacity = 3000
rate = 600.0
lifetime = 100.0
position = [-1.0, 0.0, 0.0]
[[entity]]
name = "right"
[entity.emitter]
capacity = 2000
rate = 300.0
lifetime = 100.0
position = [1.0, 0.0, 0.0]
[[entity]]
name = "well"
[entity.attractor]
position = [0.0, 0.0, 0.0]
"""


def edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def write(path: Path, text: str) -> None:
    """Write and move the modification time on, as an editor's save does (filesystems with a
    coarse clock could otherwise give two quick saves the same time)."""
    before = os.stat(path).st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


# ------------------------------------------------------------------------------ plans (no GPU)

def test_the_plan_names_exactly_what_changed():
    base = loads_scene(BASE)
    assert plan_reload(base, loads_scene(BASE)).empty
    live = plan_reload(base, loads_scene(edit(BASE, "rate = 300.0", "rate = 900.0")))
    assert live.updated == [("right", "emitter")] and not (live.added or live.removed)
    grown = loads_scene(BASE + '[[entity]]\nname = "dot"\n[entity.emitter]\nrate = 1.0\n')
    plan = plan_reload(base, grown)
    assert plan.added == ["dot"] and plan.updated == [] and not plan.restart
    assert plan_reload(grown, base).removed == ["dot"]
    # a second component on "well": the component set changed, so the entity is built anew
    changed_kind = loads_scene(edit(BASE, "[entity.attractor]",
                                    '[entity.force_field]\nkind = "drag"\n[entity.attractor]'))
    assert plan_reload(base, changed_kind).respawned == ["well"]
    assert plan_reload(base, loads_scene(edit(BASE, "seed = 7", "seed = 8"))).restart
    cam = plan_reload(base, loads_scene(edit(BASE, 'kind = "orthographic"',
                                             'kind = "orthographic"\nheight = 9.0')))
    assert cam.camera and not cam.updated
    assert "updated right.emitter" in live.summary()


def test_a_changed_pattern_file_refreshes_only_its_layer(tmp_path):
    pattern = tmp_path / "p.rle"
    pattern.write_text("x = 3, y = 1\n3o!\n")
    text = '[[entity]]\nname = "a"\n[entity.life]\nsize = [16, 16]\npattern = "p.rle"\n' \
           '[[entity]]\nname = "b"\n[entity.life]\nsize = [16, 16]\n'
    scene = loads_scene(text, path=tmp_path / "s.toml")
    plan = plan_reload(scene, scene, changed_files=[pattern])
    assert plan.refreshed == [("a", "life")] and not plan.updated


# ------------------------------------------------------------------------------ the Engine

@pytest.fixture
def scene_file(tmp_path):
    path = tmp_path / "scene.toml"
    write(path, BASE)
    return path


def test_an_edited_entity_changes_and_the_others_keep_their_particles(gpu, scene_file):
    engine = Engine(load_scene(scene_file), size=(32, 32))
    engine.step(20)
    left = engine.state("left")
    assert 0 < left["alive"].sum() < 3000
    # capacity is a rebuild-class field: "right" gets a new pool; "left" must not notice a thing
    engine.reload(loads_scene(edit(BASE, "capacity = 2000", "capacity = 500"), scene_file))
    after_left, after_right = engine.state("left"), engine.state("right")
    for key in ("position", "velocity", "age", "alive"):
        np.testing.assert_array_equal(after_left[key], left[key])
    assert len(after_right["alive"]) == 500 and after_right["alive"].sum() == 0
    engine.step(1)
    assert engine.state("right")["alive"].sum() == 5      # 300/s * 1/60 s
    engine.close()


def test_a_live_edit_keeps_the_particles_and_takes_the_new_value(gpu, scene_file):
    engine = Engine(load_scene(scene_file), size=(32, 32))
    engine.step(10)
    before = engine.state("right")
    plan = engine.reload(loads_scene(edit(BASE, "rate = 300.0", "rate = 1200.0"), scene_file))
    assert plan.updated == [("right", "emitter")]
    np.testing.assert_array_equal(engine.state("right")["alive"], before["alive"])
    assert engine.entity("right").emitter.rate == 1200.0
    alive = int(before["alive"].sum())
    engine.step(1)
    assert int(engine.state("right")["alive"].sum()) == alive + 20   # 1200/s * 1/60 s
    engine.close()


def test_entities_appear_and_go(gpu, scene_file):
    engine = Engine(load_scene(scene_file), size=(32, 32))
    engine.step(3)
    grown = BASE + '[[entity]]\nname = "dot"\n[entity.emitter]\ncapacity = 100\nrate = 60.0\n' \
                   'lifetime = 100.0\n'
    engine.reload(loads_scene(grown, scene_file))
    engine.step(2)
    assert int(engine.state("dot")["alive"].sum()) == 2
    assert any(name.startswith("dot:") for name in engine.passes())
    engine.reload(loads_scene(edit(BASE, '[[entity]]\nname = "right"', '[[entity]]\nname = "gone"')
                              .replace('name = "gone"', 'name = "renamed"'), scene_file))
    assert "right" not in engine.entity_names() and "dot" not in engine.entity_names()
    assert not any(n.startswith(("dot:", "right:")) for n in engine.passes())
    engine.step(1)
    assert int(engine.state("renamed")["alive"].sum()) == 5
    engine.close()


def test_a_reload_the_device_refuses_is_undone(gpu, scene_file):
    engine = Engine(load_scene(scene_file), size=(32, 32))
    engine.step(5)
    before = engine.state("left")
    too_big = 1 << 31   # particles: far beyond any storage binding limit
    bad = edit(BASE, "rate = 300.0", "rate = 1.0") + \
        f'[[entity]]\nname = "huge"\n[entity.emitter]\ncapacity = {too_big}\n'
    with pytest.raises(EmberError):
        engine.reload(loads_scene(bad, scene_file))
    assert set(engine.entity_names()) == {"left", "right", "well"}
    assert engine.entity("right").emitter.rate == 300.0            # the update was undone
    np.testing.assert_array_equal(engine.state("left")["alive"], before["alive"])
    engine.step(1)
    assert engine.scene.entity("right").components["emitter"].rate == 300.0
    engine.close()


def test_seed_change_restarts_the_world(gpu, scene_file):
    engine = Engine(load_scene(scene_file), size=(32, 32))
    engine.step(5)
    plan = engine.reload(loads_scene(edit(BASE, "seed = 7", "seed = 9"), scene_file))
    assert plan.restart and engine.clock.steps == 0
    assert int(engine.state("left")["alive"].sum()) == 0
    engine.step(1)
    assert int(engine.state("left")["alive"].sum()) == 10
    engine.close()


def test_the_reloader_applies_a_valid_edit_and_survives_an_invalid_one(gpu, scene_file):
    engine = Engine(load_scene(scene_file), size=(32, 32))
    out = io.StringIO()
    reloader = HotReloader(engine, interval=0.0, out=out)
    engine.step(4)
    assert reloader.poll() is None                             # nothing changed yet
    write(scene_file, edit(BASE, "rate = 600.0", "rate = 1800.0"))
    assert "reloaded scene.toml: updated left.emitter" in reloader.poll()
    assert engine.entity("left").emitter.rate == 1800.0 and reloader.error is None

    write(scene_file, edit(BASE, "rate = 600.0", "rate = -5.0"))   # invalid: rate must be >= 0
    message = reloader.poll()
    assert "reload failed" in message and "entity 'left'" in message and "emitter.rate" in message
    assert reloader.error and "rate" in reloader.error
    assert reloader.poll() is None                             # reported once, not every poll
    alive = int(engine.state("left")["alive"].sum())
    engine.step(1)                                             # the last good scene runs on
    assert int(engine.state("left")["alive"].sum()) == alive + 30
    write(scene_file, "[scene\nbroken toml")
    assert "reload failed" in reloader.poll() and "scene.toml" in reloader.error
    write(scene_file, BASE)
    assert "updated left.emitter" in reloader.poll() and reloader.error is None
    assert engine.entity("left").emitter.rate == 600.0
    assert out.getvalue().count("reload failed") == 2
    engine.close()


def test_an_edited_pattern_file_is_read_again(gpu, tmp_path):
    pattern = tmp_path / "shape.rle"
    write(pattern, "x = 3, y = 1\n3o!\n")
    scene_path = tmp_path / "life.toml"
    write(scene_path, '[[entity]]\nname = "grid"\n[entity.life]\nsize = [20, 11]\n'
                      'pattern = "shape.rle"\noffset = [2, 3]\nsteps_per_frame = 0\n')
    engine = Engine(load_scene(scene_path), size=(32, 32))
    reloader = HotReloader(engine, interval=0.0, out=io.StringIO())
    write(pattern, "x = 2, y = 2\n2o$2o!\n")
    assert "re-read grid.life" in reloader.poll()
    expected = np.zeros((11, 20), bool)
    expected[3:5, 2:4] = True
    np.testing.assert_array_equal(engine.state("grid")["cells"], expected)
    engine.close()


def test_a_script_added_by_an_edit_starts_running(gpu, scene_file, tmp_path):
    (tmp_path / "slow.py").write_text(
        "def on_update(ctx, dt):\n    ctx.self.emitter.rate = 60.0\n")
    engine = Engine(load_scene(scene_file), size=(32, 32))
    engine.step(1)
    engine.reload(loads_scene(edit(BASE, 'name = "left"', 'name = "left"\nscript = "slow.py"'),
                              scene_file))
    engine.step(1)
    assert engine.entity("left").emitter.rate == 60.0
    engine.close()


def test_scripts_that_stay_keep_their_state_and_only_new_ones_start(gpu, scene_file, tmp_path):
    (tmp_path / "counter.py").write_text(
        "steps = 0\nstarts = 0\n"
        "def on_start(ctx):\n    global starts\n    starts += 1\n"
        "def on_update(ctx, dt):\n    global steps\n    steps += 1\n"
        "    ctx.self.emitter.size = 0.001 * steps + 0.1 * starts\n")
    (tmp_path / "other.py").write_text(
        "def on_start(ctx):\n    ctx.entity('right').emitter.rate = 123.0\n")
    with_counter = edit(BASE, 'name = "left"', 'name = "left"\nscript = "counter.py"')
    engine = Engine(loads_scene(with_counter, scene_file), size=(32, 32))
    engine.step(3)
    assert engine.entity("left").emitter.size == pytest.approx(0.103)
    engine.reload(loads_scene(with_counter.replace("seed = 7", 'seed = 7\nscript = "other.py"'),
                              scene_file))
    engine.step(1)
    # counter.py kept its module (4 steps, 1 start); other.py is new and started once
    assert engine.entity("left").emitter.size == pytest.approx(0.104)
    assert engine.entity("right").emitter.rate == 123.0
    engine.close()


def test_a_restart_starts_the_scripts_afresh(gpu, scene_file, tmp_path):
    (tmp_path / "counter.py").write_text(
        "steps = 0\ndef on_update(ctx, dt):\n    global steps\n    steps += 1\n"
        "    ctx.self.emitter.size = 0.001 * steps\n")
    with_counter = edit(BASE, 'name = "left"', 'name = "left"\nscript = "counter.py"')
    engine = Engine(loads_scene(with_counter, scene_file), size=(32, 32))
    engine.step(5)
    inputs = engine.scripts.input
    engine.reload(loads_scene(with_counter.replace("seed = 7", "seed = 8"), scene_file))
    engine.step(1)
    assert engine.entity("left").emitter.size == pytest.approx(0.001)   # module loaded anew
    assert engine.scripts.input is inputs
    engine.close()
