"""Where a sweep runs without Ray: in this process, or in a local pool of worker processes.

In this process (``--workers 0``) the jobs run inside ``interrupts.deferred``: Ctrl-C stops
between frames, as a render does, never inside a wgpu callback (where a KeyboardInterrupt is
swallowed and the sweep would go on).

A pool worker is a fresh Python process started from emberfx's own entry point
(``worker.serve``), not by multiprocessing: a spawned multiprocessing child runs the caller's
main script again (as ``__mp_main__``), so a script that calls ``emberfx.sweep`` at its top level
without an ``if __name__ == "__main__"`` guard would start the sweep again in every worker.
Here a worker never imports the caller's ``__main__``; it gets this process's ``sys.path``,
then jobs, over its stdin, and sends each job's manifest fields back over its stdout, one
pickle each. It never inherits a forked GPU context. A worker that dies (a driver crash, an
out-of-memory kill) fails only its job, which is sent again ``RETRIES`` times, to a new worker.

Workers run in a session of their own, so a Ctrl-C at the terminal reaches only this process;
it stops the workers (SIGINT: each stops after its frame and removes its unfinished files) and
writes the manifest.

With several GPUs, worker w uses GPU w mod n (``EMBERFX_ADAPTER``), and every worker takes the
next job when it is free, so a fast GPU takes more jobs.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from emberfx.engine import interrupts
from emberfx.sweeps import worker
from emberfx.sweeps.jobs import Job, SweepSpec

RETRIES = 1   # resubmissions of a job whose worker died
STOP_SECONDS = 10.0   # how long stopped workers get to finish their frame before they are killed
WAIT_SECONDS = 0.5    # how often the driver wakes while waiting for results
STOP_NOTICE = "stopping the sweep after this frame (Ctrl-C again to stop at once)"
# A worker's first words: the sys.path to import emberfx with, then the entry point.
BOOT = ("import pickle, sys; sys.path[:] = pickle.load(sys.stdin.buffer); "
        "from emberfx.sweeps.worker import serve; serve()")
Report = Callable[[Job, dict], None]


def default_pins() -> list[str | None]:
    """The adapter each worker slot uses: one ``EMBERFX_ADAPTER`` value per GPU, or [None] (the
    usual choice) on a machine without one or where the user set ``EMBERFX_ADAPTER``."""
    if os.environ.get("EMBERFX_ADAPTER", "").strip():
        return [None]
    from emberfx.core.gpu import gpu_adapter_pins

    pins: list[str | None] = list(gpu_adapter_pins())
    return pins or [None]


def run_inline(jobs: Iterator[Job], spec: SweepSpec, report: Report) -> None:
    """One job after another in this process (``--workers 0``; the benchmark's baseline)."""
    with interrupts.deferred(notice=STOP_NOTICE):
        for job in jobs:
            interrupts.check()
            row = worker.run_job(job, spec)
            report(job, {**row, "attempts": 1})


class PoolWorker:
    """One worker process and the thread that reads its results into ``results``."""

    def __init__(self, slot: int, pin: str | None, spec: SweepSpec, log: Path,
                 results: queue.Queue):
        with open(log, "ab") as log_file:   # stderr: native code's and Python's messages
            self.process = subprocess.Popen(
                [sys.executable, "-c", BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log_file, start_new_session=True)
        self.slot = slot
        self.job: tuple[Job, int] | None = None   # the job it runs, and its attempt
        self._send(list(sys.path))
        self._send((pin, spec))
        self._thread = threading.Thread(target=self._read, args=(results,), daemon=True)
        self._thread.start()

    def run(self, job: Job, attempt: int) -> None:
        self.job = (job, attempt)
        self._send(job)

    def _send(self, message: Any) -> None:
        stream: IO[bytes] | None = self.process.stdin
        try:
            assert stream is not None
            pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
            stream.flush()
        except (BrokenPipeError, OSError):
            pass   # it died: its reader sees the end of its output and reports it

    def _read(self, results: queue.Queue) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            try:
                row = pickle.load(stream)
            except Exception:   # the end of its output, or a pickle cut off: it died
                results.put((self, None))
                return
            results.put((self, row))

    def join_reader(self) -> None:
        """Wait until everything the (exited) process wrote has been read into the results."""
        self._thread.join(timeout=STOP_SECONDS)

    def exit_code(self) -> int | None:
        try:
            return self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def stop(self, at_once: bool) -> None:
        """Let it finish (no more jobs: it exits), or stop it after its frame (SIGINT)."""
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        if at_once and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)


def run_pool(jobs: Iterator[Job], spec: SweepSpec, workers: int, pins: list[str | None],
             report: Report, log_dir: Path) -> None:
    """The jobs on ``workers`` worker processes, each started when a job first needs it."""
    logs = {pin: log_dir / (f"worker-gpu{index}.log" if pin else "worker.log")
            for index, pin in enumerate(dict.fromkeys(pins))}
    results: queue.Queue[tuple[PoolWorker, dict | None]] = queue.Queue()
    idle: list[int] = list(range(workers))[::-1]
    busy: dict[PoolWorker, int] = {}
    retry: deque[tuple[Job, int]] = deque()
    started: list[PoolWorker] = []
    resting: dict[int, PoolWorker] = {}   # live workers without a job, by slot
    planned = iter(jobs)
    exhausted = finished = False
    try:
        while True:
            while idle and (retry or not exhausted):
                if retry:
                    job, attempt = retry.popleft()
                else:
                    next_job = next(planned, None)
                    if next_job is None:
                        exhausted = True
                        break
                    job, attempt = next_job, 1
                slot = idle.pop()
                chosen = resting.pop(slot, None)
                if chosen is None:
                    pin = pins[slot % len(pins)]
                    chosen = PoolWorker(slot, pin, spec, logs[pin], results)
                    started.append(chosen)
                chosen.run(job, attempt)
                busy[chosen] = slot
            if not busy:
                break
            try:
                member, row = results.get(timeout=WAIT_SECONDS)
            except queue.Empty:
                continue
            if member not in busy:   # a resting worker died: its slot starts a new one
                if resting.get(member.slot) is member:
                    del resting[member.slot]
                continue
            slot = busy.pop(member)
            idle.append(slot)
            assert member.job is not None
            job, attempt = member.job
            member.job = None
            if row is None:   # it died: its slot starts a new worker for its next job
                code = member.exit_code()
                if attempt <= RETRIES:
                    retry.append((job, attempt + 1))
                    continue
                row = {"status": "error", "error": f"its worker process died (exit code "
                       f"{code}) on each of {attempt} attempts", "adapter": "", "host": "",
                       "worker": member.process.pid, "seconds": 0.0}
            else:
                resting[slot] = member
            report(job, {**row, "attempts": attempt})
        finished = True
    finally:
        _stop(started, at_once=not finished)
        if not finished:
            _report_late(results, busy, report)


def _stop(members: list[PoolWorker], at_once: bool) -> None:
    """Stop every worker and wait for it (killed after ``STOP_SECONDS``) and for its reader."""
    for member in members:
        member.stop(at_once)
    for member in members:
        member.exit_code()
        member.join_reader()


def _report_late(results: queue.Queue, busy: dict[PoolWorker, int], report: Report) -> None:
    """After a stop: the jobs that workers finished between the Ctrl-C and their exit. Their
    files are complete (a worker stopped mid-job removes its files), so the manifest lists
    them, and a resumed sweep skips them."""
    while True:
        try:
            member, row = results.get_nowait()
        except queue.Empty:
            return
        if row is not None and member in busy and member.job is not None:
            job, attempt = member.job
            member.job = None
            report(job, {**row, "attempts": attempt})
