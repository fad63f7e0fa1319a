"""GPU -> CPU readback without stalls: a ring of staging buffers consumed one or two frames later.

Each frame the engine copies a small gather buffer (counters the systems asked for) into a free
ring slot and maps it with READ_NOSYNC after the submit. A slot is only reused once its mapping has
completed and it has been unmapped: a submit that touches a mapped or map-pending buffer aborts the
process in wgpu-native (see WGPU_NOTES), so when every slot is still in flight the frame simply
skips its readback instead of waiting.

There is also ``read_buffer`` (and ``read_texture``): a blocking read for tests, ``Engine.state()``,
``render()`` and exports, never the frame loop. A blocking read waits at most ``readback_timeout()``
seconds: a WGSL loop that never ends (a user's modifier) hangs the GPU queue, and the map of a
staging buffer behind it would never complete, so the process would hang with it. Past the limit
the map is abandoned and ReadbackTimeoutError names what was being read (``reading(what)``).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.core.errors import EmberError
from emberfx.core.resources import BufferView

COPY_ALIGN = 4
ROW_ALIGN = 256        # copy_texture_to_buffer: bytes_per_row is a multiple of this
TIMEOUT_VARIABLE = "EMBERFX_READBACK_TIMEOUT"
GPU_TIMEOUT_SECONDS = 10.0        # a blocking read on a GPU: far more than any sane frame
SOFTWARE_TIMEOUT_SECONDS = 300.0  # lavapipe: one step of a million particles can take seconds
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

    def settle(self, timeout: float = DRAIN_SECONDS) -> None:
        """Wait until every slot in flight has landed (at most ``timeout`` seconds in all),
        then collect them as ``poll`` does: the next ``acquire`` then finds every slot free, so
        which slot a frame copies into no longer depends on the GPU's timing."""
        deadline = time.monotonic() + timeout
        for slot in self.slots:
            if slot.promise is not None:
                wait_settled(slot.promise, deadline - time.monotonic())
        self.poll()

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


class ReadbackTimeoutError(EmberError):
    """A blocking read that the GPU did not complete in time (its queue is likely hung)."""


_READING: contextvars.ContextVar[str | None] = contextvars.ContextVar("emberfx_reading",
                                                                      default=None)


@contextlib.contextmanager
def reading(what: str):
    """Name what the blocking reads inside the block fetch (``"entity 'fountain'"``), for the
    timeout's message: read_buffer's callers are the systems, which do not know the entity."""
    token = _READING.set(what)
    try:
        yield
    finally:
        _READING.reset(token)


def readback_timeout(software: bool) -> float | None:
    """Seconds a blocking read may wait: EMBERFX_READBACK_TIMEOUT (0: no limit), else 10 on a
    GPU and 300 on a software adapter. None: no limit."""
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return SOFTWARE_TIMEOUT_SECONDS if software else GPU_TIMEOUT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0.0 or seconds == float("inf"):   # also rejects nan
        raise EmberError(f"{TIMEOUT_VARIABLE}={text!r}: expected a number of seconds >= 0 "
                         f"(0: no limit)")
    return seconds or None


def _software() -> bool:
    # the device being read from is the context's device
    from emberfx.core.gpu import get_context

    return get_context().is_software


def _wait_for_map(promise, timeout: float | None) -> bool:
    """Wait for a map to settle, at most ``timeout`` seconds (None: for ever); tests replace
    this to stand in for a GPU queue that never finishes."""
    if timeout is None:
        while not _settled(promise):
            time.sleep(0.001)
        return True
    return wait_settled(promise, timeout)


def _map_staging(staging) -> None:
    """Map ``staging`` (after the submit that copied into it), waiting at most the readback
    timeout; on a timeout the map is abandoned and ReadbackTimeoutError raised."""
    # READ_NOSYNC: "READ" first submits and blocks in that call, where no timeout can reach it
    promise = staging.map_async("READ_NOSYNC")
    timeout = readback_timeout(_software())
    if not _wait_for_map(promise, timeout):
        abandon_map(staging, promise)
        what = _READING.get() or "a GPU buffer"
        raise ReadbackTimeoutError(
            f"reading {what}: the GPU gave no result within {timeout:g} s "
            f"({TIMEOUT_VARIABLE}); its queue is probably hung, e.g. by a WGSL modifier that "
            f"loops forever (check the loops of the scene's init/update/color files)")
    promise.sync_wait()   # returns at once: settled (a failed map raises here)


def read_buffer(device, buffer, size: int | None = None, offset: int = 0) -> bytes:
    """Blocking copy of a buffer's bytes to the CPU (tests, state(); not for the frame loop).
    ``buffer`` may be a GPUBuffer or a registry BufferView (offsets are then within the view).
    Waits at most ``readback_timeout()`` (ReadbackTimeoutError)."""
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
    _map_staging(staging)
    data = bytes(staging.read_mapped(0, padded, copy=True))[:size]
    staging.unmap()
    staging.destroy()
    return data


def read_texture(device, texture, bytes_per_pixel: int, aspect: str = "all") -> bytes:
    """Blocking copy of a 2D texture's mip 0 to the CPU, rows packed tightly (``width *
    bytes_per_pixel`` bytes each); ``aspect`` "depth-only" for a depth texture. The texture needs
    COPY_SRC. Waits at most ``readback_timeout()`` (ReadbackTimeoutError)."""
    w, h = texture.size[:2]
    row = w * bytes_per_pixel
    padded_row = (row + ROW_ALIGN - 1) // ROW_ALIGN * ROW_ALIGN
    staging = device.create_buffer(size=padded_row * h,
                                   usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
    encoder = device.create_command_encoder(label="emberfx:read_texture")
    encoder.copy_texture_to_buffer(
        {"texture": texture, "mip_level": 0, "origin": (0, 0, 0), "aspect": aspect},
        {"buffer": staging, "offset": 0, "bytes_per_row": padded_row, "rows_per_image": h},
        (w, h, 1))
    device.queue.submit([encoder.finish()])
    _map_staging(staging)
    data = np.frombuffer(staging.read_mapped(0, padded_row * h, copy=True), np.uint8)
    staging.unmap()
    staging.destroy()
    return data.reshape(h, padded_row)[:, :row].tobytes()


def read_array(device, buffer, dtype, count: int | None = None) -> np.ndarray:
    dtype = np.dtype(dtype)
    size = None if count is None else count * dtype.itemsize
    return np.frombuffer(read_buffer(device, buffer, size), dtype=dtype).copy()
