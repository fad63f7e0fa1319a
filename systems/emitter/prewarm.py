"""Prewarm: run one emitter alone for ``prewarm`` seconds before the scene's first step.

Those steps lie before t = 0 (so bursts do not fire) and seed births with frames from 2**31 up,
apart from the scene's own frames.

Steps go to the GPU in batches, one submission each. A queue.write_buffer lands before the
submission, so every step of a batch would see the last one's uniforms; instead each step's
params, forces and budget word are staged side by side in one buffer, and the batch copies a
step's share into place before that step's passes (byte for byte what write_buffer gives a
step-by-step run). A two-deep fence keeps one batch queued while the previous finishes, so the
progress shown follows the GPU, not the encoder.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING

import wgpu

from emberfx.core.frame_graph import SIMULATION_PHASES, FrameGraph, Phase
from emberfx.core.system import StepInfo
from emberfx.systems.emitter.component import Emitter
from emberfx.systems.forces.forces import FORCE_KEYS

if TYPE_CHECKING:
    from emberfx.systems.emitter.system import EmitterSystem, _Pool

PREWARM_FRAMES = 1 << 31         # birth-seed frames used while prewarming
# Prewarm submissions: each holds at most PREWARM_BATCH_WORK particle-steps (and at most
# PREWARM_BATCH_STEPS steps), so one stays short on any device and the progress bar moves; a
# prewarm of PREWARM_NOTICE_WORK or more says on stderr that it runs (a bar on a terminal).
PREWARM_BATCH_WORK = 1 << 25
PREWARM_BATCH_STEPS = 256
PREWARM_NOTICE_WORK = 1 << 25


def prewarm(system: EmitterSystem, pool: _Pool) -> None:
    """Advance ``pool`` by its component's prewarm time (see the module docstring)."""
    c, name = pool.component, pool.entity.name
    device = system.device
    dt, seed = system.shared.fixed_dt, system.shared.seed
    steps = c.prewarm_steps(dt)
    graph = FrameGraph([p for p in pool.passes if p.phase in SIMULATION_PHASES
                        and p.phase != Phase.READBACK], system.resources.persistent())
    in_scene = system.query(*FORCE_KEYS)
    batch = prewarm_batch_steps(c.capacity)
    targets = (pool.buffers["params"], pool.buffers["forces"], pool.buffers["counters"])
    usage = wgpu.BufferUsage
    staging = None
    fences = [device.create_buffer(label=f"{name}:emitter:prewarm:fence[{i}]", size=4,
                                   usage=usage.MAP_READ | usage.COPY_DST)
              for i in range(2)]
    in_flight: list[tuple[object, object, int]] = []   # (fence, its map, steps in the batch)
    with _prewarm_progress(name, c, steps) as progress:
        try:
            for first in range(0, steps, batch):
                uniforms = [system._step_uniforms(
                    pool, StepInfo(frame=PREWARM_FRAMES + k, dt=dt, seed=seed),
                    (k - steps) * dt, in_scene)
                    for k in range(first, min(first + batch, steps))]
                sizes = [len(part) for part in uniforms[0]]
                stride = sum(sizes)
                if staging is None:
                    staging = device.create_buffer(
                        label=f"{name}:emitter:prewarm:uniforms", size=batch * stride,
                        usage=usage.COPY_SRC | usage.COPY_DST)
                device.queue.write_buffer(
                    staging, 0, b"".join(part for step in uniforms for part in step))
                encoder = device.create_command_encoder(label=f"{name}:emitter:prewarm")
                for i in range(len(uniforms)):
                    offset = i * stride
                    for target, size in zip(targets, sizes):
                        encoder.copy_buffer_to_buffer(staging, offset, target.buffer,
                                                      target.offset, size)
                        offset += size
                    graph.encode(encoder, {})
                # a fence is reused two batches later, after its map was waited for and
                # undone: a submit must never touch a buffer mapped or pending a map
                fence = fences[(first // batch) % 2]
                counters = targets[2]
                encoder.copy_buffer_to_buffer(counters.buffer, counters.offset, fence, 0, 4)
                device.queue.submit([encoder.finish()])
                in_flight.append((fence, fence.map_async("READ_NOSYNC"), len(uniforms)))
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
    pool.births.last_position = None


def prewarm_batch_steps(capacity: int) -> int:
    """Prewarm steps per submission for a pool of ``capacity`` slots."""
    return max(1, min(PREWARM_BATCH_STEPS, PREWARM_BATCH_WORK // capacity))


def _finish_fence(fence, mapping, steps: int) -> int:
    """Wait until the batch that wrote ``fence`` has run, unmap it; the batch's step count."""
    mapping.sync_wait()
    fence.unmap()
    return steps


@contextlib.contextmanager
def _prewarm_progress(name: str, component: Emitter, steps: int):
    """A function taking the steps just done: a one-line notice when the prewarm is long, and
    a progress bar while it runs when stderr is a terminal."""
    work = component.capacity * steps
    if work < PREWARM_NOTICE_WORK:
        yield lambda done: None
        return
    from tqdm import tqdm

    print(f"emberfx: entity '{name}': prewarming {component.prewarm:g} s = {steps:,} steps of "
          f"{component.capacity:,} slots ({work:,} particle-steps)", file=sys.stderr, flush=True)
    with tqdm(total=steps, desc=f"prewarm {name}", unit="step", file=sys.stderr,
              disable=not sys.stderr.isatty(), leave=False) as bar:
        yield bar.update
