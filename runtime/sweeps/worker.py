"""One sweep job in a worker process: load the job's scene, build an Engine, step, write the
output and the final state atomically, and return the job's manifest fields.

A worker process pins its adapter before anything creates the GPU context (``enter_worker``:
``EMBERFX_ADAPTER``), keeps that one context for every job it runs, and builds a fresh Engine
per job. A user mistake or device error fails only the job (its one-line message goes to the
manifest); any other exception is an emberfx bug: the job records its type and message and the
traceback goes to the worker's log.

State files are written byte-for-byte reproducibly: ``numpy.savez`` stamps each member with the
current time, so these .npz files are written member by member with a fixed timestamp, stored
uncompressed (a zlib of another version could compress differently).
"""

from __future__ import annotations

import os
import pickle
import socket
import sys
import time
import traceback
import zipfile
from pathlib import Path

import numpy as np

from emberfx.core.errors import EmberError
from emberfx.engine import interrupts
from emberfx.sweeps.jobs import Job, SweepSpec

#: Test hook: when set to a file path, the first job of any worker that creates this file (it
#: must not exist yet) kills its worker process, so tests can check that a dead worker's job is
#: retried. Never honoured in the driver's own process.
CRASH_ONCE_ENV = "EMBERFX_SWEEP_CRASH_ONCE"
CRASH_EXIT_CODE = 70

_in_worker = False
_pin: str | None = None   # the EMBERFX_ADAPTER value enter_worker set
ZIP_TIME = (1980, 1, 1, 0, 0, 0)   # the earliest time a zip entry can hold


def enter_worker(adapter_pin: str | None) -> None:
    """Make this process a sweep worker that uses the adapter ``adapter_pin`` names (an
    ``EMBERFX_ADAPTER`` value; None: the usual choice). Called before any GPU context exists:
    a process keeps its first context."""
    global _in_worker, _pin
    _in_worker, _pin = True, adapter_pin
    if adapter_pin is not None:
        os.environ["EMBERFX_ADAPTER"] = adapter_pin


def serve() -> None:
    """The loop of a local pool's worker process (started by local.PoolWorker, which has
    already set ``sys.path``): read (adapter pin, spec), then jobs, from stdin until it closes;
    write each job's manifest fields to the original stdout. Everything else this process
    prints, native code's included, goes to stderr, the worker's log.

    Ctrl-C (SIGINT from the driver) stops after the current frame, leaving no file of the
    unfinished job, and the process exits 130 without a traceback."""
    inbox = sys.stdin.buffer
    outbox = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)   # native code (Mesa, ffmpeg) writes to descriptor 1: into the log
    pin, spec = pickle.load(inbox)
    enter_worker(pin)
    try:
        with interrupts.deferred():
            while True:
                try:
                    job = pickle.load(inbox)
                except EOFError:
                    return
                pickle.dump(run_job(job, spec), outbox, protocol=pickle.HIGHEST_PROTOCOL)
                outbox.flush()
    except KeyboardInterrupt:
        sys.stderr.flush()
        os._exit(130)   # the driver stopped the sweep: no traceback, no cleanup to wait for


def run_job(job: Job, spec: SweepSpec) -> dict:
    """Run ``job``; the manifest fields it decides: status, error, seconds, adapter, host,
    worker."""
    start = time.perf_counter()
    _maybe_crash()
    error = None
    try:
        _render(job, spec)
    except EmberError as exc:
        error = " ".join(str(exc).split())
    except Exception as exc:   # a bug fails its job, not the whole sweep; it says which
        traceback.print_exc()
        detail = " ".join(str(exc).split()) or "no message"
        error = (f"{type(exc).__name__}: {detail} (a bug in emberfx; the traceback is in the "
                 f"worker's log)")
    return {"status": "ok" if error is None else "error", "error": error or "",
            "seconds": round(time.perf_counter() - start, 3), "adapter": adapter_label(),
            "host": socket.gethostname(), "worker": os.getpid()}


def adapter_label() -> str:
    """This process's adapter ("none" without one); a worker pinned to one of several GPUs
    adds its index ("NVIDIA H200 (Vulkan, DiscreteGPU) #1"): identical GPUs have one name."""
    from emberfx.core.gpu import get_context

    try:
        label = get_context().label
    except EmberError:
        return "none"
    return label if _pin is None else f"{label} #{_pin.rpartition(':')[2]}"


def _maybe_crash() -> None:
    marker = os.environ.get(CRASH_ONCE_ENV)
    if not _in_worker or not marker:
        return
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return
    os._exit(CRASH_EXIT_CODE)


def _render(job: Job, spec: SweepSpec) -> None:
    """Render one job. Between frames a Ctrl-C (inside ``interrupts.deferred``) stops it; the
    files this job already wrote are removed then, so a stopped job leaves nothing behind."""
    from emberfx.app.output import FrameWriter, default_fps
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    if job.error is not None:
        raise EmberError(job.error)
    scene = loads_scene(job.scene_text, path=job.scene_path)
    out = Path(spec.out)
    written: list[Path] = []
    try:
        with Engine(scene, size=job.size, scripts=spec.scripts) as engine:
            if spec.format == "npz":
                for _ in range(spec.frames):
                    interrupts.check()
                    engine.step(1)
            else:
                fps = spec.fps or default_fps(scene)
                with FrameWriter(out / job.output(spec), size=engine.size, fps=fps) as writer:
                    for i in range(spec.frames):
                        interrupts.check()
                        engine.step(1)
                        if writer.wants_every_frame or i == spec.frames - 1:
                            writer.add(engine.render())
                written.append(out / job.output(spec))
            state_name = job.state_file(spec)
            if state_name is not None:
                interrupts.check()
                arrays = {f"{name}/{key}": value for name in engine.entity_names()
                          for key, value in engine.state(name).items()}
                write_state(out / state_name, arrays)
    except KeyboardInterrupt:
        for path in written:
            path.unlink(missing_ok=True)
        raise


def write_state(path: Path, arrays: dict[str, np.ndarray]) -> Path:
    """A reproducible .npz (see the module doc), atomically; ``numpy.load`` reads it."""
    from emberfx.app.output import write_atomically

    def write(tmp: Path) -> None:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as archive:
            for name, value in arrays.items():
                info = zipfile.ZipInfo(f"{name}.npy", date_time=ZIP_TIME)
                info.external_attr = 0o644 << 16
                with archive.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.ascontiguousarray(value),
                                              allow_pickle=False)

    def verify(tmp: Path) -> None:
        try:
            with np.load(tmp, allow_pickle=False) as loaded:
                found = sorted(loaded.files)
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise EmberError(f"cannot write {path}: the written file does not read back "
                             f"({exc})") from None
        if found != sorted(arrays):
            raise EmberError(f"cannot write {path}: the written file holds {len(found)} "
                             f"arrays, expected {len(arrays)}")

    return write_atomically(path, write, verify)
