"""Runs a sweep: plans the jobs, skips those a previous run finished, hands the rest to a runner
(this process, the local pool or Ray), keeps the manifest and one progress bar.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emberfx.core.errors import EmberError, UsageError
from emberfx.sweeps.grammar import SweepSet
from emberfx.sweeps.jobs import FORMATS, Job, SweepSpec, plan
from emberfx.sweeps.manifest import read_manifest, write_manifest

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
    """Jobs done / failed with an ETA: tqdm on a terminal, plain lines elsewhere."""

    def __init__(self, total: int, already: int, failed: int, enabled: bool):
        self.total, self.done, self.failed = total, already, failed
        self.start, self.last_line, self.ran = time.perf_counter(), 0.0, 0
        stream = sys.stderr
        self.enabled = enabled and stream is not None
        self.bar = None
        if self.enabled and stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=already, desc="sweep", unit="job", file=stream,
                            postfix={"failed": failed})

    def update(self, ok: bool) -> None:
        self.done, self.ran = self.done + 1, self.ran + 1
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
            left = elapsed / self.ran * (self.total - self.done)
            print(f"emberfx: sweep: {self.done}/{self.total} jobs, {self.failed} failed, "
                  f"{elapsed:.0f} s, about {left:.0f} s left", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_sweep(scene, sets: list[SweepSet], *, frames: int, out, size=None, format: str = "png",
              state: bool = False, workers: int | None = None, ray: bool = False,
              ray_address: str | None = None, gpus_per_job: float | None = None,
              scripts: Any = True, progress: bool = True) -> SweepResult:
    """See ``emberfx.sweep`` (the Python face) and ``emberfx sweep --help``."""
    from emberfx.engine.scripting import check_script_locations, script_policy
    from emberfx.model.scene import Scene, load_scene

    if format not in FORMATS:
        raise UsageError(f"--format {format}: expected one of {', '.join(FORMATS)}")
    if workers is not None and workers < 0:
        raise UsageError(f"--workers {workers}: expected 0 (this process) or more")
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
    params = [s.name for s in sets]
    earlier = {str(row.get("job")): row for row in read_manifest(out)}
    rows: dict[str, dict] = {}
    todo: list[Job] = []
    skipped = 0
    for job in jobs:
        before = earlier.get(job.key)
        if before is not None and before.get("status") == "ok" and _outputs_exist(job, spec):
            rows[job.key] = dict(before)
            skipped += 1
        elif job.error is not None:
            rows[job.key] = _row(job, spec, {"status": "error", "error": job.error,
                                             "seconds": 0.0, "adapter": "", "host": "",
                                             "worker": None, "attempts": 0})
        else:
            todo.append(job)

    def manifest_rows() -> list[dict]:
        ours = [rows[job.key] for job in jobs if job.key in rows]
        return ours + [row for key, row in earlier.items() if key not in {j.key for j in jobs}]

    bar = JobProgress(len(jobs), len(rows), sum(job.error is not None for job in jobs), progress)
    last_write = [time.perf_counter()]

    def report(job: Job, fields: dict) -> None:
        rows[job.key] = _row(job, spec, fields)
        bar.update(fields["status"] == "ok")
        if time.perf_counter() - last_write[0] >= MANIFEST_SECONDS:
            write_manifest(out, manifest_rows(), params)
            last_write[0] = time.perf_counter()

    result = SweepResult([], out / "manifest", skipped=skipped)
    try:
        _run(todo, spec, workers, ray, ray_address, gpus_per_job, report, out)
    except KeyboardInterrupt:
        result.interrupted = True
        raise
    finally:
        bar.close()
        result.manifest = write_manifest(out, manifest_rows(), params)
        result.rows = [rows[job.key] for job in jobs if job.key in rows]
        result.ran = bar.ran
        result.failed = sum(1 for row in result.rows if row.get("status") != "ok")
        if result.interrupted:
            print(f"emberfx: sweep stopped: {len(result.rows)} of {len(jobs)} jobs finished, "
                  f"listed in {result.manifest}; run the same command again to resume",
                  file=sys.stderr)
    return result


def _run(todo, spec, workers, ray, ray_address, gpus_per_job, report, out: Path) -> None:
    if not todo:
        return
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
    local.run_pool(todo, spec, min(count, len(todo)), pins, report, log_dir)


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
