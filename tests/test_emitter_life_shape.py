"""The Life emission shape (systems/emitter/life_shape.py, shaders/emitter/life_cells.wgsl and
life_shape.wgsl) on the software GPU, against numpy: the layer's state is read back before and
after each step, the eligible cells (born since the previous displayed state, or alive) computed
in numpy, and every particle born that step must lie in the square of an eligible cell, in the
layer's plane, and every eligible cell must get some. Several generations per step compare with
the state one step ago; an in-place layer gives the same births as a pingpong one; two runs give
the same bytes; a step with no eligible cell drops its births; `on` is a live edit; bad input is
a one-line SceneError."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.tuning import DEFAULT

SIZE = (16, 12)                     # cells: width, height
CENTER, QUAD = (1.0, 2.0, 0.5), (4.0, 3.0)
CELL = (QUAD[0] / SIZE[0], QUAD[1] / SIZE[1])
CORNER = (CENTER[0] - QUAD[0] / 2, CENTER[1] + QUAD[1] / 2)   # cell (0, 0)'s top-left
EDGE = 1e-5   # float32 positions of a few world units: on a cell's edge within this
BIRTHS_PER_STEP = 400   # rate x fixed_dt: enough that every eligible cell of a step gets some


def scene_text(*, on: str = "birth", memory: str = "pingpong", gens: int = 1,
               display: str = "quad", layer: str = "wall", life_extra: str = "",
               density: float = 0.35, emitter_extra: str = "") -> str:
    return f"""
[scene]
fixed_dt = 0.02
seed = 7
[[entity]]
name = "wall"
[entity.life]
size = [{SIZE[0]}, {SIZE[1]}]
density = {density}
memory = "{memory}"
steps_per_frame = {gens}
display = "{display}"
quad_center = [{", ".join(map(repr, CENTER))}]
quad_size = [{", ".join(map(repr, QUAD))}]
{life_extra}
[[entity]]
name = "e"
[entity.emitter]
capacity = 8192
rate = {BIRTHS_PER_STEP / 0.02}
lifetime = 0.05
speed = 0
gravity = [0, 0, 0]
position = [3.0, -1.0, 2.0]
shape = {{ kind = "life", layer = "{layer}", on = "{on}" }}
{emitter_extra}
"""


def cells_of(points: np.ndarray) -> list[set[tuple[int, int]]]:
    """For each world point, the cells (x, y) whose square holds it within EDGE."""
    u = (points[:, 0] - CORNER[0]) / CELL[0]
    v = (CORNER[1] - points[:, 1]) / CELL[1]
    du, dv = EDGE / CELL[0], EDGE / CELL[1]
    out = []
    for a, b in zip(u, v):
        xs = {int(np.floor(a - du)), int(np.floor(a + du))}
        ys = {int(np.floor(b - dv)), int(np.floor(b + dv))}
        out.append({(x, y) for x in xs for y in ys
                    if 0 <= x < SIZE[0] and 0 <= y < SIZE[1]})
    return out


def run(text: str, steps: int, edit=None, path=None, **engine_options) -> list[dict]:
    """Per step: the layer's cells before and after it, and the particles born in it."""
    out = []
    with Engine(loads_scene(text, path=path), size=(32, 32), **engine_options) as engine:
        engine.step()   # the first step has no previous state: it lists nothing
        for k in range(steps):
            if edit is not None:
                edit(engine, k)
            before = engine.state("wall")["cells"]
            engine.step()
            after = engine.state("wall")["cells"]
            state = engine.state("e")
            new = state["alive"] & (state["age"] == 0.0)
            out.append({"before": before, "after": after, "position": state["position"][new],
                        "raw": {key: v.copy() for key, v in state.items()}})
    return out


def check_step(step: dict, eligible: np.ndarray) -> None:
    """Every birth of the step lies in the plane and in an eligible cell's square; every
    eligible cell got one; none lies outside the eligible cells."""
    points = step["position"]
    assert eligible.any(), "the oracle needs eligible cells to check the step"
    assert len(points) == BIRTHS_PER_STEP
    np.testing.assert_allclose(points[:, 2], CENTER[2], atol=EDGE)
    hit = np.zeros_like(eligible)
    for p, cells in zip(points, cells_of(points)):
        inside = [c for c in cells if eligible[c[1], c[0]]]
        assert inside, f"birth at {p} lies in no eligible cell (cells {cells})"
        if len(inside) == 1:
            hit[inside[0][1], inside[0][0]] = True
    missing = np.argwhere(eligible & ~hit)
    assert len(missing) == 0, f"eligible cells (y, x) with no birth: {missing.tolist()}"


@pytest.mark.parametrize("on", ["birth", "alive"])
def test_births_fill_exactly_the_eligible_cells(on):
    for step in run(scene_text(on=on), 3):
        born = step["after"] & ~step["before"]
        check_step(step, born if on == "birth" else step["after"])


@pytest.mark.parametrize("allocation, one_pass, births_in_update", [
    ("ordered", True, False), ("ordered", True, True), ("atomic", False, False),
    ("ticket", False, False)])
def test_every_step_strategy_gives_births_in_the_eligible_cells(allocation, one_pass,
                                                                births_in_update):
    tuning = replace(DEFAULT, one_pass=one_pass, births_in_update=births_in_update)
    text = scene_text(emitter_extra=f'allocation = "{allocation}"')
    for step in run(text, 2, emitter_tuning=tuning):
        check_step(step, step["after"] & ~step["before"])


def test_several_generations_compare_with_the_previous_displayed_state():
    steps = run(scene_text(gens=3), 3)
    for step in steps:
        check_step(step, step["after"] & ~step["before"])


