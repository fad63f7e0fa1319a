"""The shared GPU prefix scan against numpy's exclusive cumsum, at lengths around the tile size."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.core.bindings import PassBuilder
from emberfx.core.frame_graph import FrameGraph
from emberfx.core.readback import read_array
from emberfx.core.resources import Resources

LENGTHS = [0, 1, 63, 64, 65, 1000, 1023, 1024, 1025, 4096 + 3, 2**20 + 7]


def run_scan(gpu, values: np.ndarray) -> tuple[np.ndarray, int]:
    device = gpu.device
    resources = Resources(gpu)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    buffer = resources.buffer("test", "values", values.nbytes, usage)
    if values.size:
        resources.write(buffer, values.tobytes())
    scan = PrefixScan(PassBuilder(gpu, resources), "test", "test/values", values.size)
    graph = FrameGraph(scan.passes(), uploaded=resources.persistent())
    encoder = device.create_command_encoder()
    graph.encode(encoder, {})
    device.queue.submit([encoder.finish()])
    result = read_array(device, buffer, np.uint32, values.size)
    total = int(read_array(device, scan.total, np.uint32, 1)[0])
    assert graph.compute_pass_count() == (1 if values.size else 0)
    resources.release_all()
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


def test_three_levels_name_their_passes_and_resources(gpu):
    resources = Resources(gpu)
    n = 1024 * 1024 + 1
    resources.buffer("big", "values", 4 * n, wgpu.BufferUsage.STORAGE, family="test")
    scan = PrefixScan(PassBuilder(gpu, resources), "big:test", "big/values", n)
    passes = scan.passes()
    assert [p.name for p in passes] == [
        "big:test:scan:tiles0", "big:test:scan:tiles1", "big:test:scan:tiles2",
        "big:test:scan:add1", "big:test:scan:add0"]
    sums = [f"big/values:scan_sums{k}" for k in range(3)]
    assert scan.total.name == sums[2]
    # reads and writes follow the WGSL access modes: values and tile sums are read_write,
    # the params uniform and the next level's tile offsets are read only
    by_name = {p.name: p for p in passes}
    tiles1, add0 = by_name["big:test:scan:tiles1"], by_name["big:test:scan:add0"]
    assert set(tiles1.reads) == {"big/values:scan_params1", sums[0], sums[1]}
    assert set(tiles1.writes) == {sums[0], sums[1]}
    assert set(add0.reads) == {"big/values:scan_params0", "big/values", sums[0]}
    assert add0.writes == ("big/values",)
    # the scan's buffers belong to the values' owner and family: releasing them frees all
    assert len(resources.names("big")) == 1 + 3 + 3
    resources.release("big", "test")
    assert resources.names() == []
