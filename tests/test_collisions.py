"""Particles against colliders (sphere, plane, box, SDF volumes), against the numpy replica in
collision_model.py and published facts: bounce heights fall by e^2, Coulomb friction stops a
slide after v^2 / (2 mu g), and no particle ever ends inside a solid."""

from __future__ import annotations

import collision_model as model
import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.model.transforms import rotation_matrix

DT = 1.0 / 60.0
G = 9.81

HEAD = f"""
[scene]
name = "collisions"
seed = 5
fixed_dt = {DT!r}
size = [32, 32]
[camera]
kind = "orthographic"
height = 8.0
"""


def one_particle(y0=1.0, vx=0.0, restitution=0.7, friction=0.0, substeps=16, extra=""):
    return f"""
[[entity]]
name = "ball"
[entity.emitter]
capacity = 64
rate = 0.0
bursts = [{{ time = 0.0, count = 1 }}]
lifetime = 1000.0
speed = {vx}
direction = [1.0, 0.0, 0.0]
spread_deg = 0.0
position = [0.0, {y0}, 0.0]
gravity = [0.0, {-G}, 0.0]
substeps = {substeps}
collision = {{ restitution = {restitution}, friction = {friction} }}
{extra}
"""


FLOOR = """
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
"""


def trajectory(engine, name, steps):
    """(steps, 3) positions of the one alive particle after each step."""
    out = []
    for _ in range(steps):
        engine.step()
        s = engine.state(name)
        assert int(s["alive"].sum()) == 1
        out.append(s["position"][s["alive"]][0])
    return np.array(out)


def bounce_peaks(y):
    return [y[i] for i in range(1, len(y) - 1) if y[i] >= y[i - 1] and y[i] > y[i + 1]]


def test_bounce_heights_fall_by_restitution_squared_and_match_the_replica(gpu):
    e = 0.7
    with Engine(loads_scene(HEAD + one_particle(restitution=e) + FLOOR)) as engine:
        engine.step()   # the burst is born at the end of the first step
        gpu_path = trajectory(engine, "ball", 260)
    expected = model.drop_on_plane(1.0, 0.0, 260, DT, 16, G, e, 0.0)
    # float32 over 260 steps and four bounces: the replica's path within 2 mm
    np.testing.assert_allclose(gpu_path[:, 1], expected[:, 1], atol=2e-3)
    peaks = [1.0] + bounce_peaks(gpu_path[:, 1])
    assert len(peaks) >= 4
    ratios = np.array(peaks[1:4]) / np.array(peaks[:3])
    np.testing.assert_allclose(ratios, e * e, rtol=0.02)
    assert gpu_path[:, 1].min() >= -1e-5   # never below the floor


def test_coulomb_friction_stops_a_slide_where_coulomb_says(gpu):
    mu, v0 = 0.5, 2.0
    scene = HEAD + one_particle(y0=0.0, vx=v0, restitution=0.0, friction=mu) + FLOOR
    with Engine(loads_scene(scene)) as engine:
        engine.step()
        path = trajectory(engine, "ball", 40)
    distance = path[-1, 0] - path[0, 0]
    expected = model.drop_on_plane(0.0, v0, 40, DT, 16, G, 0.0, mu)
    # the slide ends where v0^2 / (2 mu g) says, within the discretisation (1%)
    assert abs(path[-1, 0] - v0 ** 2 / (2 * mu * G)) < 0.01 * v0 ** 2 / (2 * mu * G) + v0 * DT / 16
    np.testing.assert_allclose(path[:, 0], expected[:, 0], atol=2e-3)
    assert np.allclose(path[-5:, 0], path[-1, 0], atol=1e-6)   # and it stays stopped
    assert distance > 0.3


SOLIDS = """
[[entity]]
name = "ball"
[entity.collider]
shape = "sphere"
center = [-1.2, 0.6, 0.0]
radius = 0.6
[[entity]]
name = "crate"
[entity.collider]
shape = "box"
center = [1.2, 0.7, 0.1]
half_size = [0.5, 0.3, 0.4]
rotation_deg = [10.0, 35.0, 20.0]
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
point = [0.0, -0.2, 0.0]
normal = [0.05, 1.0, 0.0]
"""


def signed_distances(x):
    """Every particle's distance to each solid of SOLIDS (negative inside)."""
    d_ball, _ = model.sphere_distance(x, (-1.2, 0.6, 0.0), 0.6)
    d_crate = model.box_distance(x, (1.2, 0.7, 0.1), (0.5, 0.3, 0.4),
                                 rotation_matrix((10.0, 35.0, 20.0)))
    d_floor, _ = model.plane_distance(x, (0.0, -0.2, 0.0), (0.05, 1.0, 0.0))
    return np.stack([d_ball, d_crate, d_floor], axis=1)


@pytest.mark.parametrize("capacity", [1000, 777])
def test_particles_never_end_inside_a_solid(gpu, capacity):
    rain = f"""
[[entity]]
name = "rain"
[entity.emitter]
capacity = {capacity}
rate = 4000.0
lifetime = [1.0, 2.5]
speed = [0.0, 3.0]
direction = [0.0, -1.0, 0.0]
spread_deg = 40.0
position = [0.0, 2.5, 0.0]
shape = {{ kind = "box", size = [4.0, 0.2, 1.5] }}
substeps = 2
collision = {{ restitution = 0.4, friction = 0.3 }}
"""
    touched = 0
    with Engine(loads_scene(HEAD + rain + SOLIDS)) as engine:
        for step in range(200):
            engine.step()
            s = engine.state("rain")
            alive = s["alive"]
            d = signed_distances(s["position"][alive].astype(np.float64))
            # every slot, every step: on or outside every solid (float32 rounding allowed)
            assert d.min() >= -2e-5, (step, d.min(axis=0))
            touched += int((d.min(axis=1) < 1e-3).sum())
    assert touched > 1000   # particles did rest on the solids, not just miss them


