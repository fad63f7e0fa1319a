"""Many fixed steps of one entity in few submissions: the GPU side of a ``prewarm``.

Steps go to the GPU in batches, one submission each, never one submission (or readback) per step.
A queue.write_buffer lands before the submission, so every step of a batch would see the last
one's uniforms; instead each step's uniform records are staged side by side in one buffer, and
the batch copies a step's share into place before that step's passes (byte for byte what
write_buffer gives a step-by-step run). A two-deep fence keeps one batch queued while the previous
finishes, so the progress shown follows the GPU, not the encoder.

    run_steps(device, label, steps, work_per_step, encode_step, fence_source=...,
              notice=PrewarmNotice(...), uniforms=StagedUniforms(...))
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import wgpu

from emberfx.core.resources import BufferView


@dataclass(frozen=True)
class StepBatching:
    """How a prewarm's steps go to the GPU, for every family: each submission holds at most
    ``work`` units of work and at most ``steps`` steps, so one stays short on any device and
    the progress bar moves; a run of ``notice_work`` units or more says on stderr that it runs
    (a bar on a terminal). An Engine takes one (``Engine(scene, step_batching=...)``, which the
    families read from ``SharedResources.tuning["step_batches"]``); without one, ``DEFAULT``."""
    work: int = 1 << 25
    steps: int = 256
    notice_work: int = 1 << 25

    def __post_init__(self) -> None:
        for name in ("work", "steps", "notice_work"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"StepBatching.{name}: expected an integer of 1 or more, "
                                 f"found {value!r}")


DEFAULT = StepBatching()
KEY = "step_batches"   # its key in SharedResources.tuning


@dataclass(frozen=True)
class StagedUniforms:
    """Uniform records that change from step to step: ``records(k)`` gives step k's bytes for
    each of ``targets`` (the same sizes every step)."""
    targets: Sequence[BufferView]
    records: Callable[[int], Sequence[bytes]]


@dataclass(frozen=True)
class PrewarmNotice:
    """What the one-line notice of a long run names: "entity 'swarm': prewarming 2 s = 120 steps
    of 20,000 particles (2,400,000 particle-steps)"."""
    entity: str
    seconds: float
    size: str      # one step's work as the entity states it ("20,000 particles")
    unit: str      # the unit of work ("particle-steps")


def batching_of(shared) -> StepBatching:
    """The Engine's StepBatching (``shared``: its SharedResources)."""
    return shared.tuning_value(KEY, DEFAULT, "step_batching")


def batch_steps(work_per_step: int, batching: StepBatching = DEFAULT) -> int:
    """Steps per submission for steps of ``work_per_step`` units each, within ``batching``'s
    limits."""
    return max(1, min(batching.steps, batching.work // max(1, work_per_step)))


def run_steps(device: wgpu.GPUDevice, label: str, steps: int, work_per_step: int,
              encode_step: Callable[[wgpu.GPUCommandEncoder, int], None], *,
              fence_source: BufferView, notice: PrewarmNotice,
              uniforms: StagedUniforms | None = None,
              batching: StepBatching = DEFAULT) -> None:
    """Encode steps 0 .. ``steps`` - 1 with ``encode_step(encoder, k)`` in batches (see the
    module docstring). ``uniforms``: records copied into place before each step's passes.
    ``fence_source``: any buffer with COPY_SRC; 4 bytes of it mark a batch's end.
    ``batching``: the submissions' limits and the notice's threshold."""
    usage = wgpu.BufferUsage
    batch = batch_steps(work_per_step, batching)
    targets = uniforms.targets if uniforms is not None else ()
    records_of = uniforms.records if uniforms is not None else (lambda k: ())
    staging = None
    fences = [device.create_buffer(label=f"{label}:fence[{i}]", size=4,
                                   usage=usage.MAP_READ | usage.COPY_DST) for i in range(2)]
    in_flight: list[tuple[object, object, int]] = []   # (fence, its map, steps in the batch)
    with _progress(notice, steps, work_per_step, batching.notice_work) as progress:
        try:
            for first in range(0, steps, batch):
                count = min(batch, steps - first)
                records = [records_of(k) for k in range(first, first + count)]
                sizes = [len(part) for part in records[0]]
                stride = sum(sizes)
                if stride:
                    if staging is None:
                        staging = device.create_buffer(label=f"{label}:uniforms",
                                                       size=batch * stride,
                                                       usage=usage.COPY_SRC | usage.COPY_DST)
                    device.queue.write_buffer(
                        staging, 0, b"".join(part for step in records for part in step))
                encoder = device.create_command_encoder(label=label)
                for i in range(count):
                    offset = i * stride
                    for target, size in zip(targets, sizes):   # none without uniforms
                        encoder.copy_buffer_to_buffer(staging, offset, target.buffer,
                                                      target.offset, size)
                        offset += size
                    encode_step(encoder, first + i)
                # a fence is reused two batches later, after its map was waited for and
                # undone: a submit must never touch a buffer mapped or pending a map
                fence = fences[(first // batch) % 2]
                encoder.copy_buffer_to_buffer(fence_source.buffer, fence_source.offset, fence,
                                              0, 4)
                device.queue.submit([encoder.finish()])
                in_flight.append((fence, fence.map_async("READ_NOSYNC"), count))
                if len(in_flight) == 2:
                    progress(_finish_fence(*in_flight.pop(0)))
            while in_flight:
                progress(_finish_fence(*in_flight.pop(0)))
        finally:
            if staging is not None:
                staging.destroy()
            if not in_flight:   # a fence still pending (an interrupt) is left to the GC
                for fence in fences:
                    fence.destroy()


def _finish_fence(fence, mapping, steps: int) -> int:
    """Wait until the batch that wrote ``fence`` has run, unmap it; the batch's step count."""
    mapping.sync_wait()
    fence.unmap()
    return steps


@contextlib.contextmanager
def _progress(notice: PrewarmNotice, steps: int, work_per_step: int, notice_work: int):
    """A function taking the steps just done: a one-line notice when the run is long, and a
    progress bar while it runs when stderr is a terminal."""
    work = work_per_step * steps
    if work < notice_work:
        yield lambda done: None
        return
    from tqdm import tqdm

    print(f"emberfx: entity '{notice.entity}': prewarming {notice.seconds:g} s = {steps:,} steps "
          f"of {notice.size} ({work:,} {notice.unit})", file=sys.stderr, flush=True)
    with tqdm(total=steps, desc=f"prewarm {notice.entity}", unit="step", file=sys.stderr,
              disable=not sys.stderr.isatty(), leave=False) as bar:
        yield bar.update
