"""Emission features on the GPU: bursts, shapes, radial and inherited velocity, emission over
distance, prewarm, and the appearance baked over life."""

from __future__ import annotations

import math

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.colors import srgb_to_linear
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.looks_feature import LOOK_SAMPLES, LOOKS, bake_looks

DT = 1.0 / 60.0
HEAD = f"""
[scene]
name = "emission"
seed = 5
fixed_dt = {DT!r}
size = [48, 32]
background = "#000000"
[camera]
kind = "orthographic"
height = 6.0
"""


def engine_for(fields: str, capacity: int = 4000, size=(48, 32)) -> Engine:
    text = HEAD + f"""
[[entity]]
name = "e"
[entity.emitter]
capacity = {capacity}
{fields}
"""
    return Engine(loads_scene(text), size=size)


def born_this_step(engine) -> np.ndarray:
    state = engine.state("e")
    return state["alive"] & (state["age"] == 0.0)


def test_bursts_emit_their_exact_counts():
    engine = engine_for("""rate = 0.0
lifetime = 100.0
bursts = [{ time = 0.0, count = 500, repeat = 0.5, cycles = 3 }, { time = 0.2, count = 77 }]""")
    alive = []
    for _ in range(100):
        engine.step()
        alive.append(int(engine.state("e")["alive"].sum()))
    alive = np.array(alive)
    fire_steps = {0: 500, 12: 77, 30: 500, 60: 500}
    expected = np.cumsum([fire_steps.get(k, 0) for k in range(100)])
    np.testing.assert_array_equal(alive, expected)


SHAPES = [
    ('{ kind = "point" }', "point"),
    ('{ kind = "sphere", radius = 0.7 }', "ball"),
    ('{ kind = "sphere", radius = 0.7, surface = true }', "sphere"),
    ('{ kind = "box", size = [1.0, 0.4, 2.0] }', "box"),
    ('{ kind = "box", size = [1.0, 0.4, 2.0], surface = true }', "box-surface"),
    ('{ kind = "disk", radius = 0.6 }', "disk"),
    ('{ kind = "disk", radius = 0.6, surface = true }', "circle"),
    ('{ kind = "cone", radius = 0.6, angle_deg = 30.0 }', "disk"),
    ('{ kind = "ring", radius = 0.8, thickness = 0.3 }', "annulus"),
    ('{ kind = "ring", radius = 0.8, thickness = 0.3, surface = true }', "ring-circle"),
]


@pytest.mark.parametrize("shape,region", SHAPES, ids=[s[1] + str(i) for i, s in enumerate(SHAPES)])
def test_shape_samples_lie_in_or_on_the_shape(gpu, shape, region):
    origin = np.array([0.5, -0.25, 0.1])
    axis = np.array([0.0, 0.6, 0.8])     # disk, cone and ring lie across this axis
    engine = engine_for(f"""rate = 120000.0
lifetime = 10.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = {origin.tolist()}
direction = {axis.tolist()}
shape = {shape}""")
    engine.step()
    state = engine.state("e")
    p = state["position"][state["alive"]].astype(np.float64) - origin
    assert len(p) == 2000
    r = np.linalg.norm(p, axis=1)
    along = p @ axis
    planar = np.linalg.norm(p - along[:, None] * axis, axis=1)
    eps = 1e-5
    if region == "point":
        assert r.max() < eps
    elif region == "ball":
        assert r.max() <= 0.7 + eps and r.min() < 0.3 and r.max() > 0.65
        assert abs(np.mean(r ** 3) / 0.7 ** 3 - 0.5) < 0.05          # uniform in volume
    elif region == "sphere":
        np.testing.assert_allclose(r, 0.7, atol=eps)
    elif region in ("box", "box-surface"):
        half = np.array([0.5, 0.2, 1.0])
        assert (np.abs(p) <= half + eps).all()
        on_face = (np.abs(np.abs(p) - half) < eps).any(axis=1)
        assert on_face.all() if region == "box-surface" else on_face.mean() < 0.01
    else:
        np.testing.assert_allclose(along, 0.0, atol=eps)               # in the plane across axis
        if region == "disk":
            assert planar.max() <= 0.6 + eps and planar.min() < 0.1
        elif region == "circle":
            np.testing.assert_allclose(planar, 0.6, atol=eps)
        elif region == "annulus":
            assert planar.min() >= 0.5 - eps and planar.max() <= 0.8 + eps
        elif region == "ring-circle":
            np.testing.assert_allclose(planar, 0.8, atol=eps)


