"""``emberfx bench many``: what a frame costs as the number of emitters grows (1, 10, 100, 1000),
batched (like emitters share arenas and dispatches: systems/emitter/batches.py) and, in the same
run, alone (``Engine(batching=False)``: every emitter its own passes), the baseline; and batched
without culling the sprites that cover no pixel centre (systems/emitter/culling.py).

Each emitter has a ragged capacity (MEAN_CAPACITY +- half of it, seeded) and one of the three
blend modes, so no two pools are alike. A frame is one fixed step plus a draw at 640x360, as
``bench frame`` times it: CPU milliseconds are the median frame's Python time without its
``queue.submit`` calls (GPU idle on a software adapter, pipelined on a GPU, for the reason
frame.py gives); GPU milliseconds time whole frames encoded back to back in one submission
(timestamps on a GPU; wall time on a software adapter, whose compute timestamps are wrong when a
render pass follows). Passes per frame counts the frame's passes without the readbacks.

Each case reports both paths; the batched rows carry ``vs_alone``, the alone figure over the
batched one (the speed-up). Cases run in order, and each one's cost (build, warm-up,
measurement) predicts the next by the ratio of emitter counts; a case predicted to take more
than the time budget is not started: its rows carry value None and a note with the prediction.
On a 2-core CPU through lavapipe that is the 1000-emitter case.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from emberfx.bench.frame import measure_frames
from emberfx.bench.harness import output_texture, timed
from emberfx.systems.emitter.tuning import DEFAULT, EmitterTuning

COUNTS = (1, 10, 100, 1000)
MEAN_CAPACITY = 10_000
BLENDS = ("additive", "alpha", "opaque")
SIZE = (640, 360)
BUDGET_SECONDS = {"software": 90.0, "gpu": 120.0}   # per case, predicted before it starts


def many_scene_text(count: int, mean_capacity: int = MEAN_CAPACITY, seed: int = 7) -> str:
    """A scene of ``count`` emitters on a grid, capacities mean_capacity +- 50% (seeded) and
    blend modes drawn from BLENDS; each emitter runs ~90% full, as the emitter bench's do."""
    rng = np.random.default_rng(seed)
    capacities = rng.integers(mean_capacity // 2, mean_capacity * 3 // 2 + 1, count)
    blends = rng.choice(BLENDS, count)
    side = int(np.ceil(np.sqrt(count)))
    parts = [f'[scene]\nname = "many"\nseed = {seed}\nsize = [{SIZE[0]}, {SIZE[1]}]\n'
             '[camera]\nkind = "perspective"\nposition = [0.0, 4.0, 14.0]\n'
             'target = [0.0, 0.0, 0.0]\n']
    for index, (capacity, blend) in enumerate(zip(capacities, blends, strict=True)):
        x = (index % side - (side - 1) / 2) * 8.0 / side
        z = (index // side - (side - 1) / 2) * 8.0 / side
        parts.append(f"""
[[entity]]
name = "fx{index}"
[entity.emitter]
capacity = {int(capacity)}
rate = {0.9 * int(capacity) / 2.0}
lifetime = [1.0, 3.0]
speed = [0.5, 1.5]
position = [{x:.3f}, 0.0, {z:.3f}]
size = 0.01
blend = "{blend}"
""")
    return "".join(parts)


def bench_many(counts=COUNTS, mean_capacity: int = MEAN_CAPACITY,
               budget_seconds: float | None = None) -> list[dict]:
    """Rows per emitter count: CPU ms per frame, GPU ms per frame, passes per frame."""
    from emberfx.core.gpu import get_context

    ctx = get_context()
    if budget_seconds is None:
        budget_seconds = BUDGET_SECONDS["software" if ctx.is_software else "gpu"]
    rows: list[dict] = []
    previous: tuple[int, float] | None = None   # (emitters, seconds the case took)
    for count in counts:
        predicted = 0.0 if previous is None else previous[1] * count / previous[0]
        if previous is not None and predicted > budget_seconds:
            note = (f"not run: predicted {predicted:.0f} s from the {previous[0]}-emitter case "
                    f"(linear in emitters), over the {budget_seconds:.0f} s budget per case")
            rows += (case_rows(count, None, note=note)
                     + case_rows(count, None, note=note, variant=" unculled")
                     + case_rows(count, None, note=note, batching=False))
            continue
        start = time.perf_counter()
        batched = measure_many(ctx, count, mean_capacity, batching=True)
        unculled = measure_many(ctx, count, mean_capacity, batching=True,
                                tuning=replace(DEFAULT, cull_from=None))
        alone = measure_many(ctx, count, mean_capacity, batching=False)
        previous = (count, time.perf_counter() - start)
        rows += (case_rows(count, batched, baseline=alone, unculled=unculled)
                 + case_rows(count, unculled, variant=" unculled")
                 + case_rows(count, alone, batching=False))
    return rows


def case_rows(count: int, measured: dict | None, note: str = "", *, batching: bool = True,
              baseline: dict | None = None, unculled: dict | None = None,
              variant: str = "") -> list[dict]:
    """The rows of one emitter count and path; ``measured`` None gives value-None rows with
    ``note``; ``baseline``: the alone figures of the same case, for ``vs_alone``; ``unculled``:
    the batched figures without culling (systems/emitter/culling.py), for ``vs_unculled``;
    ``variant``: a label suffix."""
    label = (f"{count} emitter{'s' if count > 1 else ''}" + ("" if batching else " alone")
             + variant)
    units = {"cpu_ms": "ms/frame CPU (no submit)", "gpu_ms": "ms/frame GPU",
             "gpu_step_ms": "ms/step GPU", "passes": "passes/frame"}
    names = {"cpu_ms": f"{label}, step + render {SIZE[0]}x{SIZE[1]}, CPU",
             "gpu_ms": f"  {label}, GPU", "gpu_step_ms": f"  {label}, GPU of the step alone",
             "passes": f"  {label}, passes"}
    rows = []
    for key in ("cpu_ms", "gpu_ms", "gpu_step_ms", "passes"):
        row: dict = {"name": names[key], "value": None if measured is None else measured[key],
                     "unit": units[key], "emitters": count, "batching": batching,
                     "culling": batching and not variant}
        if measured is None:
            row["note"] = note
        else:
            row["particles"] = measured["particles"]
            if key == "cpu_ms":
                row["mode"] = measured["mode"]
            if baseline is not None and measured[key]:
                row["vs_alone"] = baseline[key] / measured[key]
            if unculled is not None and measured[key]:
                row["vs_unculled"] = unculled[key] / measured[key]
        rows.append(row)
    return rows


def measure_many(ctx, count: int, mean_capacity: int, batching: bool = True,
                 tuning: EmitterTuning = DEFAULT) -> dict:
    """One case and path (``tuning``: the emitters' culling, for the unculled rows): build the
    scene, warm it up, time CPU and GPU per frame, count passes."""
    from emberfx.core.frame_graph import SIMULATION_PHASES, Phase
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    scene = loads_scene(many_scene_text(count, mean_capacity), path="<bench many>")
    with Engine(scene, size=SIZE, batching=batching, emitter_tuning=tuning) as engine:
        engine.step(30)            # pools towards steady state (half a mean lifetime)
        passes = len([p for p in engine.frame_passes() if p.phase != Phase.READBACK])
        # fewer frames as the case grows: the median needs a handful, not sixty
        frames = 60 if count <= 10 else (20 if count <= 100 else 6)
        frame = measure_frames(engine, pipelined=not ctx.is_software, frames=frames,
                               warmup=min(20, frames))
        output = output_texture(engine)
        try:
            iterations = 1 if ctx.is_software or count >= 1000 else 10
            seconds = timed(ctx.device, lambda enc: engine.encode(enc, output), iterations,
                            timestamps=not ctx.is_software)
            # the simulation's share (the rest is drawing count x ~10k sprites)
            step = timed(ctx.device, lambda enc: engine.encode(enc, output, SIMULATION_PHASES),
                         iterations, timestamps=not ctx.is_software)
        finally:
            output.destroy()
        particles = sum(engine.components_of(name)["emitter"].capacity
                        for name in engine.entity_names())
    return {"cpu_ms": frame["python"], "gpu_ms": seconds * 1e3, "gpu_step_ms": step * 1e3,
            "passes": passes,
            "particles": int(particles),
            "mode": "GPU idle" if ctx.is_software else "pipelined"}
