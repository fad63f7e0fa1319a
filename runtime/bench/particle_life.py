"""``emberfx bench particle_life``: steps per second of the grid (counting sort) and all-pairs
neighbour searches, 2D, about 20 particles per r_max x r_max cell."""

from __future__ import annotations

import math
from typing import Literal

from emberfx.bench.harness import timed_passes
from emberfx.core.errors import EmberError


def bench_particle_life() -> list[dict]:
    from emberfx.core.frame_graph import Phase
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.particle_life.component import ParticleLife

    ctx = get_context()
    rows: list[dict] = []
    cases: list[tuple[Literal["grid", "all_pairs"], int]]
    if ctx.is_software:
        cases = [("grid", n) for n in (50_000, 200_000)] + [("all_pairs", n) for n in (1000, 4000)]
        cases += [("grid", n) for n in (1000, 4000)]
    else:
        cases = [("grid", n) for n in (50_000, 1 << 20, 1 << 22)]
        cases += [(m, n) for n in (4000, 16000, 64000) for m in ("grid", "all_pairs")]
    r_max = 0.02
    for mode, n in cases:
        side = max(3.2 * r_max, math.sqrt(n / 20.0) * r_max)
        label = f"{n:,} particles, {mode}"
        try:
            scene = Scene(SceneSettings(seed=2), Camera(kind="orthographic"), [EntitySpec(
                "swarm", {"particle_life": ParticleLife(count=n, species=6, r_max=r_max,
                                                        box=[side, side], neighbours=mode)})])
            engine = Engine(scene, size=(64, 64))
        except EmberError as exc:
            rows.append({"name": f"particle life step ({label})", "value": None,
                         "unit": "skipped", "note": str(exc)})
            continue
        engine.step(20)              # let clusters form: neighbour counts grow
        iterations = 3 if ctx.is_software else 20
        seconds = timed_passes(ctx.device, engine.frame_passes({Phase.CLEAR, Phase.SIMULATE}),
                               iterations)
        rows.append({"name": f"particle life step ({label})", "value": 1.0 / seconds,
                     "unit": "steps/s", "ms_per_step": seconds * 1e3,
                     "particle_steps_per_s": n / seconds})
        engine.close()
    return rows