def test_radial_velocity_points_away_from_the_centre(gpu):
    engine = engine_for("""rate = 30000.0
lifetime = 10.0
speed = 2.0
spread_deg = 0.0
velocity = "radial"
gravity = [0.0, 0.0, 0.0]
shape = { kind = "sphere", radius = 0.5, surface = true }""")
    engine.step()
    s = engine.state("e")
    p, v = s["position"][s["alive"]], s["velocity"][s["alive"]]
    cos = (p * v).sum(axis=1) / (np.linalg.norm(p, axis=1) * np.linalg.norm(v, axis=1))
    np.testing.assert_allclose(cos, 1.0, atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 2.0, rtol=1e-5)


def test_cone_directions_open_up_to_the_angle_at_the_rim(gpu):
    engine = engine_for("""rate = 30000.0
lifetime = 10.0
speed = 1.0
spread_deg = 0.0
gravity = [0.0, 0.0, 0.0]
shape = { kind = "cone", radius = 0.5, angle_deg = 30.0, surface = true }""")
    engine.step()
    s = engine.state("e")
    v = s["velocity"][s["alive"]]
    np.testing.assert_allclose(np.degrees(np.arccos(np.clip(v[:, 1], -1, 1))), 30.0, atol=1e-3)


def test_moving_emitter_inherits_velocity_and_emits_over_distance(gpu):
    engine = engine_for("""rate = 0.0
rate_over_distance = 20.0
inherit_velocity = 0.5
lifetime = 10.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]""")
    emitter = engine.entity("e").emitter
    engine.step()                                  # first step: not moved yet
    assert int(engine.state("e")["alive"].sum()) == 0
    for k in range(1, 6):
        emitter.position = (0.25 * k, 0.0, 0.0)    # 0.25 m per step = 5 births per step
        engine.step()
        new = born_this_step(engine)
        assert new.sum() == 5
        velocity = engine.state("e")["velocity"][new]
        np.testing.assert_allclose(velocity, [[0.5 * 0.25 / DT, 0.0, 0.0]] * 5, rtol=1e-5)


def test_prewarm_starts_in_the_steady_state(gpu):
    engine = engine_for("""rate = 600.0
lifetime = 1.0
prewarm = 2.0""")
    alive = int(engine.state("e")["alive"].sum())     # before the first step
    assert abs(alive - 600) <= 10
    assert engine.stats()["frame"] == 0


def test_looks_interpolate_colour_stops_in_linear_light():
    from emberfx.systems.emitter.component import Emitter

    e = Emitter(color=["#000000", "#ffffff"], alpha_curve=[1.0, 0.0], size_curve=[1.0, 3.0])
    looks = np.frombuffer(bake_looks(e), LOOKS)[0]
    mid = LOOK_SAMPLES // 2
    t = mid / (LOOK_SAMPLES - 1)
    np.testing.assert_allclose(looks["color"][mid, :3], t, rtol=1e-6)   # linear, not sRGB
    np.testing.assert_allclose(looks["color"][:, 3], np.linspace(1, 0, LOOK_SAMPLES), atol=1e-6)
    np.testing.assert_allclose(looks["size"].reshape(-1), np.linspace(1, 3, LOOK_SAMPLES),
                               rtol=1e-6)
    from emberfx.systems.emitter.component import ColorStop

    stops = Emitter(color=[ColorStop(0.0, "#ff0000"), ColorStop(0.5, "#0000ff")])
    looks = np.frombuffer(bake_looks(stops), LOOKS)[0]
    t = np.linspace(0.0, 1.0, LOOK_SAMPLES)
    np.testing.assert_allclose(looks["color"][:, 0], np.clip(1 - 2 * t, 0, 1), atol=1e-6)
    np.testing.assert_allclose(looks["color"][t >= 0.5, 2], 1.0)        # held after the last stop
    assert srgb_to_linear(0.5) == pytest.approx(0.214, abs=1e-3)


