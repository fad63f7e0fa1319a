"""``emberfx bench sweep``: jobs per minute for 16 short jobs of one scene (an emitter, seeds
1..16), in one run: one after another in this process, on the local pool with one worker and
with ``--workers K`` (default one per GPU; ``vs_one_worker`` is the two-GPUs-against-one
figure), and on Ray when it is installed (a local Ray, or the cluster at ``--ray ADDRESS``).
Pool figures include starting the workers (spawn, imports, GPU context, shader compiles), as a
real sweep pays it; Ray's own start is not timed.
Which adapter each worker used goes to stderr, so a two-GPU run shows both GPUs taking jobs."""

from __future__ import annotations

import collections
import sys
import tempfile
import time
from pathlib import Path

JOBS = 16

SCENE = """
[scene]
name = "bench sweep"
seed = 1
[camera]
kind = "perspective"
position = [0.0, 1.0, 8.0]
target = [0.0, 1.0, 0.0]
[[entity]]
name = "jet"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = [1.0, 2.0]
speed = [3.0, 6.0]
spread_deg = 25.0
gravity = [0.0, -9.81, 0.0]
color = ["#ffd27f", "#ff6a00"]
"""


def bench_sweep(workers: int | None = None, ray: str | None = None) -> list[dict]:
    """``workers``: the local pool's size (None: one per GPU); ``ray``: a cluster address, ""
    or None for a local Ray (that leg runs when Ray is importable)."""
    from emberfx.core.gpu import get_context
    from emberfx.sweeps.driver import run_sweep
    from emberfx.sweeps.grammar import parse_set
    from emberfx.sweeps.local import default_pins

    software = get_context().is_software
    capacity = 20_000 if software else 1_000_000
    frames, size = (10, (160, 90)) if software else (120, (1280, 720))
    pool_workers = workers if workers is not None else len(default_pins())
    legs: list[tuple[str, dict]] = [("sequential, this process", {"workers": 0}),
                                    ("local pool, 1 worker", {"workers": 1})]
    if pool_workers > 1:   # against one worker: what more GPUs (or cores) add, same start-up
        legs.append((f"local pool, {pool_workers} workers", {"workers": pool_workers}))
    ray_module = _ray(ray)
    if ray_module is not None:
        legs.append(("Ray tasks", {"ray": True}))
    rows: list[dict] = []
    base = one_worker = None
    with tempfile.TemporaryDirectory(prefix="emberfx-bench-sweep-") as folder:
        scene = Path(folder) / "jet.toml"
        scene.write_text(SCENE.format(capacity=capacity, rate=capacity / 1.5))
        sets = [parse_set(f"scene.seed=1..{JOBS}")]
        try:
            for index, (name, options) in enumerate(legs):
                start = time.perf_counter()
                result = run_sweep(scene, sets, frames=frames, out=Path(folder) / f"leg{index}",
                                   size=size, progress=False, **options)
                seconds = time.perf_counter() - start
                per_minute = JOBS / seconds * 60.0
                base = per_minute if base is None else base
                if options.get("workers") == 1:
                    one_worker = per_minute
                failed = sum(row["status"] != "ok" for row in result.rows)
                rows.append({"name": f"{name}: {JOBS} jobs of {frames} frames at "
                                     f"{size[0]}x{size[1]}", "value": per_minute,
                             "unit": "jobs per minute", "vs_sequential": per_minute / base,
                             "vs_one_worker": per_minute / (one_worker or per_minute),
                             "failed": failed})
                _say_workers(name, result.rows)
        finally:
            if ray_module is not None:
                ray_module.shutdown()
    if ray_module is None:
        rows.append({"name": "Ray tasks", "value": None, "unit": "skipped",
                     "note": 'Ray is not installed (pip install "emberfx[ray]")'})
    return rows


def _ray(address: str | None):
    """Ray, initialised outside the timing (a local Ray, or the cluster at ``address``), or
    None when it is not installed."""
    try:
        import ray
    except ImportError:
        if address:
            from emberfx.core.errors import EmberError

            raise EmberError('--ray needs Ray: pip install "emberfx[ray]"') from None
        return None
    ray.init(address=address or None, log_to_driver=False)
    return ray


def _say_workers(leg: str, rows: list[dict]) -> None:
    jobs = collections.Counter((row["worker"], row["adapter"]) for row in rows)
    for (pid, adapter), count in sorted(jobs.items(), key=lambda item: str(item[0])):
        print(f"[bench] sweep: {leg}: worker {pid} on {adapter}: {count} jobs", file=sys.stderr)
