"""Size sweeps for ``emberfx bench --plot``: throughput against size for each family, with the
compute-copy roofline where a family's bytes per item make one meaningful.

Each family's sweep is a dict (the ``sweep`` part of ``bench --plot DIR --json``)::

    {"title": ..., "x_label": ..., "unit": ..., "roofline": {"value", "label"} or None,
     "series": {"<series>": [{"size", "label", "value", "note"?}, ...]}}

A point's value is None when its size was not run, and then its note says why: beyond the
device (the EmberError the Engine raised, e.g. a buffer over the storage-binding limit) or beyond
the family's time budget. The budget is checked before each size from the previous size's cost,
scaled linearly by the size ratio, so a sweep never starts a size it expects to overrun.

On a software adapter the sweeps time wall clock around each submission: lavapipe's timestamps
came back thousands of times too fast once a frame with render passes had run in the same process
(Life at 16384x16384, after the emitter sweep).

The measurements reuse the per-family benchmarks: ``emitter_case`` (bench emitter), the
scenes and ``timed_passes`` calls of bench life / particle_life / cloth, and ``bench_many``.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Literal

from emberfx.bench.harness import copy_row, timed_passes
from emberfx.core.errors import EmberError
from emberfx.systems.life.kernels import SWEEP_GENS

if TYPE_CHECKING:
    from emberfx.engine.engine import Engine

FAMILIES = ("emitter", "life", "particle_life", "cloth", "many")
BUDGET_SECONDS = {"software": 45.0, "gpu": 150.0}   # per family
# Bytes a unit of work must move at least, for the copy roofline: an emitter particle-step and
# a cloth vertex-substep read and write 32 B each; a Life generation reads and writes 1 bit/cell.
BYTES_PER_ITEM = {"emitter": 64.0, "life": 0.25, "cloth": 64.0}
# What the roofline bounds where a family's default kernel is not bound by it: the Life sweep
# kernel steps SWEEP_GENS generations per pass over the cells, so it may run above it.
ROOFLINE_OF = {"life": f"\nof one generation a pass; the default kernel steps {SWEEP_GENS} a pass"}

SIZES = {
    "emitter": [(1 << k, f"{(1 << k) >> 10}k" if k < 20 else f"{(1 << k) >> 20}M")
                for k in range(16, 27, 2)],
    "life": [((w, h), f"{w}x{h}") for w, h in ((1024, 1024), (4096, 4096), (16384, 16384),
                                                 (65536, 32768))],
    "particle_life": [(n, f"{n >> 10}k" if n < 1 << 20 else f"{n >> 20}M")
                      for n in (1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22)],
    "cloth": [(s, f"{s}x{s}") for s in (64, 128, 256, 512, 1024, 2048)],
    "many": [(n, str(n)) for n in (1, 10, 100, 1000)],
}
TITLES = {
    "emitter": ("emitter whole step (ordered, 0 attractors)", "particles in the pool",
                "G particle-steps/s"),
    "life": ("Life step (pingpong, default kernel, density 0.3)", "cells", "Gcell/s"),
    "particle_life": ("particle life step (2D grid, ~20 per cell)", "particles",
                      "M particle-steps/s"),
    "cloth": ("cloth step (16 substeps, 12 springs per vertex)", "vertices",
              "M vertex-substeps/s"),
    "many": ("many emitters, step + render 640x360 (batched, unculled, alone)", "emitters",
             "emitter-frames/s"),
}
SCALE = {"emitter": 1e9, "life": 1e9, "particle_life": 1e6, "cloth": 1e6}


def item_count(family: str, size) -> int:
    """The x value of a size: particles, cells, vertices or emitters."""
    if family == "life":
        return size[0] * size[1]
    if family == "cloth":
        return size * size
    return size


def run_sweeps(families=FAMILIES, budget_seconds: float | None = None,
               sizes: dict | None = None) -> dict:
    """Every family's sweep; ``sizes`` overrides SIZES per family (tests use small ones)."""
    from emberfx.core.gpu import get_context

    ctx = get_context()
    many_budget = budget_seconds          # None: bench many's own budget per case
    if budget_seconds is None:
        budget_seconds = BUDGET_SECONDS["software" if ctx.is_software else "gpu"]
    bandwidth = copy_row(ctx)[1] if any(f in BYTES_PER_ITEM for f in families) else 0.0
    out = {}
    for family in families:
        family_sizes = (sizes or {}).get(family, SIZES[family])
        title, x_label, unit = TITLES[family]
        roofline = None
        if family in BYTES_PER_ITEM and bandwidth > 0:
            roofline = {"value": bandwidth / BYTES_PER_ITEM[family] / SCALE[family],
                        "label": f"compute-copy roofline ({bandwidth / 1e9:.3g} GB/s at "
                                 f"{BYTES_PER_ITEM[family]:g} B per item)"
                                 f"{ROOFLINE_OF.get(family, '')}"}
        extra: dict = {}
        if family == "many":
            series, extra["rows"] = many_series(family_sizes, many_budget)
        else:
            measure = {"emitter": lambda n: emitter_rate(ctx, n, bandwidth),
                       "life": lambda size: life_rate(ctx, size),
                       "particle_life": lambda n: particle_life_rate(ctx, n),
                       "cloth": lambda side: cloth_rate(ctx, side)}[family]
            series = {"measured": sweep(family, family_sizes, measure, budget_seconds)}
            if family == "particle_life":   # the approximate opt-in beside the exact default
                series = {"exact (default)": series["measured"],
                          "precision = half (opt-in)": sweep(
                              family, family_sizes,
                              lambda n: particle_life_rate(ctx, n, "half"), budget_seconds)}
        out[family] = {"title": title, "x_label": x_label, "unit": unit, "roofline": roofline,
                       "series": series, **extra}
    return out


