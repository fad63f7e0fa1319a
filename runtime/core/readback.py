"""GPU -> CPU readback without stalls: a ring of staging buffers consumed one or two frames later.

Each frame the engine copies a small gather buffer (counters the systems asked for) into a free
ring slot and maps it with READ_NOSYNC after the submit. A slot is only reused once its mapping has
completed and it has been unmapped: a submit that touches a mapped or map-pending buffer aborts the
process in wgpu-native (see WGPU_NOTES), so when every slot is still in flight the frame simply
skips its readback instead of waiting.

There is also ``read_buffer``: a blocking read for tests and ``Engine.state()``, never the frame
loop.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.core.resources import BufferView

COPY_ALIGN = 4
DRAIN_SECONDS = 2.0    # close() waits this long in all for in-flight maps, then abandons them
ABORT_SECONDS = 0.2    # after destroying a buffer, how long its map callback may take to say so


def _settled(promise) -> bool:
    # GPUPromise resolves its handler (which flips map_state to "mapped") only through an event
    # loop or sync_wait(). Without a loop we look at its state: once the native callback has set
    # the input, sync_wait() returns at once. This is the one private attribute we rely on.
    return getattr(promise, "_state", "pending") != "pending"


def wait_settled(promise, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for a map to complete or fail; True when it did."""
    deadline = time.monotonic() + timeout
    while not _settled(promise):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(0.001, remaining))
    return True


def abandon_map(buffer, promise) -> None:
    """Give up on a map that did not complete in time, without ever blocking on it.

    Destroying the buffer aborts a map wgpu-native still holds; its callback then rejects the
    promise. A map whose callback was cut short (a Ctrl-C raised inside a cffi callback is printed
    as "ignored" and dropped) never settles at all: wgpu-py keeps the promise alive, and its poll
    thread spins on the promise's poll token as long as the promise lives. Rejecting it through
    the hook the native callback itself uses lets both go.
    """
    buffer.destroy()
    if not wait_settled(promise, ABORT_SECONDS):
        promise._wgpu_set_error(RuntimeError("emberfx: map abandoned (its callback never ran)"))
    try:
        promise.sync_wait()   # resolves it: wgpu-py drops the callback and its poll token
    except RuntimeError:      # the rejection itself: nothing left to read
        pass


@dataclass
class _Slot:
    buffer: wgpu.GPUBuffer
    frame: int = -1
    promise: wgpu.GPUPromise | None = None   # pending map, or None when the slot is free


