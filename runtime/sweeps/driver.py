"""Runs a sweep: counts the jobs, plans them one at a time as a runner (this process, the local
pool or Ray) asks for the next, skips those a previous run finished, keeps the manifest and one
progress bar.

- The job count is computed from the values before anything else and said first; a sweep of
  more than ``DEFAULT_MAX_JOBS`` jobs is refused unless ``--max-jobs`` (``max_jobs=``) allows it.
- Resuming: a job is skipped when the manifest in OUT says ok and its files are there, so an
  interrupted or partly failed sweep is finished by running the same command again (failed jobs
  run again).
- The manifest is rewritten as results arrive (at most every ``MANIFEST_SECONDS``) and at the
  end; Ctrl-C stops the workers and writes it with what finished before the KeyboardInterrupt
  goes on (the CLI exits 130).
- Progress: jobs done and failed, with an ETA, on stderr (a tqdm bar on a terminal, a plain line
  every few seconds elsewhere). Per-job detail goes to the manifest only.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emberfx.core.errors import EmberError, UsageError
from emberfx.sweeps.grammar import SweepSet
from emberfx.sweeps.jobs import FORMATS, Job, SweepSpec, plan
from emberfx.sweeps.manifest import read_manifest, write_manifest
from emberfx.sweeps.values import DEFAULT_MAX_JOBS, job_count, size

MANIFEST_SECONDS = 2.0
PLAIN_PROGRESS_SECONDS = 5.0


@dataclass
class SweepResult:
    rows: list[dict[str, Any]]          # one per job of this sweep, in job order
    manifest: Path
    ran: int = 0
    skipped: int = 0
    failed: int = 0
    interrupted: bool = False


class JobProgress:
    """Jobs done / failed with an ETA: tqdm on a terminal, plain lines elsewhere. The ETA is
    measured on the jobs run here (skipped and refused jobs take no time)."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.done, self.failed = total, 0, 0
        self.start, self.last_line, self.ran = time.perf_counter(), 0.0, 0
        stream = sys.stderr
        self.enabled = enabled and stream is not None
        self.bar = None
        if self.enabled and stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="sweep", unit="job", file=stream,
                            postfix={"failed": 0})

    def update(self, ok: bool, ran: bool = True) -> None:
        self.done, self.ran = self.done + 1, self.ran + ran
        self.failed += 0 if ok else 1
        if self.bar is not None:
            self.bar.set_postfix(failed=self.failed, refresh=False)
            self.bar.update(1)
            return
        now = time.perf_counter()
        if self.enabled and (self.done == self.total
                             or now - self.last_line >= PLAIN_PROGRESS_SECONDS):
            self.last_line = now
            elapsed = now - self.start
            left = (f", about {elapsed / self.ran * (self.total - self.done):.0f} s left"
                    if self.ran else "")
            print(f"emberfx: sweep: {self.done:,}/{self.total:,} jobs, {self.failed} failed, "
                  f"{elapsed:.0f} s{left}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_sweep(scene, sets: list[SweepSet], *, frames: int, out, size=None, format: str = "png",
              state: bool = False, workers: int | None = None, ray: bool = False,
              ray_address: str | None = None, gpus_per_job: float | None = None,
              scripts: Any = True, progress: bool = True,
              max_jobs: int | None = None) -> SweepResult:
    """See ``emberfx.sweep`` (the Python face) and ``emberfx sweep --help``."""
    from emberfx.engine.scripting import check_script_locations, script_policy
    from emberfx.model.scene import Scene, load_scene

    if format not in FORMATS:
        raise UsageError(f"--format {format}: expected one of {', '.join(FORMATS)}")
    if workers is not None and workers < 0:
        raise UsageError(f"--workers {workers}: expected 0 (this process) or more")
    total = check_job_count(sets, max_jobs)
    if progress:
        print(f"emberfx: sweep: {_jobs(total)} ({_product(sets)})", file=sys.stderr, flush=True)
    policy = script_policy(scripts)   # EMBERFX_NO_SCRIPTS of this shell holds on every worker
    if not isinstance(scene, (Scene, str, os.PathLike)):
        raise UsageError(f"sweep(scene): expected a scene file path or a Scene, found "
                         f"{type(scene).__name__}")
    base = scene if isinstance(scene, Scene) else load_scene(scene)
    check_script_locations(base, policy)   # refused once here, not once per job
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmberError(f"cannot create --out {out}: {exc.strerror or exc}") from None
    spec = SweepSpec(out=out.resolve(), frames=frames, format=format, state=state,
                     scripts=policy)
    jobs = plan(scene, sets, frames, size, policy.run)
    book = Book(out, [s.name for s in sets], read_manifest(out))
    bar = JobProgress(total, progress)

    def report(job: Job, fields: dict, ran: bool = True) -> None:
        book.add(job, _row(job, spec, fields))
        bar.update(fields["status"] == "ok", ran)

    def todo() -> Iterator[Job]:
        """The jobs to run, planned as the runner asks for them; the others are reported."""
        for job in jobs:
            before = book.earlier.get(job.key)
            if before is not None and before.get("status") == "ok" and _outputs_exist(job, spec):
                book.add(job, dict(before))
                book.skipped += 1
                bar.update(True, ran=False)
            elif job.error is not None:
                report(job, {"status": "error", "error": job.error, "seconds": 0.0,
                             "adapter": "", "host": "", "worker": None, "attempts": 0},
                       ran=False)
            else:
                yield job

    result = SweepResult([], out / "manifest")
    try:
        _run(todo(), spec, workers, ray, ray_address, gpus_per_job, report, out)
    except KeyboardInterrupt:
        result.interrupted = True
        raise
    finally:
        bar.close()
        result.manifest = book.write()
        result.rows = book.ours()
        result.ran, result.skipped = bar.ran, book.skipped
        result.failed = sum(1 for row in result.rows if row.get("status") != "ok")
        if result.interrupted:
            print(f"emberfx: sweep stopped: {len(result.rows)} of {_jobs(total)} finished, "
                  f"listed in {result.manifest}; run the same command again to resume",
                  file=sys.stderr)
    return result


