"""A sweep on Ray (``--ray [ADDRESS]``): each job is one Ray task.

- ``--ray`` alone calls ``ray.init()`` (a local Ray, started for the sweep and stopped after
  it); ``--ray ADDRESS`` joins that cluster. A Ray this process already initialised (a notebook,
  a test) is used as it is and left running.
- Where the cluster has GPUs a task asks for ``num_gpus`` (1, or ``--gpus-per-job``); where it
  has none, one CPU, so a CPU-only Ray renders on lavapipe.
- GPU: Vulkan ignores CUDA_VISIBLE_DEVICES, so a task picks its adapter itself. Ray hands it
  physical GPU ids (``ray.get_gpu_ids()``, the node's nvidia-smi numbering); id i becomes
  ``EMBERFX_ADAPTER`` for the node's i-th Vulkan GPU in enumeration order, which followed
  nvidia-smi's order on the two-GPU H200 machine (the manifest's ``adapter`` and ``host``
  columns and ``emberfx bench sweep`` show where jobs ran). Ray runs each GPU task in a fresh
  worker process (its default ``max_calls=1`` for GPU tasks), so a process never meets a second
  GPU id after its GPU context exists.
- A task whose worker process dies is retried by Ray (``max_retries``); a job's own errors are
  results (its manifest row), never retried.
- Jobs are planned as tasks finish: at most ``IN_FLIGHT_PER_SLOT`` tasks per job the cluster can
  run at once are submitted ahead, so a large sweep neither waits for its whole plan nor holds
  it in the object store.
"""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Iterator

from emberfx.core.errors import EmberError, UsageError
from emberfx.sweeps import worker
from emberfx.sweeps.jobs import Job, SweepSpec
from emberfx.sweeps.local import RETRIES, Report

WAIT_SECONDS = 1.0   # how often the driver wakes while waiting (so Ctrl-C is seen)
IN_FLIGHT_PER_SLOT = 2   # tasks submitted per job the cluster runs at once


def ray_task(job: Job, spec: SweepSpec) -> dict:
    """The body of one Ray task: pin the GPU Ray assigned (if any), then run the job."""
    import ray

    ids = ray.get_gpu_ids()
    pin = None
    if ids:
        from emberfx.core.gpu import gpu_adapter_pins

        pins, index = gpu_adapter_pins(), int(ids[0])
        if index >= len(pins):
            return {"status": "error", "error": f"Ray assigned GPU {index} but this node lists "
                    f"{len(pins)} GPU adapters (Vulkan sees no more)", "seconds": 0.0,
                    "adapter": "", "host": socket.gethostname(), "worker": os.getpid()}
        pin = pins[index]
    worker.enter_worker(pin)
    return worker.run_job(job, spec)


def cluster_options(gpus_per_job: float | None) -> tuple[dict, int]:
    """Task resources (GPUs where the cluster has them, else one CPU), and how many such tasks
    the cluster runs at once."""
    import ray

    resources = ray.cluster_resources()
    gpus = float(resources.get("GPU", 0))
    if gpus > 0:
        wanted = 1.0 if gpus_per_job is None else gpus_per_job
        if wanted > gpus:
            raise UsageError(f"--gpus-per-job {wanted:g}: the Ray cluster has {gpus:g} GPUs")
        return {"num_gpus": wanted}, max(1, int(gpus / wanted))
    return {"num_cpus": 1}, max(1, int(resources.get("CPU", 1)))


def run_ray(jobs: Iterator[Job], spec: SweepSpec, address: str | None, gpus_per_job: float | None,
            report: Report) -> None:
    try:
        import ray
    except ImportError:
        raise EmberError('--ray needs Ray: pip install "emberfx[ray]"') from None
    if gpus_per_job is not None and not 0 < gpus_per_job:
        raise UsageError(f"--gpus-per-job: expected a number > 0, found {gpus_per_job:g}")
    started = not ray.is_initialized()
    if started:
        ray.init(address=address or None, log_to_driver=False)
    try:
        options, slots = cluster_options(gpus_per_job)
        remote = ray.remote(ray_task).options(max_retries=RETRIES, retry_exceptions=False,
                                             **options)
        planned = iter(jobs)
        waiting: dict = {}
        try:
            while True:
                for job in itertools.islice(planned, IN_FLIGHT_PER_SLOT * slots - len(waiting)):
                    waiting[remote.remote(job, spec)] = job
                if not waiting:
                    break
                ready, _ = ray.wait(list(waiting), num_returns=1, timeout=WAIT_SECONDS)
                for ref in ready:
                    job = waiting.pop(ref)
                    try:
                        row = ray.get(ref)
                    except ray.exceptions.RayError as exc:   # its worker died every attempt
                        detail = " ".join(str(exc).split())[:300]
                        row = {"status": "error", "error": f"the Ray task failed on each of "
                               f"{RETRIES + 1} attempts: {detail}", "seconds": 0.0,
                               "adapter": "", "host": "", "worker": 0}
                    report(job, {**row, "attempts": None})
        finally:
            for ref in waiting:   # Ctrl-C or an error: stop what is still queued or running
                ray.cancel(ref, force=True)
    finally:
        if started:
            ray.shutdown()
