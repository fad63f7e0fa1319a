"""Collision, SDF and event costs for ``emberfx bench emitter``: the emitter's update pass with
colliders against the same pass without, in the same run (16M particles on a GPU, 1M on a
software adapter), and the whole step of a parent emitter whose dying particles (1% a step)
each spawn 20 children in a second emitter, against the copy bandwidth.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from emberfx.bench.harness import timed_passes
from emberfx.core.errors import EmberError

HEAD = """
[scene]
name = "bench"
size = [256, 256]
"""

POOL = """
[[entity]]
name = "bench"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = [1.0, 3.0]
speed = [2.0, 5.0]
spread_deg = 60.0
shape = {{ kind = "sphere", radius = 1.5 }}
drag = 0.2
{extra}
"""

MATERIAL = 'collision = { restitution = 0.5, friction = 0.2 }'

PLANE_AND_SPHERES = """
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
point = [0.0, -1.0, 0.0]
[[entity]]
name = "left"
[entity.collider]
shape = "sphere"
center = [-1.0, 0.5, 0.0]
radius = 0.6
[[entity]]
name = "right"
[entity.collider]
shape = "sphere"
center = [1.0, 0.5, 0.0]
radius = 0.6
"""

SDF = """
[[entity]]
name = "shape"
[entity.collider]
shape = "sdf"
sdf = "{path}"
size = [3.0, 3.0, 3.0]
"""

EVENTS = """
[[entity]]
name = "parent"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = {lifetime}
speed = [1.0, 2.0]
shape = {{ kind = "sphere", radius = 1.5 }}
on_death = {{ emitter = "sparks", count = 20, inherit_velocity = 0.3 }}
[[entity]]
name = "sparks"
[entity.emitter]
capacity = {children}
lifetime = 0.1
speed = [1.0, 3.0]
spread_deg = 180.0
"""


def sphere_sdf(n: int = 64, size: float = 3.0, radius: float = 0.9) -> np.ndarray:
    cells = (np.arange(n) + 0.5) / n * size - size / 2
    z, y, x = np.meshgrid(cells, cells, cells, indexing="ij")
    return (np.sqrt(x * x + y * y + z * z) - radius).astype(np.float32)


def update_seconds(ctx, scene, iterations: int) -> float:
    """The update pass of the 'bench' emitter, at its steady state, with dt = 0 (the pool stays
    alive while the pass runs the same instructions; see bench/emitter.py)."""
    from emberfx.core.system import StepInfo
    from emberfx.engine.engine import Engine

    with Engine(scene, size=(256, 256)) as engine:
        engine.step(150)
        update = [p for p in engine.frame_passes() if p.name.endswith("bench:emitter:update")]
        engine.system_of("bench", "emitter").before_step(
            StepInfo(frame=engine.clock.steps, dt=0.0, seed=engine.scene.settings.seed))
        return timed_passes(ctx.device, update, iterations)


def collision_rows(ctx, bandwidth: float) -> list[dict]:
    from emberfx.core.frame_graph import SIMULATION_PHASES
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    capacity = 1 << (20 if ctx.is_software else 24)
    label = f"{capacity >> 20}M"
    iterations = 10 if ctx.is_software else 100
    rate = 0.9 * capacity / 2.0
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        np.save(Path(folder) / "shape.npy", sphere_sdf())
        where = Path(folder) / "bench.toml"
        variants = {
            "no colliders": POOL.format(capacity=capacity, rate=rate, extra=""),
            "1 plane + 2 spheres": POOL.format(capacity=capacity, rate=rate, extra=MATERIAL)
            + PLANE_AND_SPHERES,
            "SDF 64^3": POOL.format(capacity=capacity, rate=rate, extra=MATERIAL)
            + SDF.format(path="shape.npy"),
        }
        try:
            seconds = {name: update_seconds(ctx, loads_scene(HEAD + text, path=where), iterations)
                       for name, text in variants.items()}
        except EmberError as exc:   # beyond this device's limits: say so, keep going
            return [{"name": f"update with collisions ({label})", "value": None,
                     "unit": "skipped", "note": str(exc)}]
    base = seconds["no colliders"]
    for name, s in seconds.items():
        rows.append({"name": f"  update pass, {name} ({label})", "value": capacity / s / 1e9,
                     "unit": "G particle-steps/s", "ms": s * 1e3,
                     "cost_vs_no_colliders": s / base - 1.0})
    # one event level: 1% of the parent dies each step (lifetime 100 steps), 20 children each
    children = 2 * capacity
    events = HEAD + EVENTS.format(capacity=capacity, rate=capacity * 0.6, lifetime=100 / 60,
                                  children=children)
    try:
        with Engine(loads_scene(events, path="<bench>"), size=(256, 256)) as engine:
            engine.step(130)   # past the parent's first deaths: events every step
            seconds_step = timed_passes(ctx.device, engine.frame_passes(SIMULATION_PHASES),
                                        iterations)
            engine.step(3)
            parent = engine.stats()["entities"]["parent"]
    except EmberError as exc:
        rows.append({"name": f"step with events ({label})", "value": None, "unit": "skipped",
                     "note": str(exc)})
        return rows
    moved = 64 * (capacity + children)   # both pools read and written once
    rows.append({"name": f"  whole step, 1 event level, 1%/step x 20 children ({label})",
                 "value": (capacity + children) / seconds_step / 1e9,
                 "unit": "G particle-steps/s", "ms_per_step": seconds_step * 1e3,
                 "fraction_of_copy_bandwidth": moved / seconds_step / bandwidth,
                 "events_per_step": parent.get("events", {}).get("death")})
    return rows
