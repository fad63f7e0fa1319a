"""Where a sweep runs without Ray: in this process, or in a local pool of worker processes.

The pool is pebble's ``ProcessPool`` on a ``spawn`` context: a worker never inherits a forked
GPU context, and a worker that dies (a driver crash, an out-of-memory kill) fails only its task
with ``ProcessExpired`` while pebble starts a replacement, where a concurrent.futures pool would
break for good. Such a job is resubmitted ``RETRIES`` times, then recorded as failed.

With several GPUs, worker w uses GPU w mod n: one pool per GPU (its workers pinned by
``EMBERFX_ADAPTER`` in their initializer), fed from one queue, so a fast GPU takes more jobs.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path

from emberfx.sweeps import worker
from emberfx.sweeps.jobs import Job, SweepSpec

RETRIES = 1   # resubmissions of a job whose worker died
Report = Callable[[Job, dict], None]


def default_pins() -> list[str | None]:
    """The adapter each worker slot uses: one ``EMBERFX_ADAPTER`` value per GPU, or [None] (the
    usual choice) on a machine without one or where the user set ``EMBERFX_ADAPTER``."""
    if os.environ.get("EMBERFX_ADAPTER", "").strip():
        return [None]
    from emberfx.core.gpu import gpu_adapter_pins

    pins: list[str | None] = list(gpu_adapter_pins())
    return pins or [None]


def run_inline(jobs: list[Job], spec: SweepSpec, report: Report) -> None:
    """One job after another in this process (``--workers 0``; the benchmark's baseline)."""
    for job in jobs:
        row = worker.run_job(job, spec)
        report(job, {**row, "attempts": 1})


def run_pool(jobs: list[Job], spec: SweepSpec, workers: int, pins: list[str | None],
             report: Report, log_dir: Path) -> None:
    from pebble import ProcessExpired, ProcessPool

    context = multiprocessing.get_context("spawn")
    slots = collections.Counter(pins[w % len(pins)] for w in range(workers))
    pools = {}
    for index, (pin, count) in enumerate(slots.items()):
        log = log_dir / f"worker-gpu{index}.log" if pin else log_dir / "worker.log"
        pools[pin] = ProcessPool(max_workers=count, context=context,
                                 initializer=worker.init_pool_worker, initargs=(pin, str(log)))
    free = dict(slots)
    pending: collections.deque[tuple[Job, int]] = collections.deque((job, 1) for job in jobs)
    running: dict[concurrent.futures.Future, tuple[Job, str | None, int]] = {}
    finished = False
    try:
        while pending or running:
            for pin, pool in pools.items():
                while pending and free[pin] > 0:
                    job, attempt = pending.popleft()
                    running[pool.schedule(worker.run_job, args=(job, spec))] = (job, pin, attempt)
                    free[pin] -= 1
            done, _ = concurrent.futures.wait(running, return_when="FIRST_COMPLETED")
            for future in done:
                job, pin, attempt = running.pop(future)
                free[pin] += 1
                try:
                    row = future.result()
                except ProcessExpired as exc:
                    if attempt <= RETRIES:
                        pending.appendleft((job, attempt + 1))
                        continue
                    row = {"status": "error", "error": f"its worker process died (exit code "
                           f"{exc.exitcode}) on each of {attempt} attempts",
                           "adapter": "", "host": "", "worker": exc.pid, "seconds": 0.0}
                report(job, {**row, "attempts": attempt})
        finished = True
    finally:
        for pool in pools.values():
            if finished:
                pool.close()
            else:   # Ctrl-C or an error here: running jobs are abandoned, their temp files
                pool.stop()   # are removed by the next write into the folder
            pool.join()
