"""The shared GPU key sort against numpy, at lengths around the tile and power-of-two sizes, with
the count taken from n or read on the GPU."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.blocks.sort import KeySort, stage_plan
from emberfx.core.bindings import PassBuilder
from emberfx.core.frame_graph import FrameGraph
from emberfx.core.readback import read_array
from emberfx.core.resources import Resources

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
    resources = Resources(gpu)
    n = keys.size
    key_buffer = resources.buffer("test", "keys", keys.nbytes, USAGE)
    value_buffer = resources.buffer("test", "values", values.nbytes, USAGE)
    if n:
        resources.write(key_buffer, keys.tobytes())
        resources.write(value_buffer, values.tobytes())
    build = PassBuilder(gpu, resources)
    if count is None:
        sort = KeySort(build, "test", key_buffer, value_buffer, n)
    else:
        counters = resources.buffer("test", "counters", 16, USAGE)
        resources.write(counters, np.array([count], np.uint32).tobytes(), COUNT_OFFSET)
        sort = KeySort(build, "test", "test/keys", "test/values", n,
                       count=("test/counters", COUNT_OFFSET))
    graph = FrameGraph(sort.passes(), uploaded=resources.persistent())
    encoder = device.create_command_encoder()
    graph.encode(encoder, {})
    device.queue.submit([encoder.finish()])
    out_keys = read_array(device, key_buffer, np.uint32, n)
    out_values = read_array(device, value_buffer, np.uint32, n)
    assert graph.compute_pass_count() == (1 if n else 0)
    resources.release_all()
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
    resources = Resources(gpu)
    n = 2**16 + 1
    for key, size in (("keys", 4 * n), ("alive_list", 4 * n), ("counters", 16)):
        resources.buffer("smoke", key, size, wgpu.BufferUsage.STORAGE, family="emitter")
    sort = KeySort(PassBuilder(gpu, resources), "smoke:emitter", "smoke/keys", "smoke/alive_list",
                   n, count=("smoke/counters", 4))
    passes = sort.passes()
    names = [p.name for p in passes]
    assert len(names) == len(set(names)) == len(stage_plan(n))
    assert all(name.startswith("smoke:emitter:sort:") for name in names)
    assert names[0] == "smoke:emitter:sort:local" and names[-1] == "smoke:emitter:sort:merge131072"
    # keys and values are read_write, the params uniform and the count word read only
    for p in passes:
        step = p.name.removeprefix("smoke:emitter:sort:")
        assert set(p.reads) == {f"smoke/keys:sort_params:{step}", "smoke/keys",
                                "smoke/alive_list", "smoke/counters"}
        assert set(p.writes) == {"smoke/keys", "smoke/alive_list"}
    graph = FrameGraph(passes, uploaded=resources.persistent())
    assert graph.names() == names
    assert graph.compute_pass_count() == 1
    # the sort's uniforms belong to the keys' owner and family, released with them
    resources.release("smoke", "emitter")
    assert resources.names() == []


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
    resources = Resources(gpu)
    build = PassBuilder(gpu, resources)
    for key in ("k", "v", "c"):
        resources.buffer("t", key, 16, USAGE)
    with pytest.raises(ValueError, match="inside its buffer"):
        KeySort(build, "t", "t/k", "t/v", 4, count=("t/c", 2))
    with pytest.raises(ValueError, match="inside its buffer"):
        KeySort(build, "t", "t/k", "t/v", 4, count=("t/c", 16))
    with pytest.raises(ValueError, match="may not sit in the sorted 't/v'"):
        KeySort(build, "t", "t/k", "t/v", 4, count=("t/v", 0))
    with pytest.raises(ValueError, match="fewer than n"):
        KeySort(build, "t", "t/k", "t/v", 5, count=("t/c", 0))
    resources.release_all()


@pytest.mark.parametrize("n, counts", [(1024, [0, 1, 1024, 700]), (4096, [4096, 1025, 3, 2048, 0])])
def test_segments_sort_independently_with_their_own_counts(gpu, n, counts):
    """Several sorts of n positions in one set of dispatches (the emitter batches' alpha sort):
    each segment equals numpy's sort of its first count pairs, and nothing past its count moves."""
    rng = np.random.default_rng(n + len(counts))
    m = len(counts)
    keys = random_keys(rng, n * m)
    values = rng.integers(0, 2**32, size=n * m, dtype=np.uint64).astype(np.uint32)
    resources = Resources(gpu)
    key_buffer = resources.buffer("test", "keys", keys.nbytes, USAGE)
    value_buffer = resources.buffer("test", "values", values.nbytes, USAGE)
    resources.write(key_buffer, keys.tobytes())
    resources.write(value_buffer, values.tobytes())
    stride = 16   # bytes between the segments' count words, past a first word of something else
    words = np.zeros(1 + m * stride // 4, np.uint32)
    words[1::stride // 4] = counts
    count_buffer = resources.buffer("test", "counts", words.nbytes, USAGE)
    resources.write(count_buffer, words.tobytes())
    sort = KeySort(PassBuilder(gpu, resources), "test", key_buffer, value_buffer, n,
                   count=(count_buffer, 4), segments=m, count_stride=stride)
    graph = FrameGraph(sort.passes(), uploaded=resources.persistent())
    encoder = gpu.device.create_command_encoder()
    graph.encode(encoder, {})
    gpu.device.queue.submit([encoder.finish()])
    out_keys = read_array(gpu.device, key_buffer, np.uint32, n * m)
    out_values = read_array(gpu.device, value_buffer, np.uint32, n * m)
    resources.release_all()
    for s, count in enumerate(counts):
        part = slice(s * n, (s + 1) * n)
        check_sorted(keys[part], values[part], out_keys[part], out_values[part], count)


def test_segments_need_a_power_of_two_of_at_least_a_tile(gpu):
    resources = Resources(gpu)
    keys = resources.buffer("test", "keys", 4 * 3000, USAGE)
    values = resources.buffer("test", "values", 4 * 3000, USAGE)
    for n in (512, 1000):
        with pytest.raises(ValueError, match="power of two"):
            KeySort(PassBuilder(gpu, resources), "test", keys, values, n, segments=2)
    resources.release_all()
