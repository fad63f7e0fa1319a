"""Particles that see each other (systems/emitter/neighbours_feature.py) on the GPU: an `update`
modifier's neighbour walk against a brute-force numpy oracle (counts exactly, position and
attribute sums to 1e-5 relative, dead slots never seen), byte-identical runs, particle
collision settling grains in a box (the median speed, the closest pair and the box), boids
(polarisation rising past 0.8 in 5 s, staying low without alignment and cohesion, a box that
does not wrap kept), live edits and one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene

DT = 1.0 / 60.0
RADIUS = 0.3

COUNT = """// counts the neighbours within neighbour_radius, sums their positions and tags
fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    var n = neighbours(*p, ctx);
    var k = 0u;
    var s = vec3f(0.0);
    var tags = 0.0;
    while (next_neighbour(&n)) {
        k += 1u;
        s += n.position;
        tags += neighbour_state(n).tag;
    }
    (*p).count = k;
    (*p).sum = s;
    (*p).tags = tags;
}
"""
TAG = """fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).tag = f32(ctx.slot % 97u) + 0.5;
}
"""


def counting_scene(folder: Path, capacity: int, count: int) -> Path:
    (folder / "count.wgsl").write_text(COUNT)
    (folder / "tag.wgsl").write_text(TAG)
    path = folder / "scene.toml"
    path.write_text(f"""
[scene]
seed = 5
fixed_dt = {DT!r}
[[entity]]
name = "dust"
[entity.emitter]
capacity = {capacity}
rate = 0
bursts = [{{ time = 0.0, count = {count} }}]
lifetime = 100
speed = 0
gravity = [0, 0, 0]
shape = {{ kind = "box", size = [2.0, 1.5, 1.0] }}
neighbour_radius = {RADIUS}
init = "tag.wgsl"
update = "count.wgsl"
attributes = {{ count = "u32", sum = "vec3f", tags = "f32", tag = "f32" }}
""")
    return path


def oracle(x: np.ndarray, tags: np.ndarray, radius: float):
    d = np.sqrt(((x[:, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    within = d < radius
    return within.sum(1), within @ x.astype(np.float64), within @ tags.astype(np.float64), d


@pytest.mark.parametrize("capacity, count", [(700, 700), (1000, 613), (64, 1)])
def test_modifier_neighbours_match_brute_force(gpu, tmp_path, capacity, count):
    """Static particles (no speed, no gravity): the walk of step 3 sees the positions the
    state shows. Ragged pools with dead slots (1000 slots, 613 born) and a lone particle."""
    engine = Engine(load_scene(counting_scene(tmp_path, capacity, count)), size=(16, 16))
    engine.step(3)
    state = engine.state("dust")
    alive = state["alive"]
    assert alive.sum() == count
    x, tags = state["position"][alive], state["tag"][alive]
    n, sums, tag_sums, d = oracle(x, tags, RADIUS)
    # pairs within 1e-6 of the radius may fall either way: leave their particles out
    sure = ~np.any(np.abs(d - RADIUS) < 1e-6, axis=1)
    assert sure.mean() > 0.95
    np.testing.assert_array_equal(state["count"][alive][sure], n[sure])
    scale = np.abs(x).sum() / max(len(x), 1) * np.maximum(n, 1)[:, None]
    assert np.all(np.abs(state["sum"][alive] - sums)[sure] <= 1e-5 * scale[sure] + 1e-6)
    assert np.allclose(state["tags"][alive][sure], tag_sums[sure], rtol=1e-5, atol=1e-4)
    if count > 1:
        assert n.mean() > 2.0   # the test sees neighbours at all


def test_runs_are_byte_identical(gpu, tmp_path):
    first = Engine(load_scene(counting_scene(tmp_path, 1000, 900)), size=(16, 16))
    second = Engine(load_scene(counting_scene(tmp_path, 1000, 900)), size=(16, 16))
    for engine in (first, second):
        engine.step(4)
    a, b = first.state("dust"), second.state("dust")
    for key in ("position", "velocity", "count", "sum", "tags"):
        assert a[key].tobytes() == b[key].tobytes(), key


def grains_scene(count: int, half: float = 0.25, **collision) -> str:
    fields = ", ".join(f"{k} = {v}" for k, v in {"radius": 0.01, **collision}.items())
    return f"""