def test_in_place_layer_gives_the_same_births_as_pingpong():
    pingpong = run(scene_text(gens=2), 2)
    inplace = run(scene_text(gens=2, memory="inplace"), 2)
    for a, b in zip(pingpong, inplace):
        np.testing.assert_array_equal(a["after"], b["after"])
        check_step(b, b["after"] & ~b["before"])
        for key in a["raw"]:
            np.testing.assert_array_equal(a["raw"][key], b["raw"][key])


def test_two_runs_give_the_same_bytes():
    a, b = run(scene_text(), 2), run(scene_text(), 2)
    for x, y in zip(a, b):
        for key in x["raw"]:
            assert x["raw"][key].tobytes() == y["raw"][key].tobytes()


def test_a_blinker_spawns_in_its_two_new_cells(tmp_path):
    (tmp_path / "blinker.cells").write_text("!blinker\nOOO\n")
    text = scene_text(density=0.0, life_extra='pattern = "blinker.cells"\noffset = [6, 5]')
    path = tmp_path / "scene.toml"
    path.write_text(text)
    for step in run(text, 2, path=path):
        born = step["after"] & ~step["before"]
        assert born.sum() == 2   # the blinker turns: two cells are born each generation
        check_step(step, born)


def test_no_eligible_cell_drops_the_births():
    with Engine(loads_scene(scene_text(density=0.0)), size=(32, 32)) as engine:
        engine.step(3)
        state = engine.state("e")
        assert not state["alive"].any()


def test_on_is_a_live_edit():
    def edit(engine, k):
        if k == 1:
            engine.entity("e").emitter.shape.on = "alive"

    steps = run(scene_text(), 2, edit)
    check_step(steps[0], steps[0]["after"] & ~steps[0]["before"])
    check_step(steps[1], steps[1]["after"])


@pytest.mark.parametrize("change, message", [
    ({"layer": "wal"}, "emitter.shape.layer: no entity named 'wal'; did you mean 'wall'?"),
    ({"display": "fill"}, 'display = "fill"'),
    ({"on": "death"}, "emitter.shape.on: expected one of the allowed values"),
])
def test_bad_input_is_a_one_line_scene_error(change, message):
    with pytest.raises(SceneError) as info:
        scene = loads_scene(scene_text(**change))
        with Engine(scene, size=(32, 32)) as engine:
            engine.step()
    text = str(info.value)
    assert "\n" not in text and "entity 'e'" in text and message in text, text
    assert "shape" in text


def test_an_emitter_before_its_layer_and_a_resized_layer_follow():
    text = scene_text()
    life_start = text.index('[[entity]]\nname = "wall"')
    emitter_start = text.index('[[entity]]\nname = "e"')
    reordered = text[:life_start] + text[emitter_start:] + "\n" + text[life_start:emitter_start]
    assert reordered.index('name = "e"') < reordered.index('name = "wall"')
    for step in run(reordered, 1):
        check_step(step, step["after"] & ~step["before"])

    def edit(engine, k):
        if k == 1:
            engine.entity("wall").life.size = (12, 12)   # a new layer: the emitter follows

    with Engine(loads_scene(text), size=(32, 32)) as engine:
        engine.step(2)
        edit(engine, 1)
        engine.step()   # the new layer's first step: no previous state yet
        before = engine.state("wall")["cells"]
        engine.step()
        after = engine.state("wall")["cells"]
        state = engine.state("e")
        new = state["alive"] & (state["age"] == 0.0)
        points = state["position"][new]
        assert before.shape == (12, 12) and len(points) == BIRTHS_PER_STEP
        width = QUAD[0] / 12
        ix = np.floor((points[:, 0] - CORNER[0]) / width + EDGE).astype(int)
        iy = np.floor((CORNER[1] - points[:, 1]) / CELL[1] + EDGE).astype(int)
        born = after & ~before
        assert born[np.clip(iy, 0, 11), np.clip(ix, 0, 11)].mean() > 0.99


def test_deleting_the_layer_drops_births_and_a_new_one_gives_them_again():
    with Engine(loads_scene(scene_text(on="alive")), size=(32, 32)) as engine:
        engine.step(2)
        components = engine.components_of("wall")
        engine.delete("wall")
        engine.step(2)
        state = engine.state("e")
        assert not (state["alive"] & (state["age"] == 0.0)).any()
        engine.spawn("wall", {"life": components["life"]})
        engine.step()
        cells = engine.state("wall")["cells"]
        state = engine.state("e")
        new = state["alive"] & (state["age"] == 0.0)
        assert new.sum() == BIRTHS_PER_STEP
        check_step({"position": state["position"][new]}, cells)


def test_the_layer_and_its_quad_are_edits_the_births_follow():
    """`layer` rebuilds the emitter onto another layer; the layer's quad_center is live."""
    second = """
[[entity]]
name = "other"
[entity.life]
size = [16, 12]
density = 0.35
display = "quad"
quad_center = [1.0, 2.0, 0.5]
quad_size = [4.0, 3.0]
"""
    with Engine(loads_scene(scene_text(on="alive") + second), size=(32, 32)) as engine:
        engine.step()
        engine.entity("e").emitter.shape.layer = "other"
        engine.step()
        cells = engine.state("other")["cells"]
        assert not np.array_equal(cells, engine.state("wall")["cells"])
        state = engine.state("e")
        new = state["alive"] & (state["age"] == 0.0)
        check_step({"position": state["position"][new]}, cells)
        engine.entity("other").life.quad_center = (1.0, 2.0, -0.25)   # moved back along z
        engine.step()
        state = engine.state("e")
        new = state["alive"] & (state["age"] == 0.0)
        np.testing.assert_allclose(state["position"][new][:, 2], -0.25, atol=EDGE)
