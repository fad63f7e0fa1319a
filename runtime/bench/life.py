"""``emberfx bench life``: cell updates per second of each Life step kernel (the component's
``kernel`` option) and of the in-place memory layout, beside numpy's np.roll step and the
compute-copy roofline, and python-lifelib on the same soup when it is installed.

Every GPU variant first steps the same density-0.5 soup CHECK_STEPS steps; its population and
the digest of its words must equal those of the reference kernel ("word": one generation per
dispatch, one word per invocation), or the row says so ("exact": false)."""

from __future__ import annotations

import hashlib
import time
from typing import Literal

import numpy as np

from emberfx.bench.harness import copy_row, timed_passes
from emberfx.core.errors import EmberError

# (memory, kernel): the sweep (the default where it runs) first, then the earlier sweep and the
# single-generation kernels it is measured against, then the in-place layout
VARIANTS: list[tuple[Literal["pingpong", "inplace"],
                     Literal["auto", "sweep", "sweep_neighbours", "quad", "word"]]] = [
    ("pingpong", "sweep"), ("pingpong", "sweep_neighbours"), ("pingpong", "quad"),
    ("pingpong", "word"), ("inplace", "auto")]
REFERENCE = ("pingpong", "word")   # the kernel every variant's result must equal
DENSITY = 0.5
CHECK_STEPS = 2                    # steps (of `generations` each) before timing, then compared


def numpy_life_rate(size: int = 2048, generations: int = 3) -> float:
    """Cell updates per second of an np.roll Life step on this CPU (the usual numpy baseline)."""
    rng = np.random.default_rng(1)
    cells = rng.random((size, size)) < 0.3
    start = time.perf_counter()
    for _ in range(generations):
        c = cells.astype(np.uint8)
        n = sum(np.roll(np.roll(c, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                if (dx, dy) != (0, 0))
        cells = (n == 3) | (cells & (n == 2))
    return size * size * generations / (time.perf_counter() - start)


def kernel_label(stats: dict) -> str:
    """How the layer steps, from its entry in ``Engine.stats()``, for a row name."""
    sweep = stats.get("sweep")
    if sweep:
        count = ("8-neighbour count" if stats["kernel"] == "sweep_neighbours"
                 else "3x3 block totals")
        return (f", sweep ({count}), {sweep['generations_per_dispatch']} generations per "
                f"dispatch ({sweep['lanes']}-lane subgroups, {sweep['rows_per_subgroup']} rows "
                f"each)")
    return {"quad": ", 1 generation per dispatch, 4 words/invocation",
            "word": ", 1 generation per dispatch, 1 word/invocation"}.get(stats["kernel"], "")


def checked_state(engine) -> tuple[int, str]:
    """(population, digest of the packed words) of the engine's layer "life"."""
    words = engine.system_of("life", "life").words(engine.entity_ref("life"))
    live_bits = np.array([bin(byte).count("1") for byte in range(256)], np.uint8)
    population = int(live_bits[words.view(np.uint8)].sum(dtype=np.int64))
    return population, hashlib.sha256(words.tobytes()).hexdigest()


def bench_life() -> list[dict]:
    from emberfx.core.frame_graph import Phase
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.life.component import Life

    ctx = get_context()
    rows: list[dict] = []
    numpy_rate = numpy_life_rate()
    rows.append({"name": "numpy np.roll Life, 2048x2048 (this CPU)", "value": numpy_rate / 1e9,
                 "unit": "Gcell/s"})
    copy, bandwidth = copy_row(ctx)
    rows.append(copy)
    sizes = [(4096, 4096)] if ctx.is_software else [(16384, 16384), (65536, 32768)]
    generations = 8 if ctx.is_software else 16
    for width, height in sizes:
        rates: dict[str, float] = {}        # kernel -> cell updates per second
        results: dict[tuple, tuple[int, str]] = {}   # (memory, kernel) -> checked_state
        sweep_row = None
        for memory, kernel in VARIANTS:
            try:
                scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic"), [EntitySpec(
                    "life", {"life": Life(size=(width, height), density=DENSITY, memory=memory,
                                          kernel=kernel, steps_per_frame=generations)})])
                engine = Engine(scene, size=(64, 64))
            except EmberError as exc:
                rows.append({"name": f"life step ({width}x{height}, {memory})", "value": None,
                             "unit": "skipped", "note": str(exc)})
                continue
            stats = engine.stats()["entities"]["life"]
            if memory == "pingpong" and stats["kernel"] != kernel:
                rows.append({"name": f"life step ({width}x{height}, {kernel} kernel)",
                             "value": None, "unit": "skipped",
                             "note": f"not available here; the layer uses {stats['kernel']}"})
                engine.close()
                continue
            label = f"{width}x{height}, {memory}" + kernel_label(stats)
            engine.step(CHECK_STEPS)
            results[(memory, kernel)] = checked_state(engine)
            iterations = 3 if ctx.is_software else 20
            seconds = timed_passes(ctx.device, engine.frame_passes({Phase.SIMULATE}), iterations)
            rate = width * height * generations / seconds
            row: dict = {"name": f"life step ({label})", "value": rate / 1e9, "unit": "Gcell/s",
                         "ms_per_generation": seconds / generations * 1e3,
                         "vs_numpy": rate / numpy_rate,
                         "population": results[(memory, kernel)][0], "variant": (memory, kernel)}
            rates[kernel if memory == "pingpong" else memory] = rate
            if kernel == "sweep":
                sweep_row = row
            if kernel in ("quad", "word") or memory == "inplace":
                # each generation reads and writes every word once
                bytes_moved = 2 * (width + 31) // 32 * 4 * height * generations
                row["fraction_of_copy_bandwidth"] = bytes_moved / seconds / bandwidth
            rows.append(row)
            engine.close()
        for row in rows:   # every variant of this size against the reference kernel
            variant = row.pop("variant", None)
            if variant is not None and REFERENCE in results:
                row["exact"] = results[variant] == results[REFERENCE]
                if not row["exact"]:
                    row["note"] = (f"population {results[variant][0]} after {CHECK_STEPS} "
                                   f"steps, the reference kernel's {results[REFERENCE][0]} "
                                   f"(or the words differ)")
        if sweep_row:
            for baseline in ("quad", "sweep_neighbours"):
                if baseline in rates:
                    sweep_row[f"vs_{baseline}_kernel"] = sweep_row["value"] * 1e9 / rates[baseline]
    return rows + lifelib_rows(sizes[0], generations, rows)


def lifelib_rows(size, generations: int, gpu_rows: list[dict]) -> list[dict]:
    """python-lifelib on the same soup as the first GPU size, when it is installed."""
    import importlib.util

    if importlib.util.find_spec("lifelib") is None:
        return []
    from emberfx.bench.lifelib import lifelib_rate
    from emberfx.systems.life.patterns import random_soup

    width, height = size
    # the GPU rows' soup: scene seed 1, entity index 0 (the Life system's seed is seed ^ f(index))
    cells = random_soup(width, height, DENSITY, 1)
    # lifelib's rate grows with the span it advances at once; 64 generations is its better side
    lifelib_generations = max(generations, 64)
    rate = lifelib_rate(cells, lifelib_generations)
    default = next((r["value"] for r in gpu_rows if r["name"].startswith(f"life step ({width}x")
                    and r["value"] is not None), None)
    row = {"name": f"python-lifelib (CPU), {width}x{height} soup, unbounded plane, "
                   f"{lifelib_generations} generations", "value": rate / 1e9, "unit": "Gcell/s"}
    if default is not None:
        row["emberfx_default_vs_lifelib"] = default * 1e9 / rate
    return [row]
