"""Point lights: the one array of lights every lit draw reads, and its per-tile lists.

The renderer owns three buffers (``PointLightBuffers``):

  lights/list    common/point_lights.wgsl's PointLight records, LIGHT_CAPACITY of them: the
                 scene's [entity.point_light] lights first (systems/lights writes them and
                 copies them in), then the lights emitters with ``emit_light`` append each render
  lights/count   LightCounts: ``scene`` (written by the host) and ``appended`` (an atomic the
                 appending passes bump; zeroed at the start of each render)
  lights/tiles   per LIGHT_TILE x LIGHT_TILE pixel tile of the image, a count and up to
                 TILE_LIGHTS light indices (lights/cull.wgsl), sized with the render targets

A frame graph in which some pass writes lights/list gets two passes of the renderer's around
them: ``scene:lights:reset`` (zeroes ``appended``, declared first so every appending pass follows
it) and ``scene:lights:cull`` (reads the list, writes the tiles, so every lit draw, which reads
them, follows it). A graph with no light leaves both out and the tiles hold empty lists.

Lit draws bind ``point_lights`` and ``light_tiles`` (``light_bindings``; core/shadows.py's
receiver_bindings includes them) and sum the lights of their pixel's tile
(common/point_lights.wgsl point_light_sum).
"""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.bindings import PassBuilder
from emberfx.core.errors import DeviceLimitError
from emberfx.core.frame_graph import ClearBuffer, Pass, Phase, RenderQueue
from emberfx.core.layout import struct_dtype

SHADER = "common/point_light_types.wgsl"
CULL = "lights/cull.wgsl"
LIGHTS = "lights/list"
COUNTS = "lights/count"
TILES = "lights/tiles"
POINT_LIGHT = struct_dtype(SHADER, "PointLight")
LIGHT_COUNTS = struct_dtype(SHADER, "LightCounts")
LIGHT_CAPACITY = wgsl.int_constant(SHADER, "LIGHT_CAPACITY")
LIGHT_TILE = wgsl.int_constant(SHADER, "LIGHT_TILE")
TILE_LIGHTS = wgsl.int_constant(SHADER, "TILE_LIGHTS")
TILE_STRIDE = wgsl.int_constant(SHADER, "TILE_STRIDE")
APPENDED_OFFSET = LIGHT_COUNTS.itemsize - 4   # `appended`, LightCounts' last word
# the render-queue hint of every pass that makes or culls the lights: before any draw (the
# frame graph takes the lowest hint among the passes ready to run), so that the draws gated on
# the tiles do not fall behind the sprites, which nothing gates
LIGHT_ORDER = RenderQueue.BACKGROUND - 200


def light_bindings() -> dict[str, str]:
    """What a lit draw binds to read the point lights of its pixel's tile."""
    return {"point_lights": LIGHTS, "light_tiles": TILES}


def tile_grid(size: tuple[int, int]) -> tuple[int, int]:
    """Columns and rows of tiles over an image of ``size`` (w, h) pixels."""
    w, h = size
    return (max(1, -(-w // LIGHT_TILE)), max(1, -(-h // LIGHT_TILE)))


def tile_bytes(gpu, size: tuple[int, int]) -> int:
    """The bytes of the tiles' lists over an image of ``size`` pixels, or a one-line
    DeviceLimitError when a buffer that large passes the device's max_buffer_size."""
    columns, rows = tile_grid(size)
    need = 4 * columns * rows * TILE_STRIDE
    limit = gpu.limits["max-buffer-size"]
    if need > limit:
        w, h = size
        raise DeviceLimitError(
            f"the point lights' tile lists for an image of {w}x{h} need {need} bytes, over this "
            f"device's max_buffer_size of {limit} ({gpu.label}): render a smaller --size")
    return need


def pack_lights(positions, colors, intensities, ranges) -> bytes:
    """PointLight records of lights at ``positions`` (n, 3) with linear ``colors`` (n, 3),
    ``intensities`` (n,) and ``ranges`` (n,)."""
    records = np.zeros(len(ranges), POINT_LIGHT)
    records["position_range"][:, :3] = positions
    records["position_range"][:, 3] = ranges
    records["color"][:, :3] = np.asarray(colors, np.float64) * np.asarray(
        intensities, np.float64)[:, None]
    return records.tobytes()


class PointLightBuffers:
    """The lights' list and counts (made once) and the tiles (made with the render targets),
    registered under LIGHTS, COUNTS and TILES, and the renderer's passes over them."""

    def __init__(self, gpu, resources):
        self.gpu = gpu
        self.device = gpu.device
        self.resources = resources
        storage = (wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
                   | wgpu.BufferUsage.COPY_SRC)
        self.lights = self.device.create_buffer(
            label=LIGHTS, size=LIGHT_CAPACITY * POINT_LIGHT.itemsize, usage=storage)
        self.counts = self.device.create_buffer(label=COUNTS, size=LIGHT_COUNTS.itemsize,
                                                usage=storage)
        resources.adopt(LIGHTS, self.lights)
        resources.adopt(COUNTS, self.counts)
        self.tiles: wgpu.GPUBuffer | None = None
        self.grid = (1, 1)
        self._build = PassBuilder(gpu, resources)
        self._passes: tuple[object, tuple[Pass, Pass]] | None = None
        self.filled = False   # whether a graph with the cull may have written the tiles

    def make_tiles(self, size: tuple[int, int]) -> None:
        """The tiles' buffer for an image of ``size`` pixels, every list empty."""
        if self.tiles is not None:
            self.tiles.destroy()
        self.grid = tile_grid(size)
        self.tiles = self.device.create_buffer(
            label=TILES, size=tile_bytes(self.gpu, size),
            usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
            | wgpu.BufferUsage.COPY_SRC)
        self.resources.adopt(TILES, self.tiles)
        self._passes = None
        self.filled = False

    def empty_tiles(self) -> None:
        """Every tile's list emptied (a graph without lights runs no cull)."""
        if self.tiles is not None and self.filled:
            self.filled = False
            self.resources.submit_held()
            self.device.queue.write_buffer(self.tiles, 0, bytes(self.tiles.size))

    def passes(self) -> tuple[Pass, Pass]:
        """The reset of the appended count and the cull into the tiles."""
        self.filled = True
        if self._passes is not None and self._passes[0] is self.tiles:
            return self._passes[1]
        reset = Pass("scene:lights:reset", Phase.RENDER,
                     ClearBuffer(self.counts, APPENDED_OFFSET, 4), writes=(COUNTS,),
                     order=LIGHT_ORDER, does="zeroes the count of the lights appended by emitters")
        columns, rows = self.grid
        cull = self._build.compute(
            "scene:lights:cull", Phase.RENDER, CULL, (columns, rows, 1),
            {"frame": "frame", "point_lights": LIGHTS, "light_counts": COUNTS,
             "light_tiles": TILES}, order=LIGHT_ORDER,
            does=f"the point lights reaching each {LIGHT_TILE}x{LIGHT_TILE} pixel tile")
        self._passes = (self.tiles, (reset, cull))
        return reset, cull

    @staticmethod
    def lit(passes) -> bool:
        """Whether some pass of ``passes`` writes the lights' list (there are lights)."""
        return any(LIGHTS in p.writes for p in passes)

    def destroy(self) -> None:
        for buffer in (self.lights, self.counts, self.tiles):
            if buffer is not None:
                buffer.destroy()
