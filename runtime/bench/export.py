"""``emberfx bench export``: point-cache throughput, frames per second for a pool of 1M alive
particles written as npz and as PLY (Engine.export: readback, host colours, the file), beside the
state readback alone (Engine.state) measured in the same run: the part no format can avoid."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

EXPORT_PARTICLES = 1 << 20
REPEATS = 3


def export_scene(capacity: int):
    from emberfx.model.scene import loads_scene

    # one step's budget fills the pool, and nobody dies during the measurement
    return loads_scene(f"""
[scene]
name = "bench"
size = [64, 64]
[[entity]]
name = "bench"
[entity.emitter]
capacity = {capacity}
rate = {capacity * 60.0}
lifetime = 1000.0
speed = [1.0, 2.0]
""", path="<bench>")


def _best_seconds(work, repeats: int = REPEATS) -> float:
    work()   # warm-up: staging buffers, imports
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def bench_export() -> list[dict]:
    from emberfx.engine.engine import Engine

    engine = Engine(export_scene(EXPORT_PARTICLES))
    try:
        engine.step(2)
        alive = int(engine.state("bench")["alive"].sum())
        readback = _best_seconds(lambda: engine.state("bench"))
        rows = [{"name": f"state readback alone, {alive} particles (baseline)",
                 "value": 1.0 / readback, "unit": "frames/s"}]
        with tempfile.TemporaryDirectory(prefix="emberfx-bench-export-") as folder:
            for fmt in ("npz", "ply"):
                seconds = _best_seconds(lambda fmt=fmt: engine.export(folder, fmt))
                size = sum(p.stat().st_size for p in Path(folder).glob(f"*.{fmt}"))
                rows.append({"name": f"export {fmt}, {alive} particles", "value": 1.0 / seconds,
                             "unit": "frames/s", "MB_per_frame": size / 1e6,
                             "vs_readback": readback / seconds})
    finally:
        engine.close()
    return rows
