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

# Each submission holds at most BATCH_WORK units of work (and at most BATCH_STEPS steps), so one
# stays short on any device and the progress bar moves; a run of NOTICE_WORK or more says on
# stderr that it runs (a bar on a terminal).
BATCH_WORK = 1 << 25
BATCH_STEPS = 256
NOTICE_WORK = 1 << 25


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


def batch_steps(work_per_step: int, batch_work: int | None = None,
                most_steps: int | None = None) -> int:
    """Steps per submission for steps of ``work_per_step`` units each, at most ``batch_work``
    units (default BATCH_WORK) and ``most_steps`` steps (default BATCH_STEPS) per
    submission."""
    return max(1, min(most_steps or BATCH_STEPS,
                      (batch_work or BATCH_WORK) // max(1, work_per_step)))


def run_steps(device: wgpu.GPUDevice, label: str, steps: int, work_per_step: int,
              encode_step: Callable[[wgpu.GPUCommandEncoder, int], None], *,
              fence_source: BufferView, notice: PrewarmNotice,
              uniforms: StagedUniforms | None = None, batch: int | None = None,
              notice_work: int | None = None) -> None:
    """Encode steps 0 .. ``steps`` - 1 with ``encode_step(encoder, k)`` in batches (see the
    module docstring). ``uniforms``: records copied into place before each step's passes.
    ``fence_source``: any buffer with COPY_SRC; 4 bytes of it mark a batch's end. ``batch``:
    steps per submission (default batch_steps(work_per_step)); ``notice_work``: the work from
    which the run says on stderr that it runs (default NOTICE_WORK)."""
    usage = wgpu.BufferUsage
    batch = batch or batch_steps(work_per_step)
    targets = uniforms.targets if uniforms is not None else ()
    records_of = uniforms.records if uniforms is not None else (lambda k: ())
    staging = None
    fences = [device.create_buffer(label=f"{label}:fence[{i}]", size=4,
                                   usage=usage.MAP_READ | usage.COPY_DST) for i in range(2)]
    in_flight: list[tuple[object, object, int]] = []   # (fence, its map, steps in the batch)
    with _progress(notice, steps, work_per_step, notice_work or NOTICE_WORK) as progress:
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
