"""The shared GPU key sort against numpy, at lengths around the tile and power-of-two sizes, with
the count taken from n or read on the GPU."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.frame_graph import FrameGraph
from emberfx.readback import read_array
from emberfx.sort import KeySort, stage_plan

LENGTHS = [0, 1, 2, 3, 255, 256, 257, 1000, 1024, 1025, 2048, 4097, 100_003]
USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
COUNT_OFFSET = 8   # the count word sits inside a bigger buffer, like the emitter's counters


def random_keys(rng, n: int) -> np.ndarray:
    """Full-range u32 keys with both extremes and many duplicates."""
    keys = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    if n:
        few = rng.integers(0, 4, size=n)
        keys = np.where(few == 0, rng.integers(0, 16, size=n).astype(np.uint32), keys)
        keys = np.where(few == 1, np.uint32(0xFFFFFFFF), keys)
        keys[rng.integers(0, n, size=max(1, n // 50))] = 0
    return keys


def run_sort(gpu, keys: np.ndarray, values: np.ndarray, count: int | None = None):
    """Sort on the GPU; count None sorts all n, else the count is read from a GPU buffer."""
    device = gpu.device
    n = keys.size
    key_buffer = device.create_buffer(size=max(16, keys.nbytes), usage=USAGE)
    value_buffer = device.create_buffer(size=max(16, values.nbytes), usage=USAGE)
    if n:
        device.queue.write_buffer(key_buffer, 0, keys.tobytes())
        device.queue.write_buffer(value_buffer, 0, values.tobytes())
    uploaded = {"test/keys", "test/values"}
    if count is None:
        sort = KeySort(gpu, "test", key_buffer, value_buffer, "test/keys", "test/values", n)
    else:
        counters = device.create_buffer(size=16, usage=USAGE)
        device.queue.write_buffer(counters, COUNT_OFFSET, np.array([count], np.uint32).tobytes())
        sort = KeySort(gpu, "test", key_buffer, value_buffer, "test/keys", "test/values", n,
                       count=(counters, COUNT_OFFSET), count_resource="test/counters")
        uploaded.add("test/counters")
    graph = FrameGraph(sort.passes(), uploaded=uploaded | sort.uploaded())
    encoder = device.create_command_encoder()
    graph.encode(encoder, {})
    device.queue.submit([encoder.finish()])
    out_keys = read_array(device, key_buffer, np.uint32, n)
    out_values = read_array(device, value_buffer, np.uint32, n)
    assert graph.compute_pass_count() == (1 if n else 0)
    sort.destroy()
    return out_keys, out_values


def check_sorted(keys, values, out_keys, out_values, count: int) -> None:
    np.testing.assert_array_equal(out_keys[:count], np.sort(keys[:count]))
    # values travel with their keys: the (key, value) pairs are the same multiset ...
    expected = np.lexsort((values[:count], keys[:count]))
    got = np.lexsort((out_values[:count], out_keys[:count]))
    np.testing.assert_array_equal(out_keys[:count][got], keys[:count][expected])
    np.testing.assert_array_equal(out_values[:count][got], values[:count][expected])
    # ... and, as this sort orders by (key, value), already in that order
    np.testing.assert_array_equal(out_values[:count], values[:count][expected])
    # positions past count are not touched, so nothing leaks in or out
    np.testing.assert_array_equal(out_keys[count:], keys[count:])
    np.testing.assert_array_equal(out_values[count:], values[count:])


@pytest.mark.parametrize("n", LENGTHS)
def test_sort_equals_numpy(gpu, n):
    rng = np.random.default_rng(n)
    keys = random_keys(rng, n)
    values = rng.permutation(n).astype(np.uint32)
    out_keys, out_values = run_sort(gpu, keys, values)
    check_sorted(keys, values, out_keys, out_values, n)


@pytest.mark.parametrize("n", [n for n in LENGTHS if n])
def test_sort_only_the_first_count_read_on_the_gpu(gpu, n):
    rng = np.random.default_rng(n + 1)
    keys = random_keys(rng, n)
    values = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)  # duplicates too
    count = n // 2 + 1
    out_keys, out_values = run_sort(gpu, keys, values, count)
    check_sorted(keys, values, out_keys, out_values, count)


@pytest.mark.parametrize("count", [0, 1, 1024, 1025, 3000])
def test_count_edges_and_count_above_n_is_clamped(gpu, count):
    n = 3000
    rng = np.random.default_rng(count)
    keys = random_keys(rng, n)
    values = np.arange(n, dtype=np.uint32)
    out_keys, out_values = run_sort(gpu, keys, values, count)
    check_sorted(keys, values, out_keys, out_values, count)
    out_keys, out_values = run_sort(gpu, keys, values, n + 5)   # more than n: sorts all n
    check_sorted(keys, values, out_keys, out_values, n)


def test_padding_lookalikes_keep_their_values(gpu):
    """Real pairs equal to the padding key (0xFFFFFFFF) stay inside count with their values."""
    n = 5000
    keys = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    keys[::7] = 3
    values = np.arange(n, dtype=np.uint32)[::-1].copy()
    for count in (n, 2049):
        out_keys, out_values = run_sort(gpu, keys, values, count)
        check_sorted(keys, values, out_keys, out_values, count)


@pytest.mark.parametrize("count", [None, (2**20 + 7) // 2 + 1])
def test_large_sort(gpu, count):
    n = 2**20 + 7
    rng = np.random.default_rng(7)
    keys = random_keys(rng, n)
    values = np.arange(n, dtype=np.uint32)
    out_keys, out_values = run_sort(gpu, keys, values, count)
    check_sorted(keys, values, out_keys, out_values, n if count is None else count)


def test_folded_grids_index_the_same_pairs(gpu, monkeypatch):
    """Past the per-dimension workgroup limit the dispatches fold into (x, y); the shaders must
    recover the same tiles and invocations (a small limit stands in for a huge n)."""
    monkeypatch.setitem(gpu.limits, "max-compute-workgroups-per-dimension", 13)
    n = 20_001   # 20 tiles: (10, 2, 1); 160 global workgroups: (13, 13, 1), 9 of them idle
    rng = np.random.default_rng(3)
    keys = random_keys(rng, n)
    values = np.arange(n, dtype=np.uint32)
    for count in (None, 15_000):
        out_keys, out_values = run_sort(gpu, keys, values, count)
        check_sorted(keys, values, out_keys, out_values, n if count is None else count)


def test_passes_are_named_unique_and_share_one_compute_pass(gpu):
    device = gpu.device
    n = 2**16 + 1
    keys = device.create_buffer(size=4 * n, usage=wgpu.BufferUsage.STORAGE)
    values = device.create_buffer(size=4 * n, usage=wgpu.BufferUsage.STORAGE)
    counters = device.create_buffer(size=16, usage=wgpu.BufferUsage.STORAGE)
    sort = KeySort(gpu, "smoke:emitter", keys, values, "smoke/keys", "smoke/alive_list", n,
                   count=(counters, 4), count_resource="smoke/counters")
    passes = sort.passes()
    names = [p.name for p in passes]
    assert len(names) == len(set(names)) == len(stage_plan(n))
    assert all(name.startswith("smoke:emitter:sort:") for name in names)
    assert names[0] == "smoke:emitter:sort:local" and names[-1] == "smoke:emitter:sort:merge131072"
    graph = FrameGraph(passes, uploaded={"smoke/keys", "smoke/alive_list", "smoke/counters"})
    assert graph.names() == names
    assert graph.compute_pass_count() == 1
    sort.destroy()


def test_stage_plan_counts():
    """One in-tile sort, then per block size above a tile: ceil(global stages / 4) + one merge."""
    assert stage_plan(0) == []
    assert [s[0] for s in stage_plan(1024)] == ["local"]
    assert [s[0] for s in stage_plan(1025)] == ["local", "k2048:j1024", "merge2048"]
    assert len(stage_plan(2**16)) == 15
    assert len(stage_plan(2**20)) == 29
    for n in (2**20, 2**22):
        covered = [(k, j >> s) for _, k, j, _, stages in stage_plan(n) if j
                   for s in range(stages)]
        top = n.bit_length() - 1
        assert covered == [(1 << m, 1 << d) for m in range(11, top + 1)
                           for d in range(m - 1, 9, -1)]


def test_bad_arguments(gpu):
    device = gpu.device
    small = device.create_buffer(size=16, usage=wgpu.BufferUsage.STORAGE)
    with pytest.raises(ValueError, match="go together"):
        KeySort(gpu, "t", small, small, "t/k", "t/v", 4, count=(small, 0))
    with pytest.raises(ValueError, match="inside its buffer"):
        KeySort(gpu, "t", small, small, "t/k", "t/v", 4, count=(small, 2), count_resource="t/c")
    with pytest.raises(ValueError, match="fewer than n"):
        KeySort(gpu, "t", small, small, "t/k", "t/v", 5)
