"""A step's buffer writes gathered into one upload.

Each ``queue.write_buffer`` costs more than the bytes it moves: wgpu makes a staging buffer
per call (10-20 us of CPU on the H200 host, for a few hundred bytes). The systems write their
step records (emitter params and counters pages, forces, event inboxes, cloth records) in
``before_step``, a handful of small writes every step. While the Engine runs the systems'
``before_step`` (``Resources.staging``), ``Resources.write`` hands its bytes here instead; at
the end they go to the GPU as ONE write into an upload buffer, and the step's command encoder
copies each piece into its buffer before any pass of the step runs.

Order is kept: the copies are recorded in the order of the writes, at the start of the
encoder of the step that reads them, so what each pass sees is what the writes said in that
order. A buffer destroyed before the copies are recorded (released or regrown through
Resources) loses its pending pieces. Taking a resource out of Resources starts a
re-arrangement, whose own submission copies state between buffers: every pending piece is
written directly then, as it would have been without staging. If the systems raise, the pieces
are written directly too.
"""

from __future__ import annotations

import wgpu

COPY_ALIGN = 4                # copy_buffer_to_buffer offsets and sizes (write_buffer's too)
FIRST_UPLOAD_SIZE = 64 << 10  # bytes of the upload buffer when first needed


class StagedWrites:
    """The pending pieces of a step (``pending`` is None when no step is staging) and the
    upload buffer they travel in (grown to the largest step's total, never shrunk)."""

    def __init__(self, device: wgpu.GPUDevice):
        self.device = device
        self.pending: list[tuple[wgpu.GPUBuffer, int, bytes]] | None = None
        self.upload: wgpu.GPUBuffer | None = None

    def begin(self) -> None:
        self.pending = []

    def add(self, buffer: wgpu.GPUBuffer, offset: int, data) -> None:
        """A write of ``data`` at byte ``offset`` of ``buffer`` (copied now: callers reuse their
        arrays)."""
        assert self.pending is not None
        self.pending.append((buffer, offset, bytes(data)))

    def forget(self, buffer: wgpu.GPUBuffer) -> None:
        """``buffer`` is destroyed now: its pending pieces are dropped."""
        if self.pending:
            self.pending = [piece for piece in self.pending if piece[0] is not buffer]

    def write_pending(self) -> None:
        """Every pending piece written directly now, staging going on (a re-arrangement is
        about to copy buffers in a submission of its own, which must see them)."""
        if self.pending:
            pieces, self.pending = self.pending, []
            for piece in pieces:
                self.device.queue.write_buffer(*piece)

    def flush(self, encoder: wgpu.GPUCommandEncoder) -> None:
        """One queue write of every pending piece into the upload buffer, and a copy of each
        piece into its buffer, recorded into ``encoder`` in the order of the writes."""
        pieces, self.pending = self.pending or [], None
        if not pieces:
            return
        total = sum(_aligned(len(data)) for _, _, data in pieces)
        if self.upload is None or self.upload.size < total:
            size = max(total, FIRST_UPLOAD_SIZE,
                       2 * self.upload.size if self.upload is not None else 0)
            if self.upload is not None:
                self.upload.destroy()   # wgpu frees it once the submissions using it are done
            self.upload = self.device.create_buffer(
                label="emberfx:uploads", size=_aligned(size),
                usage=wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
        packed = bytearray(total)
        at = 0
        for _, _, data in pieces:
            packed[at:at + len(data)] = data
            at += _aligned(len(data))
        self.device.queue.write_buffer(self.upload, 0, packed)
        at = 0
        for buffer, offset, data in pieces:
            encoder.copy_buffer_to_buffer(self.upload, at, buffer, offset, len(data))
            at += _aligned(len(data))

    def write_now(self) -> None:
        """The pending pieces written directly (the step that would copy them failed)."""
        pieces, self.pending = self.pending or [], None
        for buffer, offset, data in pieces:
            self.device.queue.write_buffer(buffer, offset, data)

    def destroy(self) -> None:
        self.pending = None
        if self.upload is not None:
            self.upload.destroy()
            self.upload = None


def _aligned(size: int) -> int:
    return (size + COPY_ALIGN - 1) // COPY_ALIGN * COPY_ALIGN
