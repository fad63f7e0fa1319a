"""A reusable GPU sort of (key: u32, value: u32) pairs, ascending by key, as frame-graph passes.

    sort = KeySort(self.build, "smoke:emitter", "smoke/sort_keys", "smoke/alive_list", capacity,
                   count=(alive_total, 0))
    passes += sort.passes(Phase.RENDER)
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

The sort's own uniforms (and its count word when none is given) are registry resources of the
keys' owner and family, named after the keys (``smoke/sort_keys:sort_params:local`` ...), so
they go when the entity goes.
"""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.bindings import PassBuilder
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView

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
    def __init__(self, build: PassBuilder, name: str, keys: BufferView | str,
                 values: BufferView | str, n: int,
                 count: tuple[BufferView | str, int] | None = None, *, segments: int = 1,
                 count_stride: int = 0):
        """Sort the first ``count`` (default: all n) (keys[i], values[i]) pairs ascending by key,
        in place. ``count`` is (buffer resource, byte offset) of a u32 read on the GPU when the
        passes run (clamped to n); that resource needs STORAGE usage and must be neither
        ``keys`` nor ``values`` (it is bound read-only next to them). ``name`` prefixes the
        passes (``<name>:sort:local`` ...). ``segments`` > 1: the buffers hold that many
        independent sorts of n positions each (n a power of two >= TILE), segment s counting
        the u32 ``count_stride`` bytes after segment s - 1's, all in the same dispatches."""
        if segments > 1 and (n < TILE or n & (n - 1) or count_stride % 4):
            raise ValueError(f"segments of n = {n} positions: expected a power of two >= {TILE} "
                             f"and a count stride of whole u32, found {count_stride} bytes")
        resources = build.resources
        keys, values = (resources.buffer_view(v) if isinstance(v, str) else v
                        for v in (keys, values))
        self.build, self.name, self.n = build, name, n
        self.keys, self.values = keys, values
        owner, key = keys.name.split("/", 1)

        def buffer(suffix: str, size: int, usage: int) -> BufferView:
            return resources.buffer(owner, f"{key}:{suffix}", size,
                                    usage | wgpu.BufferUsage.COPY_DST, family=keys.family)

        if count is None:
            # Our own count word holding n, so the shaders have one code path.
            view = buffer("sort_count", 4, wgpu.BufferUsage.STORAGE)
            resources.write(view, np.array([n], np.uint32).tobytes())
            count = (view, 0)
        counted, offset = count
        self.count = resources.buffer_view(counted) if isinstance(counted, str) else counted
        if offset % 4 or offset + 4 > self.count.size:
            raise ValueError(f"count offset {offset} is not a u32 inside its buffer")
        if self.count.name in (keys.name, values.name):
            raise ValueError(f"the count word may not sit in the sorted '{self.count.name}'")
        self.segments = segments
        for view, what in ((keys, "keys"), (values, "values")):
            if view.size < 4 * n * segments:
                times = f" x {segments} segments" if segments > 1 else ""
                raise ValueError(f"{what} buffer holds {view.size} bytes, fewer than n = {n} "
                                 f"u32{times}")
        self.plan = stage_plan(n)
        self.params = []
        for step, k, j, k_last, _ in self.plan:
            view = buffer(f"sort_params:{step}", PARAMS.itemsize, wgpu.BufferUsage.UNIFORM)
            record = np.zeros((), PARAMS)
            record["n"], record["count_word"] = n, offset // 4
            record["k"], record["j"], record["k_last"] = k, j, k_last
            record["count_stride"] = count_stride // 4
            resources.write(view, record.tobytes())
            self.params.append(view)

    @property
    def dispatch_count(self) -> int:
        return len(self.plan)

    def passes(self, phase: Phase = Phase.SIMULATE) -> list[Pass]:
        tiles = -(-self.n // TILE)
        grid = self.build.gpu.grid
        out = []
        for (step, _k, j, _k_last, stages), params in zip(self.plan, self.params):
            if j == 0:
                shader, constants, groups = "common/sort_local.wgsl", {}, tiles * self.segments
            else:
                shader, constants = "common/sort_global.wgsl", {"STAGES": stages}
                groups = -(-self.segments * _global_invocations(self.n, j, stages) // GROUP)
            out.append(self.build.compute(
                f"{self.name}:sort:{step}", phase, shader, grid(groups),
                {"params": params, "keys": self.keys, "values": self.values,
                 "counts": self.count}, constants=constants,
                does=("bitonic sort steps within each tile of keys and values (workgroup memory)"
                      if j == 0 else f"bitonic compare-exchange across tiles (k={_k}, j={j})")))
        return out
