"""``emberfx bench particle_life``: steps per second of the grid (counting sort) and all-pairs
neighbour searches, 2D, about 20 particles per r_max x r_max cell. The grid runs with each of its
kernels, gathered (the default), per_particle, cell_tiled and baseline (the earliest), in the same
run; each row of a newer kernel carries its speed-up over baseline at the same size, and
whether the state after the first 20 steps was the same bytes. The rows "gathered, half" run the
opt-in precision = "half" (16-bit positions in the neighbour loop): approximate, so no state
comparison (particle life is chaotic)."""

from __future__ import annotations

import hashlib
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
    grid_sizes = (50_000, 200_000, 1000, 4000) if ctx.is_software else (
        50_000, 1 << 20, 1 << 22, 4000, 16000, 64000)
    pair_sizes = (1000, 4000) if ctx.is_software else (4000, 16000, 64000)
    Kernel = Literal["gathered", "per_particle", "cell_tiled", "baseline"]
    Precision = Literal["exact", "half"]
    cases: list[tuple[Literal["grid", "all_pairs"], Kernel, Precision, int]]
    kernels: tuple[Kernel, ...] = ("baseline", "per_particle", "cell_tiled", "gathered")
    cases = [("grid", k, "exact", n) for n in grid_sizes for k in kernels]
    cases += [("grid", "gathered", "half", n) for n in grid_sizes]
    cases += [("all_pairs", "gathered", "exact", n) for n in pair_sizes]
    baseline: dict[int, tuple[float, bytes]] = {}   # baseline steps/s and state, by count
    r_max = 0.02
    for mode, kernel, precision, n in cases:
        side = max(3.2 * r_max, math.sqrt(n / 20.0) * r_max)
        label = f"{n:,} particles, {mode}" + (f", {kernel}" if mode == "grid" else "") + (
            f", {precision}" if precision != "exact" else "")
        try:
            scene = Scene(SceneSettings(seed=2), Camera(kind="orthographic"), [EntitySpec(
                "swarm", {"particle_life": ParticleLife(count=n, species=6, r_max=r_max,
                                                        box=[side, side], neighbours=mode,
                                                        grid_kernel=kernel,
                                                        precision=precision)})])
            engine = Engine(scene, size=(64, 64))
        except EmberError as exc:
            rows.append({"name": f"particle life step ({label})", "value": None,
                         "unit": "skipped", "note": str(exc)})
            continue
        engine.step(20)              # let clusters form: neighbour counts grow
        state = engine.state("swarm")
        digest = hashlib.sha256(b"".join(state[k].tobytes() for k in sorted(state))).digest()
        iterations = 3 if ctx.is_software else 20
        seconds = timed_passes(ctx.device, engine.frame_passes({Phase.CLEAR, Phase.SIMULATE}),
                               iterations)
        row = {"name": f"particle life step ({label})", "value": 1.0 / seconds,
               "unit": "steps/s", "ms_per_step": seconds * 1e3, "particle_steps_per_s": n / seconds}
        if mode == "grid" and kernel == "baseline":
            baseline[n] = (1.0 / seconds, digest)
        elif mode == "grid" and n in baseline:
            row["speedup_over_baseline"] = 1.0 / seconds / baseline[n][0]
            if precision == "exact":
                # the kernels add the same terms in the same order: after 20 steps the state
                # must be the same bytes
                row["same_state_as_baseline"] = baseline[n][1] == digest
        rows.append(row)
        engine.close()
    return rows
