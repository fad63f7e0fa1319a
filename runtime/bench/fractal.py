"""``emberfx bench fractal``: pixel-iterations per second of the escape-time pass (every
iteration of every pixel counted), 1920x1080, beside numpy doing the same float32 iteration on
the CPU."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from emberfx.bench.harness import timed_passes

VIEWS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("full set, 256 iterations", dict(center=(-0.5, 0.0), max_iterations=256)),
    ("seahorse valley, 2000 iterations",
     dict(center=(-0.7453, 0.1127), zoom=60.0, max_iterations=2000)))


def bench_fractal() -> list[dict]:
    from emberfx.core.frame_graph import Dispatch, Pass, Phase
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.fractal.component import Fractal

    ctx = get_context()
    rows: list[dict] = []
    w, h = 1920, 1080
    for label, fields in VIEWS:
        scene = Scene(SceneSettings(), Camera(kind="orthographic"),
                      [EntitySpec("set", {"fractal": Fractal(resolution=(w, h), **fields)})])
        engine = Engine(scene, size=(64, 64))
        total = int(engine.state("set")["iterations"].sum())
        escape = next(p for p in engine.frame_passes({Phase.RENDER})
                      if p.name.endswith(":escape"))
        # the frame dispatches the escape pass only after a parameter changed: here, every time
        assert isinstance(escape.op, Dispatch)
        always = Pass(escape.name, Phase.RENDER,
                      Dispatch(escape.op.pipeline, escape.op.bind_groups,
                               (-(-w // 16), -(-h // 16), 1)), escape.reads, escape.writes)
        seconds = timed_passes(ctx.device, [always], 2 if ctx.is_software else 20)
        rows.append({"name": f"fractal {w}x{h}, {label}", "value": total / seconds / 1e9,
                     "unit": "G pixel-iterations/s", "ms_per_frame": seconds * 1e3})
        engine.close()
    rows.append(numpy_escape_row())
    return rows


def numpy_escape_row() -> dict:
    """numpy, float32, a 480x270 patch of the first view."""
    f = np.float32
    px, py = np.meshgrid(np.arange(480, dtype=f), np.arange(270, dtype=f))
    cr = f(-0.5) + (px + f(0.5) - f(240)) * f(3.0 / 270)
    ci = -(py + f(0.5) - f(135)) * f(3.0 / 270)
    zr, zi = np.zeros_like(cr), np.zeros_like(ci)
    start, work = time.perf_counter(), 0
    active = np.ones(cr.shape, bool)
    for _ in range(256):
        work += int(active.sum())
        zr, zi = zr * zr - zi * zi + cr, f(2) * zr * zi + ci
        active &= zr * zr + zi * zi <= f(4)
        zr, zi = np.where(active, zr, 0), np.where(active, zi, 0)
    return {"name": "numpy float32 escape time, 480x270 (this CPU)",
            "value": work / (time.perf_counter() - start) / 1e9, "unit": "G pixel-iterations/s"}
