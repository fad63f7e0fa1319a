"""The shared GPU prefix scan against numpy's exclusive cumsum, at lengths around the tile size."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.frame_graph import FrameGraph
from emberfx.readback import read_array
from emberfx.scan import PrefixScan

LENGTHS = [0, 1, 63, 64, 65, 1000, 1023, 1024, 1025, 4096 + 3, 2**20 + 7]


def run_scan(gpu, values: np.ndarray) -> tuple[np.ndarray, int]:
    device = gpu.device
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    buffer = device.create_buffer(size=max(16, values.nbytes), usage=usage)
    if values.size:
        device.queue.write_buffer(buffer, 0, values.tobytes())
    scan = PrefixScan(gpu, "test", buffer, "test/values", values.size)
    passes = scan.passes()
    graph = FrameGraph(passes, uploaded={"test/values"} | scan.uploaded())
    encoder = device.create_command_encoder()
    graph.encode(encoder, {})
    device.queue.submit([encoder.finish()])
    result = read_array(device, buffer, np.uint32, values.size)
    total = int(read_array(device, scan.total[0], np.uint32, 1)[0])
    assert graph.compute_pass_count() == (1 if values.size else 0)
    return result, total


@pytest.mark.parametrize("n", LENGTHS)
def test_scan_equals_numpy_exclusive_cumsum(gpu, n):
    rng = np.random.default_rng(n)
    values = rng.integers(0, 1000, size=n, dtype=np.uint32)
    result, total = run_scan(gpu, values)
    expected = np.concatenate([[0], np.cumsum(values, dtype=np.uint64)[:-1]]) if n else np.zeros(0)
    np.testing.assert_array_equal(result, expected.astype(np.uint32))
    assert total == int(values.sum(dtype=np.uint64))


def test_scan_wraps_like_u32(gpu):
    values = np.full(3000, 2**31 + 5, dtype=np.uint32)
    result, total = run_scan(gpu, values)
    expected = (np.arange(3000, dtype=np.uint64) * (2**31 + 5)) % 2**32
    np.testing.assert_array_equal(result, expected.astype(np.uint32))
    assert total == (3000 * (2**31 + 5)) % 2**32


def test_three_levels_name_their_passes(gpu):
    device = gpu.device
    buffer = device.create_buffer(size=4 * (1024 * 1024 + 1), usage=wgpu.BufferUsage.STORAGE)
    scan = PrefixScan(gpu, "big", buffer, "big/values", 1024 * 1024 + 1)
    assert [p.name for p in scan.passes()] == [
        "big:scan:tiles0", "big:scan:tiles1", "big:scan:tiles2", "big:scan:add1", "big:scan:add0"]
