"""A reusable GPU exclusive prefix sum (scan) of u32 values of any length, as frame-graph passes.

    scan = PrefixScan(self.build, "fountain:emitter:alive", "fountain/block_alive", n)
    passes += scan.passes(Phase.SIMULATE)
    # afterwards block_alive[i] = sum(counts[:i]); scan.total is the view whose word 0 is the sum

Level 0 scans tiles of 1024 values in place (shaders/common/scan_tiles.wgsl) and writes one sum
per tile; if there is more than one tile, those sums are scanned the same way (level 1, and so
on, until one tile remains), then each level's tile offsets are added back from the top down
(shaders/common/scan_add.wgsl). Every pass is one dispatch inside the frame's compute pass.

The scan's own buffers are registry resources of the values' owner and family, named after the
values (``fountain/block_alive:scan_sums0``, ``...:scan_params0``), so they go when the entity
goes; nothing here destroys anything.
"""

from __future__ import annotations

import math

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.bindings import PassBuilder
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView

TILE = wgsl.int_constant("common/scan_tiles.wgsl", "TILE")   # values per workgroup
PARAMS = struct_dtype("common/scan_tiles.wgsl", "ScanParams")
STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST


class PrefixScan:
    def __init__(self, build: PassBuilder, name: str, values: BufferView | str, n: int):
        """Scan the first ``n`` u32 values of the buffer resource ``values`` in place; ``name``
        prefixes the passes (``<name>:scan:tiles0`` ...)."""
        resources = build.resources
        values = resources.buffer_view(values) if isinstance(values, str) else values
        self.build, self.name, self.n = build, name, n
        owner, key = values.name.split("/", 1)

        def buffer(suffix: str, size: int, usage: int) -> BufferView:
            return resources.buffer(owner, f"{key}:{suffix}", size, usage, family=values.family)

        # levels[k] = (values, count); level k's tile sums are the values of level k + 1
        self.levels: list[tuple[BufferView, int]] = [(values, n)]
        self.sums: list[BufferView] = []
        count = n
        while True:
            tiles = _tiles(count)
            self.sums.append(buffer(f"scan_sums{len(self.sums)}", tiles * 4, STORAGE))
            if tiles == 1:
                break
            self.levels.append((self.sums[-1], tiles))
            count = tiles
        self.params = []
        for level, (_, count) in enumerate(self.levels):
            view = buffer(f"scan_params{level}", PARAMS.itemsize,
                          wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
            record = np.zeros((), PARAMS)
            record["n"] = count
            resources.write(view, record.tobytes())
            self.params.append(view)

    @property
    def total(self) -> BufferView:
        """The view whose word 0 receives the sum of all n values (zero while n == 0)."""
        return self.sums[-1]

    def passes(self, phase: Phase = Phase.SIMULATE) -> list[Pass]:
        if self.n == 0:
            return []   # nothing to scan; the total starts (and stays) zero
        grid, compute = self.build.gpu.grid, self.build.compute
        out = []
        for level, (values, count) in enumerate(self.levels):
            out.append(compute(f"{self.name}:scan:tiles{level}", phase, "common/scan_tiles.wgsl",
                               grid(_tiles(count)),
                               {"params": self.params[level], "values": values,
                                "tile_sums": self.sums[level]},
                               does=f"prefix sum within tiles of {values.name}, each tile's "
                                    f"total to {self.sums[level].name}"))
        for level in reversed(range(len(self.levels) - 1)):
            values, count = self.levels[level]
            out.append(compute(f"{self.name}:scan:add{level}", phase, "common/scan_add.wgsl",
                               grid(_tiles(count)),
                               {"params": self.params[level], "values": values,
                                "tile_offsets": self.sums[level]},
                               does=f"adds each tile's scanned offset to {values.name}"))
        return out


def _tiles(count: int) -> int:
    return max(1, math.ceil(count / TILE))
