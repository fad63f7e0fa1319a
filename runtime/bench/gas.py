"""``emberfx bench gas``: the gas family (systems/gas) on a rising, burning plume in a closed-floor
box of n^3 cells, MacCormack advection, vorticity confinement and the multigrid projection:

- steps per second of the whole step, at SIZES (SOFTWARE_SIZES on a software adapter), each
  after SETTLE_STEPS steps so that the plume has formed;
- the projection's relative residual reached (stats()'s ``pressure_residual``: the divergence's
  L2 norm after over before), with the V-cycles per step that reach TARGET_RESIDUAL, and that
  the residual's orders of magnitude per millisecond of the projection
  (-log10(residual) / projection ms);
- the milliseconds of the multigrid's passes together and of each other pass alone;
- advection's and the projection's milliseconds, and each as a fraction of the roofline
  measured in the same run (a vec4 copy in a compute shader, the first row): the bytes its
  passes would move if each read every buffer it binds once and wrote every buffer it writes
  once, over its time;
- the volume's render at 1920x1080 of the largest grid: the frame's drawing passes with the gas
  over the same frame without it, in the same run, and the frames per second of a frame that
  steps that gas once and draws it (``frames_per_s``).
"""

from __future__ import annotations

import math

from emberfx.bench.harness import copy_row, report, sync, timed_passes
from emberfx.bench.looks import draw_seconds
from emberfx.core.errors import EmberError

SIZES = (64, 128, 256)
SOFTWARE_SIZES = (16, 32)
SETTLE_STEPS = 30
TARGET_RESIDUAL = 1e-3
CYCLES = (1, 2, 3, 4, 6, 8)   # V-cycles per step tried, fewest first, until TARGET_RESIDUAL is met
RENDER_SIZE = (1920, 1080)

SCENE = """
[scene]
name = "gas bench"
seed = 3
[camera]
kind = "perspective"
position = [0.0, 0.5, 2.2]
target = [0.0, 0.5, 0.0]
fov_deg = 45.0
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
visible = true
{gas}
"""

GAS = """
[[entity]]
name = "fire"
[entity.gas]
resolution = [{n}, {n}, {n}]
size = [1.0, 1.0, 1.0]
center = [0.0, 0.5, 0.0]
buoyancy = 3.0
vorticity = 0.3
pressure_cycles = {cycles}
look = {{ smoke_color = "#b0aca4", absorption = 1.5, scattering = 6.0, fire_intensity = 1.0 }}
[[entity.gas.sources]]
shape = {{ kind = "sphere", radius = 0.12 }}
position = [0.0, 0.12, 0.0]
density = 3.0
temperature = 1.0
fuel = 2.0
"""


def bench_gas(sizes: tuple[int, ...] | None = None,
              render_size: tuple[int, int] = RENDER_SIZE) -> list[dict]:
    from emberfx.core.gpu import get_context

    ctx = get_context()
    rows: list[dict] = []
    copy, bandwidth = copy_row(ctx)
    report(rows, copy)
    iterations = 3 if ctx.is_software else 20
    sizes = sizes or (SOFTWARE_SIZES if ctx.is_software else SIZES)
    for n in sizes:
        try:
            step_rows(rows, ctx, n, bandwidth, iterations)
        except EmberError as exc:   # a grid this device cannot hold: say so
            report(rows, {"name": f"gas step, {n}^3", "value": None, "unit": "skipped",
                          "note": str(exc)})
    render_rows(rows, ctx, sizes[-1], iterations, render_size)
    return rows


def _engine(n: int, cycles: int, with_gas: bool = True, size=(64, 64)):
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    gas = GAS.format(n=n, cycles=cycles) if with_gas else ""
    return Engine(loads_scene(SCENE.format(gas=gas), path="<bench>"), size=size)


def _residual(engine) -> float:
    sync(engine.device)
    return float(engine.stats()["entities"]["fire"]["pressure_residual"])


def step_rows(rows: list[dict], ctx, n: int, bandwidth: float, iterations: int) -> None:
    """The rows of one grid size: the fewest CYCLES reaching TARGET_RESIDUAL (the most when
    none does), timed whole, by part and by pass."""
    from emberfx.core.frame_graph import Phase

    for cycles in CYCLES:
        engine = _engine(n, cycles)
        engine.step(SETTLE_STEPS)
        residual = _residual(engine)
        if residual <= TARGET_RESIDUAL or cycles == CYCLES[-1]:
            break
        engine.close()
    with engine:
        every = engine.frame_passes({Phase.CLEAR, Phase.SIMULATE})
        seconds = timed_passes(ctx.device, every, iterations)
        parts = {"advection": [p for p in every if ":gas:advect:" in p.name],
                 "projection": [p for p in every
                                if any(k in p.name for k in (":gas:divergence", ":gas:mg:",
                                                             ":gas:project"))]}
        row: dict = {"name": f"gas step, {n}^3, MacCormack, {cycles} V-cycles",
               "value": 1.0 / seconds, "unit": "steps/s", "ms": seconds * 1e3,
               "cells": n ** 3, "v_cycles": cycles, "pressure_residual": residual,
               "roofline_GBs": bandwidth / 1e9}
        for part, passes in parts.items():
            part_seconds = timed_passes(ctx.device, passes, iterations)
            moved = sum(_bytes(engine, p.reads) + _bytes(engine, p.writes) for p in passes)
            row[f"{part}_ms"] = part_seconds * 1e3
            row[f"{part}_vs_copy"] = moved / part_seconds / bandwidth
        row["residual_digits_per_ms"] = -math.log10(max(residual, 1e-12)) / row["projection_ms"]
        row["multigrid_ms"] = timed_passes(
            ctx.device, [p for p in every if ":gas:mg:" in p.name], iterations) * 1e3
        for p in every:   # the other passes one by one, named after the entity's prefix
            if ":gas:" in p.name and ":gas:mg:" not in p.name:
                key = p.name.split(":gas:", 1)[1].replace(":", "_")
                row[f"{key}_ms"] = timed_passes(ctx.device, [p], iterations) * 1e3
        report(rows, row)


def _bytes(engine, names) -> int:
    total = 0
    for name in names:
        resource = engine.resources.get(name)
        total += getattr(resource, "size", 0) if resource is not None else 0
    return total


def render_rows(rows: list[dict], ctx, n: int, iterations: int,
                size: tuple[int, int]) -> None:
    """The drawing passes at ``size`` without the gas, then with it (the plume formed)."""
    from emberfx.core.frame_graph import DRAWING_PHASES

    base = None
    for with_gas in (False, True):
        engine = _engine(n, CYCLES[1], with_gas, size)
        with engine:
            engine.step(SETTLE_STEPS)
            seconds = draw_seconds(ctx, engine, set(DRAWING_PHASES), iterations)
        label = (f"frame drawn at {size[0]}x{size[1]}"
                 + (f", with the {n}^3 gas's volume" if with_gas else ", no gas"))
        row = {"name": label, "value": seconds * 1e3, "unit": "ms per frame"}
        if base is not None:
            row.update(volume_ms=(seconds - base) * 1e3, vs_no_gas=seconds / base)
        if base is not None:
            steps = [r for r in rows if r.get("cells") == n ** 3]
            if steps:   # a frame that steps the gas once and draws it
                row["frames_per_s"] = 1e3 / (steps[-1]["ms"] + seconds * 1e3)
        base = seconds if base is None else base
        report(rows, row)
