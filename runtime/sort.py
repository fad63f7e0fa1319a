"""A reusable GPU sort of (key: u32, value: u32) pairs, ascending by key, as frame-graph passes.

    sort = KeySort(gpu, "smoke:emitter", keys, values, "smoke/sort_keys", "smoke/alive_list",
                   capacity, count=(counters, 4), count_resource="smoke/counters")
    passes += sort.passes(Phase.PREPARE)
    # afterwards keys[:count] is ascending and values[i] is still the value of keys[i]

A bitonic sorting network over the capacity rounded up to a power of two, in its "flip" form
(every compare-exchange puts the smaller key at the lower index), so positions >= count behave as
+infinity that never moves: comparisons that reach them are skipped and they are never touched.
That is why ``count`` can be read on the GPU while the passes (and their sizes) stay static.
Stages whose compare distance fits in a tile of 1024 pairs run in workgroup memory
(shaders/common/sort_local.wgsl): one dispatch sorts every tile, and after the global stages of
each larger block size (shaders/common/sort_global.wgsl, one dispatch per distance >= 1024) one
more dispatch finishes that block size's small distances. Not stable. Every pass is one dispatch
inside the frame's compute pass.
"""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.frame_graph import Dispatch, Pass, Phase
from emberfx.gpu import GpuContext
from emberfx.layout import struct_dtype

TILE = 1024          # pairs per workgroup in sort_local.wgsl
GROUP = 256          # invocations per workgroup (sort_global.wgsl: one compare-exchange each)
PARAMS = struct_dtype("common/sort_global.wgsl", "SortParams")


def stage_plan(n: int) -> list[tuple[str, int, int, int]]:
    """The dispatches for capacity ``n``, in order: (step, k, j, k_last); j == 0 marks a
    workgroup-memory dispatch covering block sizes k..k_last, else a global stage (k, j)."""
    if n == 0:
        return []
    padded = 1 << (n - 1).bit_length()          # the network sorts a power of two
    plan = [("local", 2, 0, min(TILE, padded))]
    k = 2 * TILE
    while k <= padded:
        j = k // 2
        while j >= TILE:
            plan.append((f"k{k}:j{j}", k, j, 0))
            j //= 2
        plan.append((f"merge{k}", k, 0, k))
        k *= 2
    return plan


def _pairs_below(n: int, j: int) -> int:
    """Compare-exchanges of a distance-j stage whose lower index is < n (the rest do nothing)."""
    blocks, rest = divmod(n, 2 * j)
    return blocks * j + min(rest, j)


class KeySort:
    def __init__(self, gpu: GpuContext, name: str, keys, values, resource_keys: str,
                 resource_values: str, n: int, count: tuple[object, int] | None = None,
                 count_resource: str | None = None):
        """Sort the first ``count`` (default: all n) (keys[i], values[i]) pairs ascending by key,
        in place. ``count`` is (buffer, byte offset) of a u32 read on the GPU (clamped to n); its
        buffer must be neither ``keys`` nor ``values``. ``name`` prefixes the passes
        (``<name>:sort:local`` ...) and the resources this sort owns."""
        if (count is None) != (count_resource is None):
            raise ValueError("count and count_resource go together")
        self.gpu, self.name, self.n = gpu, name, n
        self.keys, self.values = keys, values
        self.resource_keys, self.resource_values = resource_keys, resource_values
        self.owned: list = []
        if count is None:
            # Our own count word holding n, so the shaders have one code path.
            buffer = gpu.buffer(f"{name}/sort_count", 4,
                                wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST)
            gpu.device.queue.write_buffer(buffer, 0, np.array([n], np.uint32).tobytes())
            self.owned.append(buffer)
            count, count_resource = (buffer, 0), f"{name}/sort_count"
            self._uploaded = {count_resource}
        else:
            self._uploaded = set()
        self.count_buffer, offset = count
        if offset % 4:
            raise ValueError(f"count offset {offset} is not a multiple of 4")
        self.count_resource = count_resource
        self.plan = stage_plan(n)
        self.params = []
        for step, k, j, k_last in self.plan:
            buffer = gpu.buffer(f"{name}/sort_params:{step}", PARAMS.itemsize,
                                wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
            record = np.zeros((), PARAMS)
            record["n"], record["count_word"] = n, offset // 4
            record["k"], record["j"], record["k_last"] = k, j, k_last
            gpu.device.queue.write_buffer(buffer, 0, record.tobytes())
            self.params.append(buffer)
            self.owned.append(buffer)

    @property
    def dispatch_count(self) -> int:
        return len(self.plan)

    def passes(self, phase: Phase = Phase.SIMULATE) -> list[Pass]:
        local = self.gpu.compute_pipeline("common/sort_local.wgsl")
        stage = self.gpu.compute_pipeline("common/sort_global.wgsl")
        tiles = -(-self.n // TILE)
        out = []
        for (step, k, j, k_last), params in zip(self.plan, self.params):
            pipeline = local if j == 0 else stage
            groups = tiles if j == 0 else -(-_pairs_below(self.n, j) // GROUP)
            label = f"{self.name}:sort:{step}"
            group = self.gpu.bind_group(label, pipeline, 0,
                                        [params, self.keys, self.values, self.count_buffer])
            out.append(Pass(label, phase, Dispatch(pipeline, (group,), self.gpu.grid(groups)),
                            reads=(self.resource_keys, self.resource_values, self.count_resource),
                            writes=(self.resource_keys, self.resource_values)))
        return out

    def uploaded(self) -> set[str]:
        """The count word this sort owns (when no count was given) is written at construction."""
        return set(self._uploaded)

    def destroy(self) -> None:
        for buffer in self.owned:
            buffer.destroy()
        self.owned = []
