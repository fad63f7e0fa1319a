"""A reusable GPU exclusive prefix sum (scan) of u32 values of any length, as frame-graph passes.

    scan = PrefixScan(gpu, "fountain:emitter:alive", counts_buffer, "fountain/block_alive", n)
    passes += scan.passes(Phase.SIMULATE)
    # afterwards counts_buffer[i] = sum(counts[:i]); scan.total = (buffer, byte offset) of the sum

Level 0 scans tiles of 1024 values in place (shaders/common/scan_tiles.wgsl) and writes one sum
per tile; if there is more than one tile, those sums are scanned the same way (level 1, and so
on, until one tile remains), then each level's tile offsets are added back from the top down
(shaders/common/scan_add.wgsl). Every pass is one dispatch inside the frame's compute pass.
"""

from __future__ import annotations

import math

import numpy as np
import wgpu

from emberfx import wgsl
from emberfx.frame_graph import Dispatch, Pass, Phase
from emberfx.gpu import GpuContext
from emberfx.layout import struct_dtype

TILE = wgsl.int_constant("common/scan_tiles.wgsl", "TILE")   # values per workgroup
PARAMS = struct_dtype("common/scan_tiles.wgsl", "ScanParams")


class PrefixScan:
    def __init__(self, gpu: GpuContext, name: str, values, resource: str, n: int):
        """Scan ``n`` u32 values of ``values`` (frame-graph resource ``resource``) in place;
        ``name`` prefixes the passes (``<name>:scan:tiles0`` ...) and resources."""
        self.gpu, self.name, self.n = gpu, name, n
        self.resource = resource
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        # levels[k] = (values buffer, resource name, count); level k's tile sums are level k+1
        self.levels = [(values, resource, n)]
        self.sums: list[tuple[wgpu.GPUBuffer, str, int]] = []
        count = n
        while True:
            tiles = max(1, math.ceil(count / TILE))
            level = len(self.sums)
            sums = gpu.buffer(f"{name}/scan_sums{level}", tiles * 4, usage)
            self.sums.append((sums, f"{name}/scan_sums{level}", tiles))
            if tiles == 1:
                break
            self.levels.append((sums, f"{name}/scan_sums{level}", tiles))
            count = tiles
        self.params = []
        for level, (_, _, count) in enumerate(self.levels):
            buffer = gpu.buffer(f"{name}/scan_params{level}", PARAMS.itemsize,
                                wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
            record = np.zeros((), PARAMS)
            record["n"] = count
            gpu.device.queue.write_buffer(buffer, 0, record.tobytes())
            self.params.append(buffer)

    @property
    def total(self) -> tuple[object, int]:
        """Where the sum of all n values lands: (buffer, byte offset)."""
        return (self.sums[-1][0], 0)

    @property
    def total_resource(self) -> str:
        return self.sums[-1][1]

    def passes(self, phase: Phase = Phase.SIMULATE) -> list[Pass]:
        if self.n == 0:
            return []   # nothing to scan; the total buffer starts (and stays) zero
        tiles_pipeline = self.gpu.compute_pipeline("common/scan_tiles.wgsl")
        add_pipeline = self.gpu.compute_pipeline("common/scan_add.wgsl")
        out = []
        for level, (values, resource, _count) in enumerate(self.levels):
            sums, sums_resource, tiles = self.sums[level]
            group = self.gpu.bind_group(f"{self.name}:scan:tiles{level}", tiles_pipeline, 0,
                                        [self.params[level], values, sums])
            out.append(Pass(f"{self.name}:scan:tiles{level}", phase,
                            Dispatch(tiles_pipeline, (group,), self.gpu.grid(tiles)),
                            reads=(resource,), writes=(resource, sums_resource)))
        for level in reversed(range(len(self.levels) - 1)):
            values, resource, count = self.levels[level]
            sums, sums_resource, tiles = self.sums[level]
            group = self.gpu.bind_group(f"{self.name}:scan:add{level}", add_pipeline, 0,
                                        [self.params[level], values, sums])
            out.append(Pass(f"{self.name}:scan:add{level}", phase,
                            Dispatch(add_pipeline, (group,), self.gpu.grid(tiles)),
                            reads=(resource, sums_resource), writes=(resource,)))
        return out

    def uploaded(self) -> set[str]:
        """The total reads as 0 before any pass when n == 0."""
        return {self.total_resource} if self.n == 0 else set()

    def destroy(self) -> None:
        for buffer, _, _ in self.sums:
            buffer.destroy()
        for buffer in self.params:
            buffer.destroy()