def sweep(family: str, sizes, measure, budget_seconds: float) -> list[dict]:
    """Run ``measure(size) -> (items per second, note)`` for each size within the budget."""
    points: list[dict] = []
    spent, last = 0.0, None    # last: (items, seconds) of the latest size run
    for size, label in sizes:
        items = item_count(family, size)
        point: dict = {"size": items, "label": label, "value": None}
        if last is not None:
            predicted = last[1] * items / last[0]
            if spent + predicted > budget_seconds:
                point["note"] = (f"not run: predicted {predicted:.0f} s (linear from {last[0]:,}"
                                 f"), over the {budget_seconds:.0f} s budget of this sweep")
                points.append(point)
                continue
        start = time.perf_counter()
        try:
            rate, note = measure(size)
        except EmberError as exc:          # beyond this device: say so, keep going
            rate, note = None, str(exc)
        seconds = time.perf_counter() - start
        spent += seconds
        if rate is not None:
            point["value"] = rate / SCALE[family]
            last = (items, seconds)
        else:
            point["note"] = note
        points.append(point)
    return points


def many_series(sizes, budget_seconds: float | None) -> tuple[dict, list[dict]]:
    """CPU and GPU emitter-frames per second from ``bench_many``'s cases, batched, batched
    without culling and alone,
    and bench many's rows themselves (passes, the ratios)."""
    from emberfx.bench.many import bench_many

    rows = bench_many(counts=[size for size, _ in sizes], budget_seconds=budget_seconds)
    by_unit = {"ms/frame CPU (no submit)": "CPU (Python, no submit)", "ms/frame GPU": "GPU"}
    series: dict[str, list[dict]] = {f"{name}{path}": [] for name in by_unit.values()
                                     for path in ("", ", unculled", ", alone")}
    for row in rows:
        if row["unit"] not in by_unit:
            continue
        name = by_unit[row["unit"]] + ("" if row.get("culling", True) else ", unculled"
                                        if row.get("batching", True) else ", alone")
        count = row["emitters"]
        point: dict = {"size": count, "label": str(count), "value": None}
        if row["value"] is None:
            point["note"] = row["note"]
        else:
            point["value"] = count / (row["value"] * 1e-3)
        series[name].append(point)
    return series, rows


def emitter_rate(ctx, capacity: int, bandwidth: float) -> tuple[float | None, str]:
    from emberfx.bench.emitter import emitter_case

    row = emitter_case(ctx, capacity, "ordered", 0, bandwidth)[0]
    if row["value"] is None:
        return None, row.get("note", "skipped")
    return row["value"] * 1e9, ""


def _engine(key: str, component) -> Engine:
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings

    scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic"),
                  [EntitySpec("x", {key: component})])
    return Engine(scene, size=(64, 64))


def life_rate(ctx, size) -> tuple[float, str]:
    from emberfx.core.frame_graph import Phase
    from emberfx.systems.life.component import Life

    generations = 8 if ctx.is_software else 16
    with _engine("life", Life(size=size, density=0.3, steps_per_frame=generations)) as engine:
        seconds = timed_passes(ctx.device, engine.frame_passes({Phase.SIMULATE}),
                               3 if ctx.is_software else 20,
                               timestamps=not ctx.is_software)
    return size[0] * size[1] * generations / seconds, ""


def particle_life_rate(ctx, n: int,
                       precision: Literal["exact", "half"] = "exact") -> tuple[float, str]:
    from emberfx.core.frame_graph import Phase
    from emberfx.systems.particle_life.component import ParticleLife

    r_max = 0.02
    side = max(3.2 * r_max, math.sqrt(n / 20.0) * r_max)
    with _engine("particle_life", ParticleLife(count=n, species=6, r_max=r_max,
                                               box=[side, side],
                                               precision=precision)) as engine:
        engine.step(20)
        seconds = timed_passes(ctx.device, engine.frame_passes({Phase.CLEAR, Phase.SIMULATE}),
                               3 if ctx.is_software else 20,
                               timestamps=not ctx.is_software)
    return n / seconds, ""


def cloth_rate(ctx, side: int) -> tuple[float, str]:
    from emberfx.core.frame_graph import Phase
    from emberfx.systems.cloth.component import Cloth

    with _engine("cloth", Cloth(resolution=(side, side), size=(2.0, 2.0), pins="top-edge",
                                substeps=16)) as engine:
        engine.step(2)
        seconds = timed_passes(ctx.device, engine.frame_passes({Phase.SIMULATE}),
                               2 if ctx.is_software else 20,
                               timestamps=not ctx.is_software)
    return side * side * 16 / seconds, ""