def check_job_count(sets: list[SweepSet], max_jobs: int | None) -> int:
    """The sweep's job count (computed from the values, never listed); UsageError above
    ``max_jobs`` (default ``DEFAULT_MAX_JOBS``)."""
    limit = DEFAULT_MAX_JOBS if max_jobs is None else max_jobs
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise UsageError(f"--max-jobs: expected a whole number >= 1, found {limit!r}")
    total = job_count([s.values for s in sets])
    if total > limit:
        raise UsageError(f"the sweep has {_jobs(total)} ({_product(sets)}), more than the "
                         f"{limit:,} it runs without --max-jobs (max_jobs= in Python); add "
                         f"--max-jobs {total} to run them all")
    return total


def _jobs(count: int) -> str:
    return f"{count:,} job{'s' if count != 1 else ''}"


def _product(sets: list[SweepSet]) -> str:
    return " x ".join(f"{size(s.values):,} {s.name}" for s in sets) or "no --set"


class Book:
    """The rows of a sweep's manifest: this sweep's, kept in plan order, and the earlier
    manifest's (its rows this sweep has not replaced stay, so an interrupted sweep loses none).
    Written at most every ``MANIFEST_SECONDS``, and never taking more than a tenth of the
    time (a large manifest is written less often), and at the end."""

    def __init__(self, out: Path, params: list[str], earlier: list[dict[str, Any]]):
        self.out, self.params = out, params
        self.earlier = {str(row.get("job")): row for row in earlier}
        self.rows: dict[str, tuple[int, dict]] = {}
        self.skipped = 0
        self.next_write, self.last_cost = time.perf_counter() + MANIFEST_SECONDS, 0.0

    def add(self, job: Job, row: dict) -> None:
        self.rows[job.key] = (job.index, row)
        if time.perf_counter() >= self.next_write:
            self.write()

    def ours(self) -> list[dict]:
        return [row for _, row in sorted(self.rows.values(), key=lambda pair: pair[0])]

    def write(self) -> Path:
        start = time.perf_counter()
        rows = self.ours() + [row for key, row in self.earlier.items() if key not in self.rows]
        path = write_manifest(self.out, rows, self.params)
        now = time.perf_counter()
        self.last_cost = now - start
        self.next_write = now + max(MANIFEST_SECONDS, 10 * self.last_cost)
        return path


def _run(todo: Iterator[Job], spec, workers, ray, ray_address, gpus_per_job, report,
         out: Path) -> None:
    if ray or ray_address:
        from emberfx.sweeps.ray_runner import run_ray

        run_ray(todo, spec, ray_address, gpus_per_job, report)
        return
    from emberfx.sweeps import local

    if workers == 0:
        local.run_inline(todo, spec, report)
        return
    pins = local.default_pins()
    count = workers if workers is not None else len(pins)
    log_dir = out / "logs"
    log_dir.mkdir(exist_ok=True)
    local.run_pool(todo, spec, count, pins, report, log_dir)


def _outputs_exist(job: Job, spec: SweepSpec) -> bool:
    names = [job.output(spec), job.state_file(spec)]
    return all((spec.out / name).is_file() for name in names if name is not None)


def _row(job: Job, spec: SweepSpec, fields: dict) -> dict:
    ok = fields["status"] == "ok"
    return {"job": job.key, **dict(job.params), "status": fields["status"],
            "error": fields.get("error", ""), "output": job.output(spec) if ok else "",
            "state": (job.state_file(spec) or "") if ok else "", "seconds": fields.get("seconds"),
            "adapter": fields.get("adapter", ""), "host": fields.get("host", ""),
            "worker": fields.get("worker"), "attempts": fields.get("attempts")}
