"""A gas's fire as a point light (look.fire_light), on lavapipe against numpy: the wall of
tests/test_point_lights.py, lit by nothing but a gas above the view whose only glowing cells are
a 2 x 2 x 2 block at one temperature, receives the light of one point light at the block's
centre whose colour is fire_light x fire_intensity x the block's glow x its volume (the glow: the
blackbody table's entry at that temperature x (kelvin / 1500)^4, as docs/guides/gas.md states),
with the [entity.point_light] falloff; with fire_light = 0 the wall stays black, and turning it
on live lights it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_point_lights import DEPTH, SIZE, WORLD_X, WORLD_Y, scene_text

from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.gas.records import blackbody_table

CELL = 0.1
LOWER = np.array([-0.4, 3.0, -0.9])   # the gas box's lowest corner: above the view, 8^3 cells
KELVIN = 2000.0                        # temperature 1.7 at 1000 K per unit: a table entry
FIRE, INTENSITY, REACH = 2.0, 100.0, 6.0


def gas_text(fire_light: float) -> str:
    centre = LOWER + 4 * CELL
    return f"""
[[entity]]
name = "fire"
[entity.gas]
resolution = [8, 8, 8]
cell = {CELL}
center = {centre.tolist()}
buoyancy = 0.0
cooling = 0.0
dissipation = 0.0
[entity.gas.look]
absorption = 0.0
scattering = 0.0
fire_intensity = {FIRE}
fire_light = {fire_light}
fire_light_range = {REACH}
"""


def run(fire_light: float, lit_later: float | None = None) -> np.ndarray:
    engine = Engine(loads_scene(scene_text([], extra=gas_text(fire_light))), size=(SIZE, SIZE))
    try:
        temperature = np.zeros((8, 8, 8), np.float32)
        temperature[1:3, 5:7, 2:4] = (KELVIN - 300.0) / 1000.0   # [z, y, x]
        engine.system_of("fire", "gas").load(engine.entity_ref("fire"), temperature=temperature)
        if lit_later is not None:
            engine.render_hdr()
            gas: Any = engine.components_of("fire")["gas"]
            gas.look.fire_light = lit_later
        return engine.render_hdr()[..., :3].astype(np.float64)
    finally:
        engine.close()


def expected_light(intensity: float) -> np.ndarray:
    table = np.frombuffer(blackbody_table(), np.float32).reshape(-1, 4)
    chroma = table[int((KELVIN - 500.0) / 100.0), :3].astype(np.float64)
    glow = chroma * (KELVIN / 1500.0) ** 4
    color = intensity * FIRE * glow * 8 * CELL ** 3
    centre = LOWER + CELL * np.array([3.0, 6.0, 2.0])   # x 2..3, y 5..6, z 1..2: their middle
    dx, dy, dz = centre[0] - WORLD_X, centre[1] - WORLD_Y, centre[2] + DEPTH
    d2 = dx * dx + dy * dy + dz * dz
    cosine = np.maximum(dz, 0.0) / np.sqrt(d2)
    window = np.clip(1.0 - (d2 / REACH ** 2) ** 2, 0.0, 1.0) ** 2
    return color * (cosine * window / d2)[..., None]


@pytest.fixture(scope="module")
def albedo() -> np.ndarray:
    engine = Engine(loads_scene(scene_text([], light="intensity = 1.0\nambient = 0.0")),
                    size=(SIZE, SIZE))
    try:
        return engine.render_hdr()[..., :3].astype(np.float64)
    finally:
        engine.close()


def test_the_fire_lights_the_wall_as_one_point_light_of_its_glow(gpu, albedo):
    got = run(INTENSITY) / albedo
    want = expected_light(INTENSITY)
    assert want.max() > 0.05
    assert np.abs(got - want).max() <= 0.05 * want.max()


def test_no_fire_light_leaves_the_wall_dark_and_turning_it_on_lights_it(gpu, albedo):
    assert np.all(run(0.0) == 0.0)
    got = run(0.0, lit_later=INTENSITY) / albedo
    assert np.abs(got - expected_light(INTENSITY)).max() <= 0.05 * expected_light(
        INTENSITY).max()
