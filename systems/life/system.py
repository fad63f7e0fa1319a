"""The Life system: bit-packed Life-like automata on the GPU.

Per simulation step, for each life entity (passes in this order; the step's are made in
systems/life/kernels.py, the others in systems/life/display.py):
  CLEAR     <e>:life:clear        zero the population counter
  SIMULATE  <e>:life:sweep<k>     steps_per_frame generations, all in the step's compute pass:
                                  pingpong: state0 -> state1 -> state0 ..., SWEEP_GENS
                                  generations per dispatch (life/step_sweep.wgsl) where the
                                  device has subgroups
            <e>:life:step<k>      or one per dispatch (life/step_quad.wgsl when the width is a
                                  multiple of 128, else life/step.wgsl)
                                  inplace:  one buffer, tile + halo + staging (step_inplace.wgsl)
            <e>:life:commit<k>    (inplace) staged tile borders back into the state
            <e>:life:trail        (with a trail_color) the trail ages once per step
  RENDER    <e>:life:display      cells and trail -> the storage texture <e>/image
            <e>:life:draw         the texture filling the view or as a world quad
  READBACK  <e>:life:population   live cells (only on steps with a readback: nothing else
                                  reads the count), then the engine's gather pass,
            scene:frame:readback  population -> the staging ring (read 1-2 steps later; the
                                  only region of a scene goes to the ring directly)
On demand (mouse painting, outside the frame graph):
            <e>:life:paint        set or clear cells in the current state (life/paint.wgsl)

GPU resources, in the registry under the entity's name: params, look, placement (uniforms),
counters, trail, state0 (+ state1 in pingpong memory, + staging in inplace memory), the texture
image, and paint (the edits of the last paint, made on the first one).

State: 32 cells per u32, rows padded to whole words, padding bits always zero; cell (x, y) is bit
x % 32 of word y * stride + x / 32 (row 0 = the top row of a pattern).

A ``prewarm`` runs round(prewarm / fixed_dt) steps' generations (and trail ageing) when the layer
is created, batched (emberfx.core.step_batches).
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import wgpu

from emberfx.core import step_batches, wgsl
from emberfx.core.errors import EmberError
from emberfx.core.frame_graph import FrameGraph, Pass
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array
from emberfx.core.resources import BufferView
from emberfx.core.step_batches import PrewarmNotice
from emberfx.core.system import EntityRef, Priority, Readback, StepInfo, System
from emberfx.model.prewarm import check_timestep
from emberfx.model.registry import set_system
from emberfx.systems.life import kernels as life_kernels
from emberfx.systems.life.component import LIFE_LAYERS, Life
from emberfx.systems.life.display import (
    COUNTERS,
    LOOK,
    LOOK_FIELDS,
    MAX_TEXTURE,
    PLACEMENT,
    LayerPasses,
    layer_passes,
    look_record,
    placement_record,
    texture_size,
)
from emberfx.systems.life.kernels import (
    BORDER_SLOTS,
    TILE_H,
    TILE_W,
    Sweep,
    choose_kernel,
    pingpong_plan,
    step_grid,
    step_passes,
)
from emberfx.systems.life.rules import parse_rule

PARAMS = struct_dtype("life/swar.wgsl", "LifeParams")
PAINT_GROUP = wgsl.workgroup_size("life/paint.wgsl")[0]
PAINT_EDITS = 1 << 16   # edits per paint dispatch: a larger paint runs in several (bounded memory)


def pack_cells(cells: np.ndarray) -> np.ndarray:
    """bool (H, W) -> u32 words (H * stride), bit x % 32 of word x / 32, padding bits zero."""
    h, w = cells.shape
    stride = (w + 31) // 32
    padded = np.zeros((h, stride * 32), np.uint8)
    padded[:, :w] = cells
    return np.packbits(padded, axis=1, bitorder="little").view("<u4").reshape(-1).copy()


def unpack_cells(words: np.ndarray, width: int, height: int) -> np.ndarray:
    stride = (width + 31) // 32
    bytes_ = words.astype("<u4").reshape(height, stride).view(np.uint8)
    return np.unpackbits(bytes_, axis=1, bitorder="little")[:, :width].astype(bool)


def cells_on_line(a, b) -> np.ndarray:
    """The cells (x, y) of the digital line from cell ``a`` to cell ``b``, both included: int64
    (max(|dx|, |dy|) + 1, 2), each step a move to one of the 8 neighbours, the minor coordinate the
    nearest integer to the exact line (exact integer arithmetic). Ties are broken the same way
    whichever end is given first, so ``cells_on_line(b, a)`` is this reversed. Painting these
    between the previous and the current cursor cell keeps a fast drag's stroke unbroken."""
    (x0, y0), (x1, y1) = (tuple(int(v) for v in a), tuple(int(v) for v in b))
    flip = (x1, y1) < (x0, y0)
    if flip:
        x0, y0, x1, y1 = x1, y1, x0, y0
    dx, dy = x1 - x0, y1 - y0
    n = max(abs(dx), abs(dy))
    if n == 0:
        return np.array([[x0, y0]], np.int64)
    i = np.arange(n + 1, dtype=np.int64)
    # round(i d / n) as floor((2 i d + n) / (2 n)): halves round up, in integers only
    out = np.stack([x0 + (2 * i * dx + n) // (2 * n), y0 + (2 * i * dy + n) // (2 * n)], axis=1)
    return out[::-1].copy() if flip else out


def _paint_edits(cells, width: int, height: int, stride: int) -> np.ndarray:
    """Cells (n, 2) of (x, y) -> one (word index, bit mask) pair per touched word, u32 (m, 2);
    cells outside the grid are dropped (they are not wrapped, even on a torus)."""
    xy = np.asarray(cells, dtype=np.int64)
    if xy.size == 0:
        return np.zeros((0, 2), np.uint32)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise EmberError(f"paint: expected cells as (x, y) pairs, an (n, 2) array, found shape "
                         f"{xy.shape}")
    keep = (xy[:, 0] >= 0) & (xy[:, 0] < width) & (xy[:, 1] >= 0) & (xy[:, 1] < height)
    x, y = xy[keep, 0], xy[keep, 1]
    if len(x) == 0:
        return np.zeros((0, 2), np.uint32)
    order = np.argsort(y * stride + x // 32, kind="stable")
    words = (y * stride + x // 32)[order]
    masks = np.left_shift(np.uint64(1), (x[order] % 32).astype(np.uint64))
    starts = np.flatnonzero(np.r_[True, words[1:] != words[:-1]])
    edits = np.stack([words[starts], np.bitwise_or.reduceat(masks, starts)], axis=1)
    return edits.astype(np.uint32)


@dataclass
class LifeLayer:
    """One Life entity on the GPU: its sizes, registry views (by key: params, state0, ...),
    kernel, and the passes made for it."""
    entity: EntityRef
    component: Life
    width: int
    height: int
    stride: int
    buffers: dict[str, BufferView]
    texture_size: tuple[int, int]   # the image the draw samples (and the trail)
    tiles: int                   # inplace: tiles in all, and per row
    tiles_x: int
    parity: int = 0           # pingpong: which buffer holds the current generation
    step_parity: int = 0      # the parity the step being encoded starts from
    generation: int = 0
    look_key: tuple | None = None   # the colour and placement fields last uploaded
    trail_on: bool = False    # whether the trail pass ran in the steps so far
    kernel: str = "word"      # pingpong: the one of PINGPONG_KERNELS that runs
    sweep: Sweep | None = None
    grid: tuple[int, int, int] = (1, 1, 1)          # workgroups of each step dispatch
    constants: dict = field(default_factory=dict)   # the rule's override constants
    # (dispatch index, generations per dispatch) -> the step's passes for it (life_kernels)
    step_passes: dict[tuple[int, int], tuple[Pass, ...]] = field(default_factory=dict)
    passes: LayerPasses | None = None   # the passes around the step (life_display)


class LifeSystem(System):
    key = "life"
    priority = Priority.SIMULATION

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.layers: dict[str, LifeLayer] = {}
        self._rule_warnings: set[tuple] = set()   # said once per entity, pattern and rules
        self._sampler = self.device.create_sampler(mag_filter="nearest", min_filter="nearest")
        shared.events.announce(LIFE_LAYERS, MappingProxyType(self.layers))

    # lifecycle ---------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component: Life) -> None:
        name = entity.name
        width, height = component.size
        stride = (width + 31) // 32
        words = stride * height
        what = f"entity '{name}': life.size = {width}x{height} ({words * 4:,} bytes of state)"
        check_timestep(component, self.key, self.shared.fixed_dt, self.shared.scene_path, name)
        self.gpu.check_buffer_size(words * 4, what)
        birth, survive = parse_rule(component.rule)
        tiles_x = math.ceil(stride / TILE_W)
        tiles = tiles_x * math.ceil(height / TILE_H)
        layer = LifeLayer(entity, component, width, height, stride, {},
                          texture_size(width, height), tiles, tiles_x,
                          constants={"BIRTH": birth, "SURVIVE": survive})
        if component.memory == "pingpong":
            choose_kernel(self.gpu, layer)
        layer.grid = step_grid(self.gpu, layer)
        for groups in layer.grid[:2]:
            self.gpu.check_dispatch(groups, f"{what}: its step")
        uniform, storage = wgpu.BufferUsage.UNIFORM, wgpu.BufferUsage.STORAGE
        tex_w, tex_h = layer.texture_size
        sizes = {"params": (PARAMS.itemsize, uniform),
                 "look": (LOOK.itemsize, uniform),
                 "placement": (PLACEMENT.itemsize, uniform),
                 "counters": (COUNTERS.itemsize, storage),
                 "trail": (tex_w * tex_h * 4, storage),
                 "state0": (words * 4, storage)}
        if component.memory == "pingpong":
            sizes["state1"] = (words * 4, storage)
        else:   # tile borders, from a generation's step to its commit
            sizes["staging"] = (tiles * BORDER_SLOTS * 4, storage)
        layer.buffers = {key: self.buffer(entity, key, size, usage, what=what)
                         for key, (size, usage) in sizes.items()}
        self.resources.texture(name, "image", size=layer.texture_size, format="rgba8unorm",
                               usage=wgpu.TextureUsage.STORAGE_BINDING
                               | wgpu.TextureUsage.TEXTURE_BINDING, family=self.key)
        layer.passes = layer_passes(self.build, layer, self.shared, self._sampler)
        step_passes(self.build, layer, self._gens(layer))   # made now; passes() picks them
        record = np.zeros((), PARAMS)
        record["width"], record["height"], record["stride"], record["tiles_x"] = (
            width, height, stride, tiles_x)
        record["torus"] = int(component.topology == "torus")
        self.resources.write(layer.buffers["params"], record.tobytes())
        self.resources.write(layer.buffers["state0"],
                             pack_cells(self._initial_cells(layer)).tobytes())
        self.layers[name] = layer
        self._write_look(layer)
        if component.prewarm > 0.0 and self._gens(layer) > 0:
            self._prewarm(layer)

    def _prewarm(self, layer: LifeLayer) -> None:
        """Run the component's prewarm: the step's passes (generations, trail), batched."""
        c, name = layer.component, layer.entity.name
        gens = self._gens(layer)
        around = layer.passes
        assert around is not None   # made in add()
        passes = step_passes(self.build, layer, gens)
        graph = FrameGraph(passes + ([around.trail] if c.trail_color is not None else []),
                           self.resources.persistent())

        def encode_step(encoder, k: int) -> None:
            self._advance(layer)
            graph.encode(encoder, {})

        step_batches.run_steps(
            self.device, f"{name}:life:prewarm", c.prewarm_steps(self.shared.fixed_dt),
            layer.width * layer.height * gens, encode_step, fence_source=layer.buffers["params"],
            notice=PrewarmNotice(name, c.prewarm, f"{layer.width}x{layer.height} cells x {gens} "
                                 f"generations", "cell-generations"),
            batching=step_batches.batching_of(self.shared))

    def _initial_cells(self, layer: LifeLayer) -> np.ndarray:
        from emberfx.systems.life.patterns import place, random_soup, read_pattern, rule_mismatch

        c = layer.component
        cells = np.zeros((layer.height, layer.width), bool)
        if c.density > 0.0:
            cells |= random_soup(layer.width, layer.height, c.density,
                                 self.shared.seed ^ (layer.entity.index * 0x9E3779B9 & 0xFFFFFFFF),
                                 c.soup)
        if c.pattern is not None:
            path = self.shared.resolve(c.pattern) if self.shared.resolve else c.pattern
            pattern = read_pattern(path)
            mismatch = rule_mismatch(pattern, c.rule)
            key = (layer.entity.name, c.pattern, pattern.rule, c.rule)
            if mismatch and key not in self._rule_warnings:
                self._rule_warnings.add(key)
                print(f"emberfx: warning: entity '{layer.entity.name}': life.pattern "
                      f"'{c.pattern}' {mismatch}; the layer's rule runs", file=sys.stderr)
            place(cells, pattern.cells, c.offset, source=str(c.pattern))
        return cells

    def remove(self, entity: EntityRef) -> None:
        del self.layers[entity.name]   # the registry releases its buffers and texture

    # per frame ---------------------------------------------------------------------------------
    def passes(self) -> list[Pass]:
        out = []
        for layer in self.layers.values():
            out += self._layer_passes(layer)
        return out

    def _gens(self, layer: LifeLayer) -> int:
        return layer.component.generations_per_step()

    def _plan(self, layer: LifeLayer) -> list[int]:
        """Generations per pingpong dispatch of one step."""
        return pingpong_plan(layer.kernel, self._gens(layer))

    def _layer_passes(self, layer: LifeLayer) -> list[Pass]:
        around = layer.passes
        assert around is not None   # made in add()
        out = [around.clear, *step_passes(self.build, layer, self._gens(layer))]
        if layer.component.trail_color is not None:
            out.append(around.trail)
        c = layer.component
        return out + [around.population, around.display, around.draw[c.display, c.blend]]

    def readbacks(self) -> list[Readback]:
        counters = [layer.buffers["counters"] for layer in self.layers.values()]
        return [Readback(view.owner, "life", view.name, view.buffer, view.offset,
                         COUNTERS.itemsize) for view in counters]

    def before_step(self, step: StepInfo) -> None:
        for layer in self.layers.values():
            self._advance(layer)
            look_key = tuple(getattr(layer.component, f) for f in LOOK_FIELDS)
            if look_key != layer.look_key:   # rewrite only after a live edit
                self._write_look(layer)

    def _advance(self, layer: LifeLayer) -> None:
        """The bookkeeping of one step about to be encoded: its parities and generation."""
        layer.step_parity = layer.parity
        if layer.component.memory == "pingpong":
            layer.parity = (layer.parity + len(self._plan(layer))) % 2
        layer.generation += self._gens(layer)

    def _write_look(self, layer: LifeLayer) -> None:
        c = layer.component
        trail_on = c.trail_color is not None
        if trail_on and not layer.trail_on and layer.look_key is not None:
            # nothing aged the trail while it was off: start it dark rather than stale
            trail = layer.buffers["trail"]
            self.resources.write(trail, bytes(trail.size))
        layer.trail_on = trail_on
        layer.look_key = tuple(getattr(c, f) for f in LOOK_FIELDS)
        self.resources.write(layer.buffers["look"], look_record(layer))
        self.resources.write(layer.buffers["placement"], placement_record(layer))

    # mouse painting ----------------------------------------------------------------------------
    def cell_under(self, entity: EntityRef, component: Life, camera, px: float, py: float,
                   viewport: tuple[float, float]) -> tuple[int, int] | None:
        """The cell (x, y) shown at cursor (px, py) (logical pixels, (0, 0) at the top-left of a
        ``viewport`` of (width, height), as in Camera.ray), or None off the grid or outside the
        viewport (a drag leaving the window paints nothing it cannot show).

        "fill" follows common/texture_quad.wgsl: the grid covers the viewport, centred, with
        square cells, cropped along the axis where it is relatively longer. "quad" intersects
        ``camera.ray`` with the quad (x-y plane at quad_center, quad_size). Both then go through
        the texture as the display pass does, so on a grid wider than the texture (> 4096) the
        answer is the cell that pixel shows, the one painting makes visible."""
        layer = self.layers.get(entity.name)
        width, height = (layer.width, layer.height) if layer else component.size
        tex_w, tex_h = (layer.texture_size if layer
                        else (min(width, MAX_TEXTURE), min(height, MAX_TEXTURE)))
        vw, vh = float(viewport[0]), float(viewport[1])
        if not (0.0 <= px < vw and 0.0 <= py < vh):
            return None
        if component.display == "fill":
            grid_aspect, view_aspect = width / height, vw / vh
            ex, ey = ((grid_aspect / view_aspect, 1.0) if grid_aspect > view_aspect
                      else (1.0, view_aspect / grid_aspect))
            u = ((2.0 * px / vw - 1.0) / ex + 1.0) * 0.5
            v = 1.0 - ((1.0 - 2.0 * py / vh) / ey + 1.0) * 0.5   # texture row 0 at the top
        else:
            origin, direction = camera.ray(px, py, (vw, vh))
            cx, cy, cz = component.quad_center
            if abs(direction[2]) < 1e-12:       # looking along the quad's plane
                return None
            t = (cz - origin[2]) / direction[2]
            if t < 0.0:                          # the plane is behind the camera
                return None
            hit = origin + t * direction
            u = (hit[0] - cx) / component.quad_size[0] + 0.5
            v = 0.5 - (hit[1] - cy) / component.quad_size[1]
        if not (0.0 <= u < 1.0 and 0.0 <= v < 1.0):
            return None
        texel_x, texel_y = min(int(u * tex_w), tex_w - 1), min(int(v * tex_h), tex_h - 1)
        return texel_x * width // tex_w, texel_y * height // tex_h   # display.wgsl's scale()

    def paint(self, entity: EntityRef, cells, alive: bool = True) -> None:
        """Set ``cells`` (a list of (x, y) or an (n, 2) int array) alive, or dead with
        ``alive=False``, in the state the next generation reads; cells off the grid are ignored.
        Takes effect at once: the next step, state() and render() all see it (the population in
        stats() follows after the next step).

        Done on the GPU by life/paint.wgsl, submitted right away: an atomicOr / atomicAnd per
        touched word of the current buffer. Only a CPU copy of those words could be written with
        queue.write_buffer, and any CPU copy is stale after each step, so keeping one would cost a
        readback of the grid per step or per stroke. The queue orders the pass after the steps
        already submitted and before the next, and it touches nothing but the current buffer
        (pingpong: state<parity>; inplace: the one buffer, whose staging holds nothing between
        steps), so both memory modes and both topologies need nothing else; padding bits stay
        zero because cells past the width are dropped, never wrapped."""
        layer = self.layers[entity.name]
        edits = _paint_edits(cells, layer.width, layer.height, layer.stride)
        if len(edits) == 0:
            return
        edit_bytes = 2 * edits.itemsize   # one (word, mask) pair
        paint = layer.buffers.get("paint")
        if paint is None:   # at most one edit per word; larger paints go in chunks
            capacity = min(layer.stride * layer.height, PAINT_EDITS) * edit_bytes
            paint = layer.buffers["paint"] = self.buffer(
                entity, "paint", capacity, wgpu.BufferUsage.STORAGE,
                what=f"entity '{entity.name}': life paint", persistent=False)
        label = f"{entity.name}:life:paint"
        pipeline = self.build.pipeline("life/paint.wgsl", {"ALIVE": int(bool(alive))})
        per_dispatch = paint.size // edit_bytes
        for start in range(0, len(edits), per_dispatch):
            chunk = edits[start:start + per_dispatch]
            # queue writes are ordered with submits: the previous chunk's dispatch read its edits
            self.resources.write(paint, chunk.tobytes())
            bound = self.build.bind(label, "life/paint.wgsl", {   # exactly the edits in use
                "edits": dataclasses.replace(paint, size=chunk.nbytes),
                "state": self.current_buffer(layer)})
            self.gpu.dispatch_now(label, pipeline, bound.group(0),
                                  self.gpu.grid(math.ceil(len(chunk) / PAINT_GROUP)))

    # inspection --------------------------------------------------------------------------------
    def current_buffer(self, layer: LifeLayer) -> BufferView:
        """The registry view of the state holding the current generation."""
        return layer.buffers[f"state{layer.parity}"]

    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        layer = self.layers[entity.name]
        words = read_array(self.device, self.current_buffer(layer), np.uint32,
                           layer.stride * layer.height)
        return {"cells": unpack_cells(words, layer.width, layer.height)}

    def words(self, entity: EntityRef) -> np.ndarray:
        """The packed state words (tests: padding bits must stay zero)."""
        layer = self.layers[entity.name]
        return read_array(self.device, self.current_buffer(layer), np.uint32,
                          layer.stride * layer.height)

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        layer = self.layers[entity.name]
        out = {"generation": layer.generation, "size": (layer.width, layer.height),
               # the step kernel that runs (the component's choice, or what it fell back to)
               "kernel": layer.kernel if layer.component.memory == "pingpong" else "inplace"}
        if layer.sweep is not None and out["kernel"] in life_kernels.SWEEP_KERNELS:
            out["sweep"] = {"lanes": layer.sweep.lanes, "rows_per_subgroup": layer.sweep.chunk,
                            "generations_per_dispatch": life_kernels.SWEEP_GENS}
        data = readback.get(entity.name)
        if data is not None:
            out["population"] = int(np.frombuffer(data, COUNTERS)[0]["population"])
        return out


set_system("life", LifeSystem)

__all__ = ["LifeSystem", "cells_on_line", "pack_cells", "unpack_cells", "EmberError"]
