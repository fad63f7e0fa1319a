"""The benchmarks (emberfx.bench) use only public API, and the public pieces they need work:
``Engine.frame_passes`` and the Life component's ``kernel`` option."""

from __future__ import annotations

import ast
from pathlib import Path

import life_model
import numpy as np
import pytest

import emberfx.bench
from emberfx.core.errors import EmberError
from emberfx.core.frame_graph import SIMULATION_PHASES, Phase
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings, load_scene
from emberfx.systems.life.component import Life

BENCH_DIR = Path(emberfx.bench.__file__).parent


def private_uses(source: str) -> list[str]:
    """Private names reached from outside their module, and another module's constants set
    from outside (a flipped module global): ``x._name``, ``from m import _name``,
    ``m.NAME = ...``. ``self._name`` inside the module's own classes is fine."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__") \
                and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("emberfx"):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names
                      if a.name.startswith("_")]
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [f"line {node.lineno}: sets .{t.attr}" for t in targets
                      if isinstance(t, ast.Attribute) and t.attr.isupper()]
    return found


def test_the_checker_finds_what_it_looks_for():
    source = ("from emberfx.bench import _sync\n"
              "g = engine._graph('x')\n"
              "life_system.PINGPONG_KERNEL = 'quad'\n"
              "self._ok = 1\n"
              "n = type(x).__name__\n")
    assert sorted(private_uses(source)) == ["line 1: import _sync", "line 2: ._graph",
                                            "line 3: sets .PINGPONG_KERNEL"]


@pytest.mark.parametrize("path", sorted(BENCH_DIR.glob("*.py")), ids=lambda p: p.name)
def test_bench_modules_use_only_public_api(path):
    assert private_uses(path.read_text()) == []


def test_bench_modules_stay_small_and_names_are_unchanged():
    sizes = {p.name: len(p.read_text().splitlines()) for p in BENCH_DIR.glob("*.py")}
    assert max(sizes.values()) <= 500, sizes
    assert emberfx.bench.NAMES == ["emitter", "life", "particle_life", "cloth", "fractal",
                                   "post", "frame", "looks", "sweep", "export", "modifiers",
                                   "many", "capacity", "neighbours", "fluid", "gas"]


def test_frame_passes_are_the_frame_in_order_and_filter_by_phase(gpu, scenes_dir):
    with Engine(load_scene(scenes_dir / "sampler.toml"), size=(64, 36)) as engine:
        every = engine.frame_passes()
        assert [p.name for p in every] == engine.passes()
        simulation = engine.frame_passes(SIMULATION_PHASES)
        assert simulation == [p for p in every if p.phase in SIMULATION_PHASES]
        assert simulation and len(simulation) < len(every)
        assert engine.frame_passes({Phase.RENDER}) == [p for p in every
                                                       if p.phase == Phase.RENDER]
        with pytest.raises(EmberError) as info:
            engine.frame_passes({"simulate"})
        assert "\n" not in str(info.value) and "'simulate'" in str(info.value)
        assert "SIMULATE" in str(info.value)


def life_engine(width: int, **fields) -> Engine:
    scene = Scene(SceneSettings(seed=5), Camera(kind="orthographic"), [EntitySpec(
        "life", {"life": Life(size=(width, 40), density=0.4, **fields)})])
    return Engine(scene, size=(32, 32))


@pytest.mark.parametrize("kernel,width,expected", [
    ("word", 128, "word"), ("quad", 128, "quad"),
    ("quad", 100, "word"),          # quads need whole 128-cell groups: falls back
])
def test_life_kernel_option_picks_the_step_kernel(gpu, kernel, width, expected):
    with life_engine(width, kernel=kernel, steps_per_frame=3) as engine:
        assert engine.stats()["entities"]["life"]["kernel"] == expected
        names = engine.passes()
        assert any(n.startswith("life:life:step") for n in names), names
        start = engine.state("life")["cells"]
        engine.step(2)
        np.testing.assert_array_equal(engine.state("life")["cells"],
                                      life_model.step(start, "B3/S23", True, 6))


def test_life_auto_kernel_is_the_sweep_where_subgroups_exist(gpu):
    with life_engine(128, steps_per_frame=3) as engine:
        stats = engine.stats()["entities"]["life"]
    if gpu.subgroup_size:
        assert stats["kernel"] == "sweep" and stats["sweep"]["lanes"] == gpu.subgroup_size
    else:
        assert stats["kernel"] == "quad" and "sweep" not in stats
    with life_engine(128, memory="inplace") as engine:
        assert engine.stats()["entities"]["life"]["kernel"] == "inplace"


def test_editing_the_life_kernel_rebuilds_the_layer(gpu):
    """kernel is a reload field: the layer is rebuilt (from its initial soup, as for every
    reload field) with the new kernel, and steps exactly."""
    with life_engine(128, kernel="word", steps_per_frame=2) as engine:
        initial = engine.state("life")["cells"]
        engine.step(3)
        engine.components_of("life")["life"].kernel = "quad"
        engine.step(1)
        assert engine.stats()["entities"]["life"]["kernel"] == "quad"
        np.testing.assert_array_equal(engine.state("life")["cells"],
                                      life_model.step(initial, "B3/S23", True, 2))