class ReadbackRing:
    def __init__(self, device, size: int, slots: int = 3, label: str = "emberfx:readback"):
        self.size = max(COPY_ALIGN, (size + COPY_ALIGN - 1) // COPY_ALIGN * COPY_ALIGN)
        self.slots = [
            _Slot(device.create_buffer(label=f"{label}[{i}]", size=self.size,
                                       usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST))
            for i in range(slots)]
        self.skipped = 0
        self.abandoned = 0    # maps that drain() gave up on
        self.latest: tuple[int, bytes] | None = None   # (frame, bytes) of the newest result

    def acquire(self):
        """A free slot for this frame's copy, or None when every slot is still in flight."""
        self.poll()
        for slot in self.slots:
            if slot.promise is None:
                return slot
        self.skipped += 1
        return None

    def submitted(self, slot: _Slot, frame: int) -> None:
        """Call right after the queue.submit that copied into ``slot``."""
        slot.frame = frame
        slot.promise = slot.buffer.map_async("READ_NOSYNC")

    def destroy(self) -> None:
        """Finish the slots in flight (drain), then free the staging buffers."""
        self.drain()
        for slot in self.slots:
            slot.buffer.destroy()

    def poll(self) -> tuple[int, bytes] | None:
        """Collect every finished slot (newest wins) and free it; never blocks."""
        for slot in sorted(self.slots, key=lambda s: s.frame):
            if slot.promise is not None and _settled(slot.promise):
                slot.promise.sync_wait()  # returns at once: the input is already there
                data = bytes(slot.buffer.read_mapped(0, self.size, copy=True))
                slot.buffer.unmap()
                slot.promise = None
                if self.latest is None or slot.frame > self.latest[0]:
                    self.latest = (slot.frame, data)
        return self.latest

    def drain(self, timeout: float = DRAIN_SECONDS) -> None:
        """Finish every in-flight slot before the ring goes away: wait for its map (at most
        ``timeout`` seconds in all), unmap it, and abandon what is still pending then, so
        closing never hangs on a map that cannot complete."""
        deadline = time.monotonic() + timeout
        for slot in self.slots:
            promise, slot.promise = slot.promise, None
            if promise is None:
                continue
            if not wait_settled(promise, deadline - time.monotonic()):
                self.abandoned += 1
                abandon_map(slot.buffer, promise)
                continue
            try:
                promise.sync_wait()   # returns at once: settled
            except RuntimeError:      # a failed map: nothing is mapped
                continue
            if slot.buffer.map_state == "mapped":
                slot.buffer.unmap()


class GatherLayout:
    """Where each readback region lands in the gather buffer, the one buffer that a frame copies
    into a ring slot; it iterates as ``(Readback, offset)`` pairs, entity by entity.

    A new entity's regions go after the last one and a deleted entity leaves a hole, so the
    other entities keep their offsets and the results already in flight stay valid for them:
    adding or removing an entity costs the same in a world of any size. Bytes past ``end`` have
    never been written since the gather buffer was made (offsets are never handed out twice in
    one buffer), so a result copied before a new entity's first step shows it as zeros, never as
    another entity's old counters. When ``end`` outgrows the buffer, ``compacted()`` closes the
    holes for a new, larger one (and a new ring: the old results have the old offsets).
    """

    def __init__(self):
        self.by_entity: dict[str, list[tuple[object, int]]] = {}
        self.end = 0     # bytes handed out, holes included

    def __iter__(self):
        for regions in self.by_entity.values():
            yield from regions

    def add(self, entity: str, regions) -> None:
        placed = self.by_entity.setdefault(entity, [])
        for region in regions:
            placed.append((region, self.end))
            self.end += _aligned(region.size)

    def remove(self, entity: str) -> None:
        self.by_entity.pop(entity, None)

    def compacted(self) -> GatherLayout:
        """The same regions, in the same order, without holes."""
        out = GatherLayout()
        for entity, regions in self.by_entity.items():
            out.add(entity, [region for region, _ in regions])
        return out


def _aligned(size: int) -> int:
    return (size + COPY_ALIGN - 1) // COPY_ALIGN * COPY_ALIGN


def read_buffer(device, buffer, size: int | None = None, offset: int = 0) -> bytes:
    """Blocking copy of a buffer's bytes to the CPU (tests, state(); not for the frame loop).
    ``buffer`` may be a GPUBuffer or a registry BufferView (offsets are then within the view)."""
    if isinstance(buffer, BufferView):
        size = buffer.size - offset if size is None else size
        offset += buffer.offset
        buffer = buffer.buffer
    size = buffer.size - offset if size is None else size
    if size == 0:
        return b""
    padded = (size + COPY_ALIGN - 1) // COPY_ALIGN * COPY_ALIGN
    staging = device.create_buffer(size=padded,
                                   usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    encoder = device.create_command_encoder(label="emberfx:read_buffer")
    encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, padded)
    device.queue.submit([encoder.finish()])
    staging.map_sync("READ")
    data = bytes(staging.read_mapped(0, padded, copy=True))[:size]
    staging.unmap()
    staging.destroy()
    return data


def read_array(device, buffer, dtype, count: int | None = None) -> np.ndarray:
    dtype = np.dtype(dtype)
    size = None if count is None else count * dtype.itemsize
    return np.frombuffer(read_buffer(device, buffer, size), dtype=dtype).copy()
