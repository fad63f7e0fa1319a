"""A reusable GPU sort of (key: u32, value: u32) pairs, ascending by key, as frame-graph passes.

    sort = KeySort(gpu, "smoke:emitter", keys, values, "smoke/sort_keys", "smoke/alive_list",
                   capacity, count=(counters, 4), count_resource="smoke/counters")
    passes += sort.passes(Phase.PREPARE)
    # afterwards keys[:count] is ascending and values[i] is still the value of keys[i]

A bitonic sorting network over the capacity rounded up to a power of two, ordering pairs by
(key, value): not stable, but deterministic (equal keys come out in value order, so equal depths
cannot flicker). Positions >= count act as padding (0xFFFFFFFF, 0xFFFFFFFF) that is held in
registers where a stage needs it but is never read or written: the first count pairs come out
sorted and the rest of the buffers are left exactly as they were. That is why ``count`` can be read
on the GPU while the passes (and their sizes) stay static.

  * ``local`` (shaders/common/sort_local.wgsl) sorts every tile of 1024 positions ascending;
  * then for each block size k = 2048, 4096, ... up to the padded capacity: the stages with compare
    distance >= 1024 run in ``k<k>:j<j>`` dispatches (shaders/common/sort_global.wgsl), up to four
    stages each (an invocation holds the 16 positions those stages connect), and ``merge<k>``
    (sort_local.wgsl again) runs the distances 512 ... 1 inside each tile.

Barriers and memory round trips are what cost on software Vulkan, so an invocation of
sort_local.wgsl holds 16 pairs in registers and goes through workgroup memory (one barrier) only
when the next distance leaves them, and sort_global.wgsl reads and writes memory once per up to
four stages. Every pass is one dispatch inside the frame's compute pass.
"""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx import wgsl
from emberfx.frame_graph import Dispatch, Pass, Phase
from emberfx.gpu import GpuContext
from emberfx.layout import struct_dtype

TILE = wgsl.int_constant("common/sort_local.wgsl", "TILE")     # positions per workgroup
GROUP = wgsl.workgroup_size("common/sort_global.wgsl")[0]  # invocations per workgroup
MAX_STAGES = 4       # global stages per dispatch (each invocation holds 2^stages pairs)
PARAMS = struct_dtype("common/sort_global.wgsl", "SortParams")


def stage_plan(n: int) -> list[tuple[str, int, int, int, int]]:
    """The dispatches for capacity ``n``, in order: (step, k, j, k_last, stages). j == 0 marks an
    in-tile dispatch covering block sizes k..k_last, else ``stages`` global stages of block size k
    with distances j, j/2, ..."""
    if n == 0:
        return []
    padded = 1 << (n - 1).bit_length()          # the network sorts a power of two
    plan = [("local", 2, 0, min(TILE, padded), 0)]
    k = 2 * TILE
    while k <= padded:
        j = k // 2
        while j >= TILE:
            stages = min(MAX_STAGES, (j // TILE).bit_length())
            plan.append((f"k{k}:j{j}", k, j, 0, stages))
            j >>= stages
        plan.append((f"merge{k}", k, 0, k, 0))
        k *= 2
    return plan


def _global_invocations(n: int, j: int, stages: int) -> int:
    """Invocations of a global dispatch whose smallest position is < n (the rest do nothing):
    invocation i starts at i with ``stages`` zero bits inserted at the smallest distance's bit."""
    low = j.bit_length() - stages          # log2 of the smallest distance
    blocks, rest = divmod(n, 1 << (low + stages))
    return blocks * (1 << low) + min(rest, 1 << low)


class KeySort:
    def __init__(self, gpu: GpuContext, name: str, keys, values, resource_keys: str,
                 resource_values: str, n: int, count: tuple[wgpu.GPUBuffer, int] | None = None,
                 count_resource: str | None = None):
        """Sort the first ``count`` (default: all n) (keys[i], values[i]) pairs ascending by key,
        in place. ``count`` is (buffer, byte offset) of a u32 read on the GPU when the passes run
        (clamped to n); that buffer needs STORAGE usage and must be neither ``keys`` nor
        ``values`` (it is bound read-only next to them). ``name`` prefixes the passes
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
        if offset % 4 or offset + 4 > self.count_buffer.size:
            raise ValueError(f"count offset {offset} is not a u32 inside its buffer")
        for buffer, what in ((keys, "keys"), (values, "values")):
            if buffer.size < 4 * n:
                raise ValueError(f"{what} buffer holds {buffer.size} bytes, fewer than n = {n} u32")
        assert count_resource is not None   # checked above: given together with count
        self.count_resource = count_resource
        self.plan = stage_plan(n)
        self.params = []
        for step, k, j, k_last, _ in self.plan:
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
        tiles = -(-self.n // TILE)
        out = []
        for (step, _k, j, _k_last, stages), params in zip(self.plan, self.params):
            if j == 0:
                pipeline = self.gpu.compute_pipeline("common/sort_local.wgsl")
                groups = tiles
            else:
                pipeline = self.gpu.compute_pipeline("common/sort_global.wgsl",
                                                     {"STAGES": stages})
                groups = -(-_global_invocations(self.n, j, stages) // GROUP)
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
