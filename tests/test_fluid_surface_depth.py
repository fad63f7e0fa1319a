"""The screen-space water writes its depth into the scene depth (fluid/surface_depth.wgsl), on
the software GPU, against oracles that share none of its code: a settled pool seen from above
by an orthographic camera has, over the water, the linear depth of its top surface (the fill's
height, from the scene's numbers) and, elsewhere, the depth of the same scene without the
water; an additive spark behind the water is hidden where the water covers it and shows beside
it, and one in front of the water shows over it (pixels compared with renders without the
spark)."""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene

SIZE = (96, 72)
RADIUS = 0.015
FLOOR = -0.2          # the bounds' lower z: the pool's floor (gravity points along -z)
DEPTH = 0.09          # the fill's thickness along z
EYE = 10.0            # the orthographic camera's eye: z = far / 2, looking down -z
SETTLE = 24           # steps: the lattice has settled onto the floor
HALF = (0.3, 0.2)     # the pool's half extent in x and y (the bounds' and the fill's)
VIEW = 0.6            # the camera's height: y in [-0.3, 0.3]; x in [-0.4, 0.4] at 4:3


def pool_toml(water: bool = True, extra: str = "", msaa: int = 1) -> str:
    """A pool DEPTH deep over the bounds' whole x-y footprint, gravity toward the camera's far
    side (-z), a grey backdrop plane at z = -0.5 behind everything; seen from +z; ``msaa``:
    the backdrop drawn multisampled, its depth resolved before the water."""
    fill_center, fill_half = [0.0, 0.0, FLOOR + DEPTH / 2], [*HALF, DEPTH / 2]
    fluid = f"""
[[entity]]
name = "water"
[entity.fluid]
particle_radius = {RADIUS}
gravity = [0.0, 0.0, -9.81]
fill = [{{ center = {fill_center}, half_size = {fill_half} }}]
bounds = {{ center = [0.0, 0.0, 0.0], half_size = [{HALF[0]}, {HALF[1]}, {-FLOOR}] }}
look = {{ color = "#2f86c8", absorption = 2.0, ior = 1.33 }}
""" if water else ""
    return f"""
[scene]
seed = 5
background = "#000000"
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = {VIEW}
far = {2 * EYE}
[render]
msaa = {msaa}
{fluid}
[[entity]]
name = "backdrop"
[entity.collider]
shape = "plane"
point = [0.0, 0.0, -0.5]
normal = [0.0, 0.0, 1.0]
extent = 3.0
color = "#404040"
{extra}
"""


def spark(name: str, x: float, z: float) -> str:
    """An additive emitter holding still sparks 0.06 wide at (x, 0, z)."""
    return f"""
[[entity]]
name = "{name}"
[entity.emitter]
capacity = 64
rate = 400.0
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = [{x}, 0.0, {z}]
size = 0.06
color = "#ffffff"
blend = "additive"
"""


def pixel_of(x: float, y: float) -> tuple[int, int]:
    """(row, column) of the world point (x, y) in the SIZE image."""
    w, h = SIZE
    half_h = VIEW / 2
    half_w = half_h * w / h
    return int((half_h - y) / (2 * half_h) * h), int((x + half_w) / (2 * half_w) * w)


def settled(text: str) -> Engine:
    engine = Engine(loads_scene(text, path="pool.toml"), size=SIZE)
    engine.step(SETTLE)
    return engine


