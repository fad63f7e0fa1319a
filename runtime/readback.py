"""GPU -> CPU readback without stalls: a ring of staging buffers consumed one or two frames later.

Each frame the engine copies a small gather buffer (counters the systems asked for) into a free
ring slot and maps it with READ_NOSYNC after the submit. A slot is only reused once its mapping has
completed and it has been unmapped: a submit that touches a mapped or map-pending buffer aborts the
process in wgpu-native (see WGPU_NOTES), so when every slot is still in flight the frame simply
skips its readback instead of waiting.

There is also ``read_buffer``: a blocking read for tests and ``Engine.state()``, never the frame loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

COPY_ALIGN = 4


def _settled(promise) -> bool:
    # GPUPromise resolves its handler (which flips map_state to "mapped") only through an event
    # loop or sync_wait(). Without a loop we look at its state: once the native callback has set
    # the input, sync_wait() returns at once. This is the one private attribute we rely on.
    return getattr(promise, "_state", "pending") != "pending"


@dataclass
class _Slot:
    buffer: object
    frame: int = -1
    promise: object = None   # pending map, or None when the slot is free


class ReadbackRing:
    def __init__(self, device, size: int, slots: int = 3, label: str = "emberfx:readback"):
        self.size = max(COPY_ALIGN, (size + COPY_ALIGN - 1) // COPY_ALIGN * COPY_ALIGN)
        self.slots = [
            _Slot(device.create_buffer(label=f"{label}[{i}]", size=self.size,
                                       usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST))
            for i in range(slots)]
        self.skipped = 0
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

    def drain(self) -> None:
        """Wait for every in-flight slot (before destroying the buffers)."""
        for slot in self.slots:
            if slot.promise is not None:
                slot.promise.sync_wait()
                slot.buffer.unmap()
                slot.promise = None


def read_buffer(device, buffer, size: int | None = None, offset: int = 0) -> bytes:
    """Blocking copy of a buffer's bytes to the CPU (tests, state(); not for the frame loop)."""
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