def test_inside_keeps_particles_in_a_box(gpu):
    cage = """
[[entity]]
name = "cage"
[entity.collider]
shape = "box"
center = [0.0, 0.0, 0.0]
half_size = [1.0, 0.5, 0.8]
rotation_deg = [0.0, 0.0, 30.0]
inside = true
"""
    spray = """
[[entity]]
name = "spray"
[entity.emitter]
capacity = 500
rate = 3000.0
lifetime = 3.0
speed = [2.0, 6.0]
spread_deg = 180.0
substeps = 2
collision = { restitution = 0.9, friction = 0.0 }
"""
    with Engine(loads_scene(HEAD + spray + cage)) as engine:
        for _ in range(60):
            engine.step()
            s = engine.state("spray")
            x = s["position"][s["alive"]].astype(np.float64)
            d = model.box_distance(x, (0, 0, 0), (1.0, 0.5, 0.8), rotation_matrix((0, 0, 30)))
            assert d.max() <= 2e-5


def test_kill_and_lifetime_loss_on_contact(gpu):
    killer = one_particle(y0=0.2, extra="").replace(
        "collision = { restitution = 0.7, friction = 0.0 }", "collision = { kill = true }")
    with Engine(loads_scene(HEAD + killer + FLOOR)) as engine:
        engine.step()
        alive = []
        for _ in range(20):
            engine.step()
            alive.append(int(engine.state("ball")["alive"].sum()))
    # falls 0.2 m: t = sqrt(0.4 / g) = 0.2 s, 12 steps; then dies on the floor
    assert alive[:11] == [1] * 11 and alive[-1] == 0
    loser = one_particle(y0=0.0, restitution=0.0).replace(
        "friction = 0.0 }", "friction = 0.0, lifetime_loss = 0.5 }")
    with Engine(loads_scene(HEAD + loser + FLOOR)) as engine:
        engine.step()
        engine.step()
        life = engine.state("ball")["lifetime"].max()
    assert life == pytest.approx(500.0, rel=1e-6)   # one step resting on the floor: half gone


def test_collision_material_and_collider_errors():
    with pytest.raises(SceneError, match=r"collision.restitution"):
        loads_scene(HEAD + one_particle(restitution=1.5))
    with pytest.raises(SceneError, match=r"collider.sdf.*found neither"):
        loads_scene(HEAD + '[[entity]]\nname = "s"\n[entity.collider]\nshape = "sdf"\n')
    with pytest.raises(SceneError, match=r"collider.visible.*depth"):
        loads_scene(HEAD + '[[entity]]\nname = "d"\n[entity.collider]\nshape = "depth"\n'
                    'visible = true\n')


DEPTH_SCENE = f"""
[scene]
name = "depth"
seed = 2
fixed_dt = {DT!r}
size = [96, 72]
[camera]
kind = "perspective"
position = [0.0, 3.0, 4.0]
target = [0.0, 0.0, 0.0]
fov_deg = 50.0
[[entity]]
name = "sheet"
[entity.cloth]
resolution = [16, 16]
size = [3.0, 3.0]
position = [-1.5, 0.0, 1.5]
rotation_deg = [-90.0, 0.0, 0.0]
pins = "none"
gravity = [0.0, 0.0, 0.0]
[[entity]]
name = "rain"
[entity.emitter]
capacity = 800
rate = 1500.0
lifetime = 3.0
speed = 0.0
position = [0.0, 1.2, 0.0]
shape = {{ kind = "disk", radius = 1.0 }}
substeps = 2
collision = {{ restitution = 0.0, friction = 0.5 }}
[[entity]]
name = "drawn"
[entity.collider]
shape = "depth"
thickness = 0.15
"""


@pytest.mark.parametrize("render", [True, False])
def test_depth_collision_stops_particles_on_the_drawn_cloth(gpu, render):
    with Engine(loads_scene(DEPTH_SCENE)) as engine:
        for _ in range(75):
            engine.step()
            if render:
                engine.render()
        s = engine.state("rain")
    x = s["position"][s["alive"]]
    over_sheet = np.all(np.abs(x[:, [0, 2]]) < 1.4, axis=1)
    assert over_sheet.sum() > 300
    if render:   # stopped within the thickness of the drawn surface (y = 0), never deeper
        assert x[over_sheet, 1].min() >= -0.15
        assert (np.abs(x[over_sheet, 1]) < 0.02).sum() > 300   # resting on it
    else:        # nothing drawn yet: depth collision does nothing and they fall through
        assert x[over_sheet, 1].min() < -1.0


def test_encoding_before_any_frame_uniform_leaves_depth_collisions_off(gpu):
    """Engine.encode() records a frame before anything wrote the frame uniform (benchmarks do):
    the view it leaves is all zeros, singular. The next step must not fail inverting it; depth
    collisions then act as before any render: particles fall through."""
    from emberfx.bench.harness import output_texture

    with Engine(loads_scene(DEPTH_SCENE)) as engine:
        output = output_texture(engine)
        try:
            for _ in range(75):
                engine.step()
                encoder = engine.device.create_command_encoder()
                engine.encode(encoder, output)
                engine.device.queue.submit([encoder.finish()])
        finally:
            output.destroy()
        s = engine.state("rain")
    x = s["position"][s["alive"]]
    over_sheet = np.all(np.abs(x[:, [0, 2]]) < 1.4, axis=1)
    assert over_sheet.sum() > 300 and x[over_sheet, 1].min() < -1.0
