"""What the Engine reports about itself: the readback of the systems' counters (a gather buffer
and a ring of staging buffers, results one or two steps old, never a stall), ``stats()`` and the
per-pass profiler.

Every system declares readback regions; they are laid out in one gather buffer that the
READBACK phase copies them into (gather.py: one compute dispatch for all of them), and the ring
maps a copy of it asynchronously. A layout of one region needs no gathering: the ring slot copies
that region from its own buffer, at the same offset, and the READBACK phase has no pass.
Buffers of the ring must never be freed or reused while mapped or pending (WGPU_NOTES: a submit
touching one aborts), so a new gather buffer waits for the old ring's maps.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import wgpu

from emberfx.core.frame_graph import SIMULATION_PHASES, Folded, Folding, Pass, Phase
from emberfx.core.profiler import PassProfiler
from emberfx.core.readback import GatherLayout, ReadbackRing
from emberfx.engine.gather import gather_passes

if TYPE_CHECKING:
    from emberfx.core.system import Readback

READBACK_MIN_BYTES = 256   # the smallest gather buffer: 5 emitters' counters


class Telemetry:
    """The readback layout, gather buffer and ring; the profiler while profiling is on; the CPU
    time of the last step."""

    def __init__(self, gpu, resources):
        self.gpu = gpu
        self.device = gpu.device
        self.resources = resources
        self.layout = GatherLayout()
        self.gather: wgpu.GPUBuffer | None = None
        self.ring: ReadbackRing | None = None
        self.profiler: PassProfiler | None = None   # only while engine.profiling is on
        self.step_seconds = 0.0
        # the same Pass objects while the layout stays: the frame graph then reuses its work
        self._readback_passes: list[Pass] | None = None
        # with them: the region the ring slot copies itself (one region, no gather pass)
        self._direct: tuple[Readback, int] | None = None

    # the gather layout -------------------------------------------------------------------------
    def lay_out(self, systems) -> None:
        """Lay out every system's readback regions in a new gather buffer and ring (when the
        world is built, and after a rebuild replaced an entity's buffers). Spawn and delete
        adjust the layout in place instead (``entity_changed``)."""
        layout = GatherLayout()
        for r in (r for s in systems for r in s.readbacks()):
            layout.add(r.entity, [r])
        self._new_gather(layout)

    def entity_changed(self, spawned: tuple[str, list[list]] | None = None,
                       deleted: str | None = None) -> None:
        """Only this entity's regions are added (``spawned``: its name and, per system, its
        regions) or removed, so the cost does not grow with the number of entities."""
        self._readback_passes = None
        if deleted is not None:
            self.layout.remove(deleted)
        if spawned is not None:
            name, regions_by_system = spawned
            for regions in regions_by_system:
                self.layout.add(name, regions)
        if self.layout.end > (self.gather.size if self.gather is not None else 0):
            self._new_gather(self.layout.compacted())

    def _new_gather(self, layout: GatherLayout) -> None:
        """A gather buffer and ring with room for ``layout`` and as much again, so spawns
        rarely reallocate. The old ring finishes its maps first."""
        if self.ring is not None:
            assert self.gather is not None   # made together
            self.ring.destroy()
            self.gather.destroy()
        self.layout = layout
        self.gather = None
        self.ring = None
        self._readback_passes = None
        if layout.end:
            capacity = max(READBACK_MIN_BYTES, 2 * layout.end)
            self.gather = self.device.create_buffer(
                label="readback/gather", size=capacity,
                usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
            self.ring = ReadbackRing(self.device, capacity)

    def readback_passes(self, drawn: frozenset[str] = frozenset()) -> list[Pass]:
        """The READBACK phase: each region copied to its place in the gather buffer; no pass
        when the ring slot copies the layout's one region itself. ``drawn``: the resources the
        drawing passes write (the slot's copy follows them, so a region among them is
        gathered)."""
        if self._readback_passes is None:
            self._direct = self._direct_region(drawn)
            if self.gather is None or self._direct is not None:
                self._readback_passes = []
            else:
                self._readback_passes = gather_passes(self.gpu, self.resources, self.layout,
                                                      self.gather)
        return self._readback_passes

    def _direct_region(self, drawn: frozenset[str]) -> tuple[Readback, int] | None:
        """The layout's region and its offset when it is the only one: gathering it would copy
        it twice, once into the gather buffer and once into the slot. Its buffer must allow
        copying, and no drawing pass may write it (the slot's copy comes after them)."""
        regions = [(region, at) for region, at in self.layout if region.size]
        if len(regions) != 1:
            return None
        region, at = regions[0]
        copyable = region.buffer.usage & wgpu.BufferUsage.COPY_SRC
        return (region, at) if copyable and region.resource not in drawn else None

    def folded(self) -> tuple[Folded, ...]:
        """The READBACK phase's work that is not a pass: the one region the ring slot copies
        itself (known once the READBACK phase was laid out)."""
        if self._direct is None:
            return ()
        return (Folded(Phase.READBACK, Folding.AFTER_PASSES,
                       f"{self._direct[0].resource}: copied straight into the staging ring, as "
                       f"the only region read back needs no gather pass"),)

    # a step's readback -------------------------------------------------------------------------
    def acquire_slot(self):
        """A free ring slot for this step's counters, or None (no readbacks, or all busy)."""
        if self.ring is None:
            return None
        if self.gpu.settled_readbacks:
            self.ring.settle()
        return self.ring.acquire()

    def readback_copy(self, slot) -> Callable[[wgpu.GPUCommandEncoder], None]:
        """The step's readback into ``slot``, to record last in the step's encoder: the gather
        buffer, or the one region that was not gathered (at its place in the layout: ``latest``
        reads the slot the same way). Fixed now, as the READBACK phase was just encoded: a held
        step records it later, and the layout may change in between."""
        assert self.ring is not None and self.gather is not None
        assert self._readback_passes is not None   # the READBACK phase was laid out
        if self._direct is not None:
            region, at = self._direct
            return functools.partial(_copy, source=region.buffer, offset=region.offset,
                                     slot=slot.buffer, at=at, size=region.size)
        return functools.partial(_copy, source=self.gather, offset=0, slot=slot.buffer, at=0,
                                 size=self.ring.size)

    def submitted(self, slot=None, frame: int = 0) -> None:
        """After a submit: the slot's map starts; the profiler collects its timings."""
        if self.ring is not None and slot is not None:
            self.ring.submitted(slot, frame)
        if self.profiler is not None:
            self.profiler.submitted()

    # reports -----------------------------------------------------------------------------------
    def latest(self, heard: int | None = None) -> tuple[int | None, dict[str, bytes]]:
        """The newest completed readback: its frame and each entity's gathered bytes. When that
        frame is ``heard`` (the caller has its bytes already), the bytes are left out: the
        events check asks every step, and a new readback arrives every few."""
        latest = self.ring.poll() if self.ring is not None else None
        per_entity: dict[str, bytes] = {}
        if latest is None:
            return None, per_entity
        frame, data = latest
        if frame == heard:
            return frame, per_entity
        for r, offset in self.layout:
            per_entity[r.entity] = data[offset:offset + r.size]
        return frame, per_entity

    def stats(self, world, graph, clock, adapter: str, size: tuple[int, int]) -> dict:
        """Counters from the readback ring (one or two steps old), the clock and the adapter."""
        frame, per_entity = self.latest()
        return {
            "frame": clock.steps,
            "time": clock.time,
            "adapter": adapter,
            "size": size,
            "readback_frame": frame,
            "readback_skipped": self.ring.skipped if self.ring else 0,
            "step_cpu_ms": self.step_seconds * 1e3,
            "compute_passes_per_step": graph.compute_pass_count(SIMULATION_PHASES,
                                                                profiler=self.profiler),
            "pass_time_source": self.profiler.source if self.profiler is not None else None,
            "entities": world.stats(per_entity),
        }

    def set_profiling(self, on: bool) -> None:
        if on and self.profiler is None:
            self.profiler = PassProfiler(self.device)
        elif not on and self.profiler is not None:
            self.profiler.close()
            self.profiler = None

    def pass_times(self, current: set[str]) -> dict[str, float]:
        """Milliseconds per pass named in ``current`` ({} when not profiling)."""
        if self.profiler is None:
            return {}
        return {name: ms for name, ms in self.profiler.times().items() if name in current}

    # releasing ---------------------------------------------------------------------------------
    def settle(self) -> None:
        """Before the world's buffers go: the ring's and the profiler's maps finish (profiling
        goes on after a restart)."""
        if self.ring is not None:
            self.ring.drain()
        if self.profiler is not None:
            self.profiler.close()

    def destroy(self) -> None:
        for resource in (self.gather, self.ring):
            if resource is not None:
                resource.destroy()   # the ring drains its maps first


def _copy(encoder, *, source, offset: int, slot, at: int, size: int) -> None:
    encoder.copy_buffer_to_buffer(source, offset, slot, at, size)
