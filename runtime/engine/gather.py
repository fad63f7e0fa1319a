"""The READBACK phase's passes: every readback region copied to its place in the gather buffer
by frame/gather.wgsl, one dispatch for up to MAX_REGIONS regions held in up to as many buffers
as the shader declares ``source<n>`` bindings (one pass in every bundled scene of two regions or
more). A layout of one region has none: the ring slot copies it (telemetry.py).

A region's buffer is bound from the largest offset below the region that the device allows
(min-storage-buffer-offset-alignment); regions of one buffer share a binding while the span
holding them fits the device's largest storage binding."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.bindings import bind
from emberfx.core.frame_graph import Dispatch, Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView

if TYPE_CHECKING:
    from emberfx.core.system import Readback

SHADER = "frame/gather.wgsl"
MAX_REGIONS = wgsl.int_constant(SHADER, "MAX_REGIONS")
SOURCES = [name for name in wgsl.bindings(SHADER) if name.startswith("source")]
REGION = struct_dtype(SHADER, "Region")
GATHER = "readback/gather"   # the gather buffer's name in the frame graph
WORD = 4


@dataclass
class _Source:
    """A window of one buffer that a pass binds as one ``source<n>``."""
    buffer: wgpu.GPUBuffer
    start: int
    end: int
    name: str   # the first region's resource (only labels the binding)


@dataclass
class _Chunk:
    """The regions of one pass and the sources they lie in."""
    sources: list[_Source] = field(default_factory=list)
    rows: list[tuple[int, Readback, int]] = field(default_factory=list)   # (source, region, at)

    def source_for(self, region: Readback, alignment: int, limit: int) -> int | None:
        """The index of a source that holds ``region`` (widened if need be), a new source's,
        or None when this pass has no binding left for it."""
        start = region.offset // alignment * alignment
        end = region.offset + region.size
        for index, source in enumerate(self.sources):
            if source.buffer is region.buffer and \
                    max(source.end, end) - min(source.start, start) <= limit:
                source.start, source.end = min(source.start, start), max(source.end, end)
                return index
        if len(self.sources) == len(SOURCES):
            return None
        self.sources.append(_Source(region.buffer, start, end, region.resource))
        return len(self.sources) - 1


def gather_passes(gpu, resources, layout, gather: wgpu.GPUBuffer) -> list[Pass]:
    """The passes that copy ``layout``'s regions ((Readback, gather offset) pairs) into
    ``gather``. Each reads the resources of its regions and writes GATHER."""
    alignment = gpu.limits["min-storage-buffer-offset-alignment"]
    limit = gpu.limits["max-storage-buffer-binding-size"] // alignment * alignment
    chunks = [_Chunk()]
    for region, at in layout:
        if region.size == 0:
            continue
        # whole words, as Readback promises (a copy would have refused anything else too)
        assert region.offset % WORD == 0 and region.size % WORD == 0, region.resource
        chunk = chunks[-1]
        source = chunk.source_for(region, alignment, limit) \
            if len(chunk.rows) < MAX_REGIONS else None
        if source is None:
            chunk = _Chunk()
            chunks.append(chunk)
            source = chunk.source_for(region, alignment, limit)
            assert source is not None   # an empty pass has every binding free
        chunk.rows.append((source, region, at))
    return [_pass(gpu, resources, gather, k, chunk) for k, chunk in enumerate(chunks) if chunk.rows]


def _pass(gpu, resources, gather: wgpu.GPUBuffer, k: int, chunk: _Chunk) -> Pass:
    name = "scene:frame:readback" + (str(k) if k else "")
    table = np.zeros(MAX_REGIONS, REGION)
    for row, (source, region, at) in enumerate(chunk.rows):
        table[row] = (source, (region.offset - chunk.sources[source].start) // WORD,
                      at // WORD, region.size // WORD)
    regions = gpu.device.create_buffer_with_data(label=f"{name}:regions", data=table.tobytes(),
                                                 usage=wgpu.BufferUsage.UNIFORM)
    views = [BufferView(s.name, s.buffer, s.start, _words(s.end - s.start) * WORD, "readback")
             for s in chunk.sources]
    bindings = {var: views[min(n, len(views) - 1)] for n, var in enumerate(SOURCES)}
    bindings["gather"] = BufferView(GATHER, gather, 0, gather.size, "readback")
    bindings["regions"] = BufferView(f"{name}:regions", regions, 0, regions.size, "readback")
    bound = bind(gpu, resources, name, SHADER, bindings)
    reads = tuple(dict.fromkeys(region.resource for _, region, _ in chunk.rows))
    return Pass(name, Phase.READBACK,
                Dispatch(gpu.compute_pipeline(SHADER), bound.fixed(), (len(chunk.rows), 1, 1)),
                reads=reads, writes=(GATHER,),
                does=f"copies the readback regions ({len(chunk.rows)}) into the gather buffer, "
                     f"which the staging ring maps")


def _words(size: int) -> int:
    return (size + WORD - 1) // WORD
