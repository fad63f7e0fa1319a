"""Life through named bindings and the resource registry: the step pass reads the current state
and writes the next (checked on the registry's own buffers against numpy Life), every
``<entity>/...`` resource lives and dies with the entity, and the pass lists of the bundled Life
scenes are the ones they had before the bindings were named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import life_model
import numpy as np
import pytest

from emberfx.core.readback import read_array
from emberfx.core.resources import TextureResource
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings
from emberfx.systems.life.component import Life
from emberfx.systems.life.system import pack_cells, unpack_cells

ROOT = Path(__file__).resolve().parents[1]


def life_engine(size=(70, 33), **fields) -> Engine:
    scene = Scene(SceneSettings(seed=3), Camera(kind="orthographic"),
                  [EntitySpec("life", {"life": Life(size=size, **fields)})])
    return Engine(scene, size=(64, 48))


def registry_cells(engine: Engine, name: str, size) -> np.ndarray:
    """The cells in the registry buffer ``name``, read without going through the system."""
    w, h = size
    words = read_array(engine.device, engine.resources.buffer_view(name), np.uint32,
                       (w + 31) // 32 * h)
    return unpack_cells(words, w, h)


def the_pass(engine: Engine, name: str):
    return next(p for p in engine.frame_passes() if p.name == name)


# ------------------------------------------------------------------ the step's reads and writes
@pytest.mark.parametrize("kernel,size", [("auto", (70, 33)), ("quad", (128, 20)),
                                         ("word", (70, 33))])
def test_pingpong_step_reads_the_current_state_and_writes_the_next(gpu, kernel, size):
    engine = life_engine(size, density=0.4, kernel=kernel)
    kind = "sweep" if engine.stats()["entities"]["life"]["kernel"] == "sweep" else "step"
    step = the_pass(engine, f"life:life:{kind}0")
    # both parities' variants: each state buffer is read by one and written by the other
    assert set(step.reads) == {"life/params", "life/state0", "life/state1"}
    assert set(step.writes) == {"life/state0", "life/state1"}
    generations = [registry_cells(engine, "life/state0", size)]
    for n in range(1, 4):
        engine.step(1)
        current, previous = f"life/state{n % 2}", f"life/state{(n - 1) % 2}"
        generations.append(life_model.step(generations[-1], "B3/S23", True, 1))
        np.testing.assert_array_equal(registry_cells(engine, current, size), generations[-1])
        # the buffer read is left as it was: it still holds the generation the step started from
        np.testing.assert_array_equal(registry_cells(engine, previous, size), generations[-2])
        np.testing.assert_array_equal(engine.state("life")["cells"], generations[-1])
    assert generations[-1].any()
    engine.close()


def test_inplace_step_and_commit_use_the_one_state_and_its_staging(gpu):
    size = (70, 33)
    engine = life_engine(size, density=0.4, memory="inplace", topology="dead")
    step, commit = the_pass(engine, "life:life:step0"), the_pass(engine, "life:life:commit0")
    assert set(step.reads) == {"life/params", "life/state0", "life/staging"}
    assert set(step.writes) == {"life/state0", "life/staging"}
    assert set(commit.reads) == {"life/params", "life/state0", "life/staging"}
    assert set(commit.writes) == {"life/state0"}
    assert "life/state1" not in engine.resources
    start = registry_cells(engine, "life/state0", size)
    engine.step(2)
    np.testing.assert_array_equal(registry_cells(engine, "life/state0", size),
                                  life_model.step(start, "B3/S23", False, 2))
    engine.close()


def test_the_passes_around_the_step_bind_registry_names(gpu):
    engine = life_engine(trail_color="#ff0000", memory="pingpong")
    passes = {p.name: p for p in engine.frame_passes()}
    states = {"life/state0", "life/state1"}
    assert set(passes["life:life:clear"].writes) == {"life/counters"}
    assert set(passes["life:life:trail"].reads) == {"life/params", "life/look",
                                                    "life/trail"} | states
    assert set(passes["life:life:trail"].writes) == {"life/trail"}
    assert set(passes["life:life:population"].reads) == {"life/params", "life/counters"} | states
    assert set(passes["life:life:population"].writes) == {"life/counters"}
    assert set(passes["life:life:display"].reads) == {"life/params", "life/look",
                                                      "life/trail"} | states
    assert set(passes["life:life:display"].writes) == {"life/image"}
    assert set(passes["life:life:draw"].reads) == {"frame", "life/placement", "life/image"}
    # into the geometry target, whose colour is resolved into the scene image
    assert set(passes["life:life:draw"].writes) == {"geometry/color", "geometry/depth",
                                                    "scene/color"}
    engine.close()


# ------------------------------------------------------------------------------ lifetimes
PINGPONG_NAMES = {f"life/{k}" for k in ("params", "look", "placement", "counters", "trail",
                                        "state0", "state1", "image")}


def test_every_resource_is_released_on_delete_and_remade_on_a_rebuild(gpu):
    engine = life_engine((70, 33), density=0.3)
    assert set(engine.resources.names("life")) == PINGPONG_NAMES
    engine.system_of("life", "life").paint(engine.entity_ref("life"), [(1, 1)])
    assert set(engine.resources.names("life")) == PINGPONG_NAMES | {"life/paint"}
    buffers = PINGPONG_NAMES - {"life/image"}
    old = {n: engine.resources.buffer_view(n).buffer for n in buffers}
    old_image = engine.resources["life/image"]

    engine.entity("life").life.size = (200, 40)   # a rebuild-class field
    engine.step(1)
    assert set(engine.resources.names("life")) == PINGPONG_NAMES   # paint: made on the next one
    for name in buffers:
        assert engine.resources.buffer_view(name).buffer is not old[name], name
    assert engine.resources.buffer_view("life/state0").size == (200 + 31) // 32 * 40 * 4
    image = engine.resources["life/image"]
    assert isinstance(image, TextureResource) and image is not old_image
    assert image.texture.size[:2] == (200, 40)
    assert engine.state("life")["cells"].shape == (40, 200)

    engine.entity("life").life.memory = "inplace"
    engine.step(1)
    assert set(engine.resources.names("life")) == (PINGPONG_NAMES - {"life/state1"}
                                                   | {"life/staging"})

    engine.delete("life")
    assert engine.resources.names("life") == []
    assert not [p for p in engine.passes() if p.startswith("life:")]
    engine.spawn("life", {"life": Life(size=(40, 8), density=0.5)})
    assert set(engine.resources.names("life")) == PINGPONG_NAMES
    engine.step(1)
    assert engine.state("life")["cells"].shape == (8, 40)
    engine.close()


def test_a_paint_larger_than_its_buffer_runs_in_chunks(gpu, monkeypatch):
    from emberfx.systems.life import system as life

    monkeypatch.setattr(life, "PAINT_EDITS", 3)   # 3 words per dispatch: many chunks
    size = (70, 33)
    engine = life_engine(size, paused=True)
    system = engine.system_of("life", "life")
    cells = np.zeros((33, 70), bool)
    cells[::2, ::3] = True
    system.paint(engine.entity_ref("life"), np.argwhere(cells)[:, ::-1])
    assert engine.resources.buffer_view("life/paint").size == 3 * 8   # 3 edits of 2 u32
    np.testing.assert_array_equal(engine.state("life")["cells"], cells)
    np.testing.assert_array_equal(system.words(engine.entity_ref("life")), pack_cells(cells))
    engine.close()


# ---------------------------------------------------------------------------- the pass lists
# `emberfx passes`: the population is counted in the READBACK phase, on the steps that read it
# back, and one pass gathers every layer's count; a scene of one layer has no gather pass (its
# count is the only region: the ring slot copies it from the layer's buffer). STEP is the
# pingpong step's name, "sweep" where the device has subgroups, else "step" (four generations a
# step: one sweep, or four in-place steps and commits). The layers draw into the multisampled
# geometry target ([render] msaa = 4 by default), whose depth is resolved after; the additive
# labels come after that.
SCENE_PASSES = {
    "life": ["life:life:clear", "life:life:STEP0", "life:life:trail", "life:life:display",
             "life:life:draw", "scene:frame:depth_resolve", "scene:frame:present",
             "life:life:population"],
    "life_rules": [
        "conway:life:clear", "highlife:life:clear", "day_and_night:life:clear",
        "conway:life:STEP0", *(f"highlife:life:{kind}{g}" for g in range(4)
                                for kind in ("step", "commit")),
        "day_and_night:life:STEP0",
        "conway:life:display", "highlife:life:display", "day_and_night:life:display",
        "conway:life:draw", "highlife:life:draw", "day_and_night:life:draw",
        "scene:frame:depth_resolve", "conway_label:label:draw", "highlife_label:label:draw",
        "day_and_night_label:label:draw", "scene:frame:present",
        "conway:life:population", "highlife:life:population", "day_and_night:life:population",
        "scene:frame:readback"],
}


@pytest.mark.parametrize("scene", sorted(SCENE_PASSES))
def test_the_passes_of_the_life_scenes_are_unchanged(gpu, scene):
    r = subprocess.run([sys.executable, "-m", "emberfx", "passes", f"scenes/{scene}.toml"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    step = "sweep" if gpu.subgroup_size else "step"
    rows = [line.split() for line in r.stdout.splitlines() if line.strip()[:1].isdigit()]
    listed, numbers = [row[2] for row in rows], [int(row[0]) for row in rows]
    assert listed == [p.replace("STEP", step) for p in SCENE_PASSES[scene]]
    assert numbers == list(range(1, len(listed) + 1))


def test_the_frame_graph_of_the_life_scenes_is_unchanged(gpu, scenes_dir):
    from emberfx.model.scene import load_scene

    # pass count and compute passes per step as before: every step's generations in one pass
    for scene, passes in SCENE_PASSES.items():
        with Engine(load_scene(scenes_dir / f"{scene}.toml"), size=(64, 36)) as engine:
            engine.step(1)
            assert len(engine.passes()) == len(passes)
            assert engine.stats()["compute_passes_per_step"] == 1