def test_pixel_sized_particles_cover_the_same_pixels_at_any_distance(gpu):
    def lit_pixels(z: float) -> int:
        text = HEAD.replace('kind = "orthographic"\nheight = 6.0',
                            'kind = "perspective"\nposition = [0.0, 0.0, 5.0]\n'
                            'target = [0.0, 0.0, 0.0]') + f"""
[[entity]]
name = "e"
[entity.emitter]
capacity = 1
rate = 60.0
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = [0.0, 0.0, {z}]
size = 10.0
size_unit = "pixels"
color = "#ffffff"
blend = "opaque"
"""
        engine = Engine(loads_scene(text), size=(48, 32))
        engine.step()
        return int((engine.render()[..., 0] > 128).sum())

    near, far = lit_pixels(2.0), lit_pixels(-6.0)
    assert abs(near - math.pi * 25) < 20 and abs(far - near) <= 6


@pytest.mark.parametrize("fields,pieces", [
    ('color = [{ t = 0.5, color = "#ffffff" }, { t = 0.2, color = "#000000" }]',
     ["emitter.color", "sorted by t"]),
    ("color = []", ["emitter.color", "at least one"]),
    ("bursts = [{ count = 5000 }]", ["emitter.bursts[0].count", "at most capacity (4000)", "5000"]),
    ('shape = { kind = "torus" }', ["emitter.shape.kind", "torus"]),
    ("size_curve = []", ["emitter.size_curve", "at least one"]),
    ("speed = inf", ["emitter.speed", "finite"]),
])
def test_bad_emission_input_is_one_line(fields, pieces):
    with pytest.raises(SceneError) as info:
        engine_text = (HEAD + '[[entity]]\nname = "e"\n[entity.emitter]\n'
                              f'capacity = 4000\n{fields}\n')
        loads_scene(engine_text, path="emission.toml")
    message = str(info.value)
    assert "\n" not in message and "entity 'e'" in message
    for piece in pieces:
        assert piece in message, (piece, message)


def test_alpha_emitters_draw_back_to_front(gpu):
    text = HEAD.replace('kind = "orthographic"\nheight = 6.0',
                        'kind = "perspective"\nposition = [1.0, 2.0, 6.0]\n'
                        'target = [0.0, 0.5, 0.0]') + """
[[entity]]
name = "e"
[entity.emitter]
capacity = 3001
rate = 6000.0
lifetime = [0.5, 2.0]
speed = [1.0, 3.0]
spread_deg = 60.0
shape = { kind = "box", size = [3.0, 1.0, 3.0] }
blend = "alpha"
"""
    engine = Engine(loads_scene(text), size=(48, 32))
    system, ref = engine.system_of("e", "emitter"), engine._ref("e")
    camera = engine.scene.camera
    forward = np.subtract(camera.target, camera.position)
    forward /= np.linalg.norm(forward)
    for _ in range(3):
        engine.step(12)
        engine.render()                       # the sort runs with the frame's camera
        state = engine.state("e")
        order = system.alive_list(ref)
        assert sorted(order) == list(np.flatnonzero(state["alive"]))
        depth = (state["position"][order] - np.asarray(camera.position)) @ forward
        assert len(order) > 500 and (np.diff(depth) <= 1e-5).all()   # non-increasing
