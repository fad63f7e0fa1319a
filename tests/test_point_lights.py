"""Point lights on a real GPU (lavapipe in CI), against the falloff worked out here in numpy.

A plane faces +z at z = -DEPTH and an orthographic camera looks down -z, so the world point
(x, y, -DEPTH) of each pixel is known. The plane's colour at each pixel (its floor checker
included) is measured first with the directional light shining straight at it (intensity 1,
no ambient, no shadows): every other image divided by that one is the light the pixel receives.
A point light of linear colour C at P gives a point X of the plane (normal +z)

    C x max(n.L, 0) / d^2 x clamp(1 - (d / range)^4, 0, 1)^2,   d = |P - X|, d >= 0.01

(systems/lights/component.py). The images are the linear HDR scene target, drawn at one sample
per pixel (pixel centres).
"""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.core.point_lights import LIGHT_CAPACITY, TILE_LIGHTS
from emberfx.engine.engine import Engine
from emberfx.model.colors import linear_color
from emberfx.model.scene import loads_scene

SIZE = 72             # pixels, square (not a whole number of 16-pixel tiles... 72 = 4.5 tiles)
HEIGHT = 4.0          # world units shown from bottom to top
PPU = SIZE / HEIGHT
DEPTH = 1.0           # the plane's z is -DEPTH

_COLUMNS = (np.arange(SIZE) + 0.5 - SIZE / 2) / PPU
WORLD_X, WORLD_Y = np.meshgrid(_COLUMNS, -_COLUMNS)   # pixel centres, world units


def scene_text(lights, *, light: str = "intensity = 0.0\nambient = 0.0", extra: str = "") -> str:
    text = f"""
[scene]
name = "point lights"
size = [{SIZE}, {SIZE}]
background = "#000000"
[render]
msaa = 1
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = {HEIGHT}
[light]
direction = [0.0, 0.0, 1.0]
shadows = false
{light}
[[entity]]
name = "wall"
[entity.collider]
shape = "plane"
point = [0.0, 0.0, {-DEPTH}]
normal = [0.0, 0.0, 1.0]
extent = 20.0
color = "#b0b0b0"
"""
    for k, (position, color, intensity, reach) in enumerate(lights):
        text += f"""
[[entity]]
name = "lamp{k}"
[entity.point_light]
position = {list(position)}
color = "{color}"
intensity = {intensity}
range = {reach}
"""
    return text + extra


def hdr(text: str) -> np.ndarray:
    engine = Engine(loads_scene(text), size=(SIZE, SIZE))
    try:
        return engine.render_hdr()[..., :3].astype(np.float64)
    finally:
        engine.close()


@pytest.fixture(scope="module")
def albedo() -> np.ndarray:
    """The plane's linear colour at each pixel."""
    return hdr(scene_text([], light="intensity = 1.0\nambient = 0.0"))


def expected(lights) -> np.ndarray:
    """(SIZE, SIZE, 3): the light the plane receives from ``lights``."""
    total = np.zeros((SIZE, SIZE, 3))
    for position, color, intensity, reach in lights:
        px, py, pz = position
        dx, dy, dz = px - WORLD_X, py - WORLD_Y, pz + DEPTH
        d2 = dx * dx + dy * dy + dz * dz
        cosine = np.maximum(dz, 0.0) / np.sqrt(d2)
        window = np.clip(1.0 - (d2 / reach ** 2) ** 2, 0.0, 1.0) ** 2
        falloff = window / np.maximum(d2, 1e-4)
        total += np.asarray(linear_color(color)[:3]) * intensity * (cosine * falloff)[..., None]
    return total


def test_one_light_follows_inverse_square_and_window(albedo):
    lights = [((0.3, -0.2, -0.4), "#ffd090", 0.8, 2.0)]
    got = hdr(scene_text(lights)) / albedo
    want = expected(lights)
    assert want.max() > 1.0 and (want == 0.0).mean() > 0.2   # a bright pool and a dark rim
    assert np.abs(got - want).max() <= 0.05 * want.max()
    assert np.all(got[want == 0.0] == 0.0)   # nothing beyond the range


def test_lights_add_ambient_once(albedo):
    lights = [((-1.0, 0.8, -0.5), "#ff4020", 0.5, 1.5), ((0.9, 0.5, -0.2), "#40a0ff", 0.9, 3.0),
              ((0.2, -1.1, -0.7), "#ffffff", 0.3, 1.0)]
    ambient = "intensity = 0.0\nambient = 0.1"
    alone = [hdr(scene_text([light], light=ambient)) for light in lights]
    none = hdr(scene_text([], light=ambient))
    together = hdr(scene_text(lights, light=ambient))
    summed = none + sum(a - none for a in alone)
    assert np.abs(together - summed).max() <= 2e-3 * together.max()
    assert np.abs(together / albedo - 0.1 - expected(lights)).max() <= 0.05 * together.max()


def test_256_lights_on_every_tile(albedo):
    """Every one of 256 lights reaches every pixel (the lists hold all of them), and their sum
    matches numpy's; one more than a tile holds would leave lights out."""
    assert TILE_LIGHTS >= 256 and LIGHT_CAPACITY >= 256
    rng = np.random.default_rng(7)
    lights = [((float(x), float(y), float(z)), "#%02x%02x%02x" % tuple(rng.integers(64, 256, 3)),
               0.004, 8.0)
              for x, y, z in zip(rng.uniform(-2, 2, 256), rng.uniform(-2, 2, 256),
                                 rng.uniform(-0.8, -0.3, 256))]
    got = hdr(scene_text(lights)) / albedo
    want = expected(lights)
    assert np.abs(got - want).max() <= 0.05 * want.max()
    # without the last 56 lights the image is measurably darker: each one counts
    fewer = expected(lights[:200])
    assert np.abs(fewer - want).min() > 0.05 * 0.05 * want.max()
