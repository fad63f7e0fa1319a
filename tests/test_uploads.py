"""A step's writes gathered into one upload (core/uploads.py), on the software GPU. The oracle:
the bytes the same writes, made one by one in order, leave in a numpy copy of each buffer."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.core.readback import read_array
from emberfx.core.resources import Resources

STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC


def submit(gpu, encoder) -> None:
    gpu.device.queue.submit([encoder.finish()])


def counted_queue_writes(monkeypatch, gpu) -> list[str]:
    labels: list[str] = []
    queue = gpu.device.queue
    write = queue.write_buffer

    def counted(buffer, *args):
        labels.append(buffer.label)
        return write(buffer, *args)

    monkeypatch.setattr(queue, "write_buffer", counted)
    return labels


def test_writes_in_order_reach_their_buffers_in_one_queue_write(gpu, monkeypatch):
    """Ragged sizes, two writes over one range (the later wins), a view at an offset, a piece
    larger than the first upload buffer (it grows), and no write at all in a second step."""
    resources = Resources(gpu)
    a = resources.buffer("t", "a", 1024, STORAGE)
    b = resources.buffer("t", "b", 300_000, STORAGE)
    rng = np.random.default_rng(1)
    want_a, want_b = np.zeros(1024, np.uint8), np.zeros(300_000, np.uint8)
    writes = [(a, 0, 1024), (a, 8, 4), (a, 4, 12), (b, 256, 256_000), (a, 1016, 8), (b, 0, 4)]
    labels = counted_queue_writes(monkeypatch, gpu)
    encoder = gpu.device.create_command_encoder()
    with resources.staging(encoder):
        for view, offset, size in writes:
            data = rng.integers(0, 256, size, dtype=np.uint8)
            resources.write(view, data, offset)
            (want_a if view is a else want_b)[offset:offset + size] = data
    assert labels == ["emberfx:uploads"]
    submit(gpu, encoder)
    np.testing.assert_array_equal(read_array(gpu.device, a.buffer, np.uint8), want_a)
    np.testing.assert_array_equal(read_array(gpu.device, b.buffer, np.uint8), want_b)
    labels.clear()
    encoder = gpu.device.create_command_encoder()
    with resources.staging(encoder):
        pass
    assert labels == []
    resources.release_all()


def test_outside_staging_and_unaligned_pieces_are_written_at_once(gpu, monkeypatch):
    resources = Resources(gpu)
    a = resources.buffer("t", "a", 64, STORAGE)
    labels = counted_queue_writes(monkeypatch, gpu)
    resources.write(a, np.arange(4, dtype=np.uint32))
    assert labels == ["t/a"]
    encoder = gpu.device.create_command_encoder()
    with resources.staging(encoder):
        resources.write(a, np.array([7], np.uint32), offset=16)
        with pytest.raises(wgpu.GPUValidationError):   # the queue's own check, at the write
            resources.write(a, np.zeros(2, np.uint8), offset=2)
    submit(gpu, encoder)
    assert read_array(gpu.device, a.buffer, np.uint32)[:5].tolist() == [0, 1, 2, 3, 7]
    resources.release_all()


def test_a_failing_step_writes_its_pieces_directly(gpu):
    resources = Resources(gpu)
    a = resources.buffer("t", "a", 16, STORAGE)
    encoder = gpu.device.create_command_encoder()
    with pytest.raises(RuntimeError, match="a system failed"):
        with resources.staging(encoder):
            resources.write(a, np.array([5, 6], np.uint32))
            raise RuntimeError("a system failed")
    assert resources.uploads.pending is None
    assert read_array(gpu.device, a.buffer, np.uint32)[:2].tolist() == [5, 6]
    resources.release_all()


def test_released_buffers_lose_their_pieces_and_a_take_writes_all_at_once(gpu):
    """A buffer destroyed while the step stages (a rebuild) gets no copy, which would fail the
    submit; taking a resource out (a re-arrangement: its owner copies from it in a submission
    of its own, then destroys it) writes every pending piece first."""
    resources = Resources(gpu)
    kept = resources.buffer("kept", "a", 16, STORAGE)
    gone = resources.buffer("gone", "a", 16, STORAGE)
    taken = resources.buffer("taken", "a", 16, STORAGE)
    moved = resources.buffer("moved", "a", 32, STORAGE)
    later = resources.buffer("later", "a", 16, STORAGE)
    encoder = gpu.device.create_command_encoder()
    with resources.staging(encoder):
        resources.write(kept, np.array([1], np.uint32))
        resources.write(gone, np.array([2], np.uint32))
        resources.write(taken, np.array([3], np.uint32))
        resources.release("gone")
        buffer = resources.take(taken.name)
        assert buffer is taken.buffer and resources.uploads.pending == []
        own = gpu.device.create_command_encoder()   # the owner's copies, submitted at once
        own.copy_buffer_to_buffer(buffer, 0, moved.buffer, 0, 16)
        own.copy_buffer_to_buffer(kept.buffer, 0, moved.buffer, 16, 16)
        submit(gpu, own)
        buffer.destroy()
        resources.write(later, np.array([4], np.uint32))   # staged again
        assert len(resources.uploads.pending) == 1
    submit(gpu, encoder)   # no copy into a destroyed buffer: wgpu would refuse the submit
    assert read_array(gpu.device, kept.buffer, np.uint32)[0] == 1
    assert read_array(gpu.device, moved.buffer, np.uint32)[[0, 4]].tolist() == [3, 1]
    assert read_array(gpu.device, later.buffer, np.uint32)[0] == 4
    resources.release_all()