@pytest.mark.parametrize("msaa", [1, 4])
def test_the_water_writes_the_depth_of_its_top_surface(gpu, msaa):
    """Over the pool (3 pixels in from its edges) the linear view depth is the distance from
    the eye to the fill's top (z = FLOOR + DEPTH), within one particle radius (measured: 2.4
    mm); around the pool it is the backdrop's, as without the water."""
    engine = settled(pool_toml(msaa=msaa))
    try:
        z = engine.state("water")["position"][:, 2]
        depth = engine.render_depth()
    finally:
        engine.close()
    dry = settled(pool_toml(water=False, msaa=msaa))
    try:
        backdrop = dry.render_depth()
    finally:
        dry.close()
    assert np.allclose(backdrop[np.isfinite(backdrop)], EYE + 0.5, atol=1e-3)
    top = EYE - (FLOOR + DEPTH)
    rows, cols = np.indices(depth.shape)
    r0, c0 = pixel_of(-HALF[0], HALF[1])
    r1, c1 = pixel_of(HALF[0], -HALF[1])
    inside = (rows > r0 + 3) & (rows < r1 - 3) & (cols > c0 + 3) & (cols < c1 - 3)
    outside = (rows < r0 - 3) | (rows > r1 + 3) | (cols < c0 - 3) | (cols > c1 + 3)
    assert inside.sum() > 1000 and outside.sum() > 1000
    assert float(z.max()) < FLOOR + DEPTH + RADIUS   # settled: nothing splashed up
    error = np.abs(depth[inside] - top)
    assert float(error.max()) < RADIUS, (float(error.max()), float(np.median(depth[inside])))
    assert np.array_equal(depth[outside], backdrop[outside])


@pytest.mark.parametrize(("in_front", "msaa"), [(False, 1), (True, 1), (False, 4)],
                         ids=["behind", "in-front", "behind-msaa"])
def test_a_spark_behind_the_water_is_hidden_and_one_in_front_shows(gpu, in_front, msaa):
    """Two equal sparks, one over the middle of the pool and one beside it (outside its x
    extent); the light each adds is summed over a window around it. Behind the water (farther
    than its floor, in front of the backdrop) the middle one adds nothing, the one beside adds
    light; in front of the water the middle one adds as much as the one beside (drawn over the
    water, not dimmed by it)."""
    z = 0.1 if in_front else -0.35
    sparks = spark("middle", 0.0, z) + spark("beside", 0.35, z)
    images = {}
    for key, extra in (("plain", ""), ("sparks", sparks)):
        engine = settled(pool_toml(extra=extra, msaa=msaa))
        try:
            images[key] = engine.render_hdr()[..., :3].astype(np.float64)
        finally:
            engine.close()
    added = (images["sparks"] - images["plain"]).sum(-1)

    def light_around(x: float) -> float:
        r, c = pixel_of(x, 0.0)
        return float(added[r - 5:r + 6, c - 5:c + 6].sum())

    middle, beside = light_around(0.0), light_around(0.35)
    assert beside > 10.0, beside
    if in_front:
        assert abs(middle / beside - 1.0) < 0.05, (middle, beside)
    else:
        assert abs(middle) < 1e-3 * beside, (middle, beside)


@pytest.mark.parametrize("msaa", [1, 4])
def test_the_water_runs_after_the_opaque_draws_and_before_the_transparent_ones(gpu, msaa):
    """The frame's order (Engine.passes): the water's depth draw, copy and shade come after
    every opaque draw, a Life layer's quad included (which waits on a compute pass of the same
    phase), and the depth resolve; and before every additive, alpha-blended and soft sprite."""
    extra = spark("additive", 0.0, 0.1) + """
[[entity]]
name = "alpha"
[entity.emitter]
blend = "alpha"
rate = 10.0
[[entity]]
name = "soft"
[entity.emitter]
soft = 0.2
rate = 10.0
[[entity]]
name = "life"
[entity.life]
size = [40, 40]
density = 0.3
"""
    engine = Engine(loads_scene(pool_toml(extra=extra, msaa=msaa), path="pool.toml"),
                    size=(64, 48))
    try:
        order = {name: k for k, name in enumerate(engine.passes())}
    finally:
        engine.close()
    opaque = ["life:life:draw", "backdrop:collider:draw"]
    if msaa > 1:
        opaque.append("scene:frame:depth_resolve")
    water = [f"water:fluid:surface:{p}" for p in ("depth", "copy", "shade")]
    sprites = [f"{e}:emitter:draw" for e in ("additive", "alpha", "soft")]
    assert max(order[p] for p in opaque) < order[water[0]] < order[water[1]] < order[water[2]]
    assert order[water[2]] < min(order[p] for p in sprites)