[scene]
seed = 3
fixed_dt = {DT!r}
[[entity]]
name = "bin"
[entity.collider]
shape = "box"
center = [0, 0.3, 0]
half_size = [{half}, 0.3, {half}]
inside = true
[[entity]]
name = "grains"
[entity.emitter]
capacity = {count}
rate = {count}
lifetime = 1000
speed = 0.2
spread_deg = 20
direction = [0, -1, 0]
position = [0, 0.45, 0]
shape = {{ kind = "box", size = [{half * 1.4}, 0.05, {half * 1.4}] }}
collision = {{ restitution = 0.1, friction = 0.5 }}
particle_collision = {{ {fields} }}
"""


def closest_pairs(x: np.ndarray) -> np.ndarray:
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    return d.min(1)


def test_poured_grains_settle_without_overlap(gpu):
    """2,000 grains of radius 0.01 (friction 0.5, as sand's; 16 sweeps) poured for a second
    into a 0.5 m box settle in about five layers: after 3 s the median speed is below 0.05 m/s,
    no two are closer than 2 r less 1%, and none left the box."""
    engine = Engine(loads_scene(grains_scene(2000, restitution=0.3, friction=0.5,
                                             iterations=16)), size=(16, 16))
    engine.step(180)
    state = engine.state("grains")
    alive = state["alive"]
    x, v = state["position"][alive], state["velocity"][alive]
    assert len(x) == 2000
    assert np.median(np.linalg.norm(v, axis=1)) < 0.05
    assert closest_pairs(x).min() >= 0.02 * 0.99
    assert np.all(np.abs(x[:, [0, 2]]) <= 0.25) and np.all((x[:, 1] >= 0) & (x[:, 1] <= 0.6))
    assert x[:, 1].max() > 0.06   # a pile, not a layer pressed flat


def test_without_particle_collision_grains_pass_through_each_other(gpu):
    """The same pour with the feature off: the grains lie in one plane on the floor, closer
    than their diameter (what the feature prevents)."""
    text = grains_scene(2000, restitution=0.3).replace(
        "particle_collision = { radius = 0.01, restitution = 0.3 }", "")
    engine = Engine(loads_scene(text), size=(16, 16))
    engine.step(120)
    x = engine.state("grains")["position"][engine.state("grains")["alive"]]
    assert closest_pairs(x).min() < 0.01


def flock_scene(alignment: float, cohesion: float, wrap: bool = True, count: int = 2000) -> str:
    box = f"{{ center = [0, 0, 0], half_size = [2, 2, 2], wrap = {str(wrap).lower()} }}"
    return f"""
[scene]
seed = 3
fixed_dt = {DT!r}
[[entity]]
name = "flock"
[entity.emitter]
capacity = 2048
rate = 0
bursts = [{{ time = 0.0, count = {count} }}]
lifetime = 1000
speed = 1.0
spread_deg = 180
gravity = [0, 0, 0]
shape = {{ kind = "box", size = [4, 4, 4] }}
boids = {{ radius = 0.5, separation = 1.5, alignment = {alignment}, cohesion = {cohesion}, \
max_speed = 3.0, bounds = {box} }}
"""


def polarisation(engine: Engine) -> float:
    state = engine.state("flock")
    v = state["velocity"][state["alive"]]
    u = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return float(np.linalg.norm(u.mean(0)))


def local_order(engine: Engine, radius: float = 0.5, half: float = 2.0) -> float:
    """The mean over boids of |mean unit velocity| of the boids within ``radius`` (itself
    included; distances across the wrapped box of half-size ``half``): about 1/sqrt(k + 1) for
    k neighbours moving at random, 1 for a flock aligned locally. Unlike the global
    polarisation it does not wait for separate groups to agree, which depends on how the
    rounding of the adapter broke their symmetry."""
    state = engine.state("flock")
    x, v = state["position"][state["alive"]][:, :3], state["velocity"][state["alive"]][:, :3]
    u = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    d = x[:, None, :] - x[None, :, :]
    d -= 2.0 * half * np.round(d / (2.0 * half))
    near = (d * d).sum(-1) < radius * radius
    local = (near.astype(np.float32) @ u) / near.sum(1, keepdims=True)
    return float(np.linalg.norm(local, axis=1).mean())


def test_boids_align_within_five_seconds(gpu):
    engine = Engine(loads_scene(flock_scene(1.0, 0.8)), size=(16, 16))
    engine.step(1)
    assert polarisation(engine) < 0.2
    engine.step(299)
    assert polarisation(engine) > 0.8
    x = engine.state("flock")["position"]
    assert np.all(np.abs(x) <= 2.0 + 1e-5)   # wrapped into the box


def test_boids_without_alignment_and_cohesion_stay_disordered_until_edited(gpu):
    engine = Engine(loads_scene(flock_scene(0.0, 0.0)), size=(16, 16))
    engine.step(300)
    # 2000 boids in a box of edge 4 put ~16 within the radius: ~0.24 when unaligned (0.22
    # measured on lavapipe)
    assert polarisation(engine) < 0.3 and local_order(engine) < 0.35
    flock = engine.entity("flock").emitter
    flock.boids.alignment, flock.boids.cohesion = 1.0, 0.8   # live edits
    engine.step(360)
    # (lavapipe: 0.98 locally, 0.95 globally; an H100 aligned groups locally that still
    # disagreed globally, 0.59, after the same steps)
    assert local_order(engine) > 0.9


def test_boids_in_a_closed_box_stay_inside(gpu):
    engine = Engine(loads_scene(flock_scene(1.0, 0.8, wrap=False, count=500)), size=(16, 16))
    engine.step(240)
    x = engine.state("flock")["position"][engine.state("flock")["alive"]]
    assert np.all(np.abs(x) <= 2.0 + 1e-5)
    # steered off the walls: few hug them
    assert np.mean(np.any(np.abs(x) > 1.95, axis=1)) < 0.2


def test_neighbour_emitters_run_alone(gpu):
    """Two like emitters with boids do not batch (each grid is over its own slots)."""
    text = flock_scene(1.0, 0.8, count=200)
    text += text[text.index("[[entity]]"):].replace('name = "flock"', 'name = "other"')
    engine = Engine(loads_scene(text), size=(16, 16))
    engine.step(2)
    names = engine.passes()
    assert any(n.startswith("flock:emitter:update") for n in names)
    assert any(n.startswith("other:emitter:update") for n in names)


@pytest.mark.parametrize("field, value, expected", [
    ("particle_collision", "{ radius = 0 }", "particle_collision.radius"),
    ("particle_collision", "{ radius = 0.01, iterations = 0 }", "particle_collision.iterations"),
    ("boids", "{ radius = -1 }", "boids.radius"),
    ("boids", "{ bounds = { half_size = [1, 0, 1] } }", "boids.bounds.half_size"),
    ("neighbour_radius", "-0.5", "neighbour_radius"),
    ("boids", "{ radius = 0.5, alignmnet = 1 }", "alignment"),
])
def test_bad_values_are_one_line_errors(gpu, field, value, expected):
    text = f"""
[[entity]]
name = "e"
[entity.emitter]
{field} = {value}
"""
    with pytest.raises(SceneError) as caught:
        Engine(loads_scene(text), size=(16, 16))
    message = str(caught.value)
    assert "\n" not in message and expected in message and "'e'" in message, message
