"""Per-pass times for an inspector: GPU timestamps around every frame-graph pass, or the CPU time
spent encoding each pass where the device has no timestamp queries.

WebGPU stamps only at pass boundaries (``timestamp_writes`` of begin_compute_pass and
begin_render_pass), so telling ``fountain:emitter:update`` from ``fountain:emitter:spawn`` needs
each in its own GPU pass. That costs ~20-60 us of Python per pass (WGPU_NOTES), which is why the
frame graph splits its shared passes only while a profiler is attached.

Results must never stall a frame: each encoding resolves its stamps into a staging buffer from a
small ring, mapped with READ_NOSYNC after the submit and read one or two frames later (the pattern
of readback.ReadbackRing). A slot is reused only once its mapping has completed and it has been
unmapped, because a submit that touches a mapped buffer aborts the process; when every slot is in
flight that encoding's stamps are dropped instead of waited for. ``times()`` is an exponential
moving average per pass name, so an inspector shows steady numbers; until a pass has 1/smoothing
samples it is their plain mean, so a slow first frame (shader compilation, first touch of memory)
fades as fast as the window fills instead of weighing on the average for long.

Buffer operations (ClearBuffer, CopyBuffer, CopyTexture) are encoder commands, not passes: they
cannot carry pass stamps, so they are left out of ``times()`` in both modes and both sources list
the same names.

The CPU fallback ("cpu encode") times the Python work of recording each pass with perf_counter.
It does not split passes (there is nothing to stamp), so the first pass of a shared compute pass
also carries the cost of beginning it.

lavapipe: WGPU_NOTES says compute stamps are wrong when a render pass follows in the same encoder;
the engine keeps steps (CLEAR..PREPARE, READBACK) and draws in separate submissions, so step
encoders hold no render pass. Measured here on top of that: once a device has executed any render
pass, its compute stamps stay unreliable (near zero, or the time lands in a neighbouring pass) for
an irregular number of later submits, even compute-only ones. Render-pass stamps and a device that
never rendered time correctly. Keep CPU frame times too, as the notes say.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.core.errors import EmberError
from emberfx.core.readback import DRAIN_SECONDS, _settled, abandon_map, wait_settled

GPU_TIMESTAMPS = "gpu timestamps"
CPU_ENCODE = "cpu encode"
PASS_BYTES = 16            # a begin and an end stamp, resolved as u64 nanoseconds each
MAX_QUERIES = 4096         # wgpu's limit for one query set
RESOLVE_ALIGN = 256        # resolve_query_set destination offsets


def _aligned(n: int, to: int) -> int:
    return (n + to - 1) // to * to


@dataclass
class _Slot:
    buffer: wgpu.GPUBuffer
    names: list[str] = field(default_factory=list)   # pass names in stamp order
    frame: int = -1
    # the encoder that copies into it, until submitted() is called
    encoder: wgpu.GPUCommandEncoder | None = None
    promise: wgpu.GPUPromise | None = None   # the pending map; None once read and unmapped

    @property
    def free(self) -> bool:
        return self.encoder is None and self.promise is None


class PassProfiler:
    """Times frame-graph passes by name. ``FrameGraph.encode(..., profiler=p)`` records into it;
    the caller says ``p.submitted()`` right after the queue.submit of those encoders."""

    def __init__(self, device, capacity_passes: int = 256, *, use_timestamps: bool | None = None,
                 smoothing: float = 0.1, ring_slots: int = 3):
        """``use_timestamps``: None uses them when the device has "timestamp-query", False forces
        the CPU fallback, True requires them. ``smoothing``: the moving average's weight of the
        newest frame. ``capacity_passes`` grows by itself when an encoding holds more passes."""
        has_timestamps = "timestamp-query" in device.features
        if use_timestamps and not has_timestamps:
            raise EmberError("PassProfiler(use_timestamps=True): this device was created without "
                             "the 'timestamp-query' feature")
        self.device = device
        self.uses_timestamps = has_timestamps if use_timestamps is None else bool(use_timestamps)
        self.source = GPU_TIMESTAMPS if self.uses_timestamps else CPU_ENCODE
        self.smoothing = float(smoothing)
        self.frames_measured = 0   # encodings whose times reached the averages
        self.frames_skipped = 0    # encodings dropped because every ring slot was in flight
        self._averages: dict[str, float] = {}
        self._samples: dict[str, int] = {}
        self._cpu_seconds: dict[str, float] = {}
        self._names: list[str] = []   # timed passes of the encoding being recorded
        self._frames = 0
        self.capacity = 0
        if self.uses_timestamps:
            self.capacity = max(1, min(int(capacity_passes), MAX_QUERIES // 2))
            self._query_set = self._new_query_set()
            # (query set, first pass, end pass) ranges of this encoding recorded into query sets
            # that were replaced when it outgrew them; they are resolved with the rest
            self._outgrown: list[tuple[object, int, int]] = []
            self._resolve = None
            self._slots = [_Slot(self._new_staging(self.capacity)) for _ in range(ring_slots)]

    # recording (called by the frame graph) -----------------------------------------------------
    @contextmanager
    def measure(self, name: str):
        """Wrap the recording of one pass. Yields the pass's ``timestamp_writes`` (None in the
        CPU fallback, or past the largest query set wgpu allows: that pass goes untimed)."""
        if self.uses_timestamps:
            yield self._reserve(name)
        else:
            start = time.perf_counter()
            yield None
            self._cpu_seconds[name] = (self._cpu_seconds.get(name, 0.0)
                                       + time.perf_counter() - start)

    def _reserve(self, name: str) -> dict | None:
        index = len(self._names)
        if index >= self.capacity:
            if self.capacity >= MAX_QUERIES // 2:
                return None
            # the passes recorded so far keep the old set; queries stay at 2 * pass index so one
            # resolve per set lands each pass at its place in the staging buffer
            first = self._outgrown[-1][2] if self._outgrown else 0
            self._outgrown.append((self._query_set, first, index))
            self.capacity = min(self.capacity * 2, MAX_QUERIES // 2)
            self._query_set = self._new_query_set()
        self._names.append(name)
        return {"query_set": self._query_set, "beginning_of_pass_write_index": 2 * index,
                "end_of_pass_write_index": 2 * index + 1}

    def encoded(self, encoder) -> None:
        """End of recording into ``encoder``: resolve its stamps into a free ring slot."""
        if not self.uses_timestamps:
            if self._cpu_seconds:
                self._fold({n: s * 1e3 for n, s in self._cpu_seconds.items()})
                self._cpu_seconds = {}
            return
        self._abandon_unsubmitted(encoder)
        names, self._names = self._names, []
        first = self._outgrown[-1][2] if self._outgrown else 0
        ranges = [*self._outgrown, (self._query_set, first, len(names))]
        self._outgrown = []
        if not names:
            return
        self.poll()
        slot = next((s for s in self._slots if s.free), None)
        if slot is None:
            self.frames_skipped += 1
            return
        if slot.buffer.size < PASS_BYTES * len(names):
            slot.buffer = self._new_staging(self.capacity)   # free: neither mapped nor pending
        needed = sum(_aligned(PASS_BYTES * (end - start), RESOLVE_ALIGN)
                     for _, start, end in ranges)
        if self._resolve is None or self._resolve.size < needed:
            # earlier encoders keep the old buffer alive until they have run
            self._resolve = self.device.create_buffer(
                label="profiler:resolve", size=needed,
                usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        offset = 0
        for query_set, start, end in ranges:
            if end == start:
                continue
            size = PASS_BYTES * (end - start)
            encoder.resolve_query_set(query_set, 2 * start, 2 * (end - start),
                                      self._resolve, offset)
            encoder.copy_buffer_to_buffer(self._resolve, offset,
                                          slot.buffer, PASS_BYTES * start, size)
            offset += _aligned(size, RESOLVE_ALIGN)
        slot.names, slot.encoder, slot.frame = names, encoder, self._frames
        self._frames += 1

    def submitted(self) -> None:
        """Call right after the queue.submit of every encoder recorded since the last call."""
        if not self.uses_timestamps:
            return
        for slot in self._slots:
            if slot.encoder is not None:
                slot.encoder = None
                slot.promise = slot.buffer.map_async("READ_NOSYNC")

    def _abandon_unsubmitted(self, current_encoder) -> None:
        """A slot copied into by an earlier encoder that was never reported submitted: that
        encoder may still be submitted later, so its buffer must never be mapped; the slot gets a
        fresh one (the old one lives on, unread, as long as that encoder does)."""
        for slot in self._slots:
            if slot.encoder is not None and slot.encoder is not current_encoder:
                slot.buffer = self._new_staging(self.capacity)
                slot.encoder = None

    # results -----------------------------------------------------------------------------------
    def poll(self) -> None:
        """Fold every finished slot into the averages, oldest first; never blocks."""
        if not self.uses_timestamps:
            return
        for slot in sorted(self._slots, key=lambda s: s.frame):
            if slot.promise is not None and _settled(slot.promise):
                slot.promise.sync_wait()   # returns at once: the mapping is done
                stamps = np.frombuffer(slot.buffer.read_mapped(0, PASS_BYTES * len(slot.names),
                                                               copy=True), np.uint64)
                slot.buffer.unmap()
                slot.promise = None
                begins, ends = stamps[0::2], stamps[1::2]
                # WebGPU resolves stamps in nanoseconds; an end before its begin is a driver
                # glitch, not a negative time, so that pass sits this frame out
                self._fold({name: float(end - begin) / 1e6
                            for name, begin, end in zip(slot.names, begins, ends) if end >= begin})

    def times(self) -> dict[str, float]:
        """Pass name -> milliseconds (moving average); GPU results are 1-2 frames old."""
        self.poll()
        return dict(self._averages)

    def reset(self) -> None:
        """Forget the averages (e.g. after a warm-up whose one-off costs should not show)."""
        self._averages = {}
        self._samples = {}
        self.frames_measured = 0
        self.frames_skipped = 0

    def wait(self) -> None:
        """Block until the times of every submitted encoding are in (tests, shutdown; never the
        frame loop: this waits for the GPU)."""
        if not self.uses_timestamps:
            return
        for slot in self._slots:
            if slot.promise is not None and not wait_settled(slot.promise, DRAIN_SECONDS):
                abandon_map(slot.buffer, slot.promise)   # a lost map callback: never hang
                slot.promise, slot.buffer = None, self._new_staging(self.capacity)
        self.poll()

    close = wait   # nothing to release: the buffers go with the profiler once unmapped

    def _fold(self, frame_ms: dict[str, float]) -> None:
        for name, ms in frame_ms.items():
            count = self._samples.get(name, 0) + 1
            self._samples[name] = count
            weight = max(self.smoothing, 1.0 / count)
            before = self._averages.get(name, 0.0)
            self._averages[name] = before + weight * (ms - before)
        self.frames_measured += 1

    def _new_query_set(self):
        return self.device.create_query_set(label="profiler:stamps", type="timestamp",
                                            count=2 * self.capacity)

    def _new_staging(self, passes: int):
        return self.device.create_buffer(label="profiler:staging", size=PASS_BYTES * passes,
                                         usage=wgpu.BufferUsage.MAP_READ
                                         | wgpu.BufferUsage.COPY_DST)
