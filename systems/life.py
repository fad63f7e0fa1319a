"""The Life system: bit-packed Life-like automata on the GPU.

Per simulation step, for each life entity:
  CLEAR     <e>:life:clear        zero the population counter
  SIMULATE  <e>:life:sweep<k>     steps_per_frame generations, all in the step's compute pass:
                                  pingpong: state A -> B -> A ..., SWEEP_GENS generations per
                                  dispatch (life/step_sweep.wgsl) where the device has subgroups
            <e>:life:step<k>      or one per dispatch (life/step_quad.wgsl when the width is a
                                  multiple of 128, else life/step.wgsl)
                                  inplace:  one buffer, tile + halo + staging (step_inplace.wgsl)
            <e>:life:commit<k>    (inplace) staged tile borders back into the state
            <e>:life:trail        (with a trail_color) the trail ages once per step: 1 where a
                                  cell lives, times trail_fade after (life/trail.wgsl)
  PREPARE   <e>:life:population   live cells: workgroup atomics, one global atomic per workgroup
  RENDER    <e>:life:display      cells and trail -> an rgba8 storage texture (<= 4096 per side);
                                  reads only, so drawing never changes what the next draw shows
            <e>:life:draw         the texture filling the view or as a world quad
  READBACK  <e>:life:readback     population -> the staging ring (read 1-2 steps later)
On demand (mouse painting, outside the frame graph):
            <e>:life:paint        set or clear cells in the current state (life/paint.wgsl)

State: 32 cells per u32, rows padded to whole words, padding bits always zero; cell (x, y) is bit
x % 32 of word y * stride + x / 32 (row 0 = the top row of a pattern).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx import wgsl
from emberfx.colors import linear_color
from emberfx.errors import EmberError, UsageError
from emberfx.frame_graph import ClearBuffer, Dispatch, Draw, Pass, Phase
from emberfx.layout import struct_dtype
from emberfx.readback import read_array
from emberfx.registry import set_system
from emberfx.sprites import texture_quad_pipeline
from emberfx.system import EntityRef, Readback, StepInfo, System
from emberfx.systems.life_component import Life
from emberfx.systems.life_rules import parse_rule

PARAMS = struct_dtype("life/swar.wgsl", "LifeParams")
LOOK = struct_dtype("life/look.wgsl", "LifeLook")
PLACEMENT = struct_dtype("common/texture_quad.wgsl", "QuadPlacement")
COUNTERS = struct_dtype("life/population.wgsl", "LifeCounters")
TILE_W, TILE_H, BORDER_SLOTS = (wgsl.int_constant("life/tile.wgsl", k)
                                for k in ("TILE_W", "TILE_H", "BORDER_SLOTS"))
STEP_ROWS = 16                                     # rows per invocation of the step kernels
# The pingpong kernels, fastest first: "sweep" (several generations per dispatch, needs
# subgroups), "quad" (one generation, four words per invocation, widths that are multiples of
# 128) and "word" (one generation, one word per invocation, any width). The component's
# ``kernel`` field picks where to start ("auto": the first); each falls back to the next where it
# cannot run.
PINGPONG_KERNELS = ("sweep", "quad", "word")
SWEEP_GENS = 8          # generations per dispatch of life/step_sweep.wgsl (at most MAX_SWEEP_GENS)
MAX_SWEEP_GENS = wgsl.int_constant("life/step_sweep.wgsl", "MAX_GENS")
SWEEP_GROUP = wgsl.workgroup_size("life/step_sweep.wgsl")[0]   # invocations per sweep workgroup
STEP_GROUP = {"word": wgsl.workgroup_size("life/step.wgsl")[0],
              "quad": wgsl.workgroup_size("life/step_quad.wgsl")[0]}
TEXEL_GROUP = wgsl.workgroup_size("life/display.wgsl")[:2]       # also life/trail.wgsl's
POPULATION_WORDS = (wgsl.workgroup_size("life/population.wgsl")[0]
                    * wgsl.int_constant("life/population.wgsl", "WORDS_PER_INVOCATION"))
PAINT_GROUP = wgsl.workgroup_size("life/paint.wgsl")[0]
SWEEP_CHUNKS = (256, 128, 64)   # rows per subgroup, the largest that keeps the GPU busy
SWEEP_BUSY_SUBGROUPS = 8192     # ... meaning this many subgroups (a hardware GPU)
MAX_TEXTURE = 4096
LOOK_FIELDS = ("alive_color", "dead_color", "trail_color", "trail_fade", "display", "quad_center",
               "quad_size")


def uses_quads(width: int) -> bool:
    """Whether a pingpong layer of this width can step with life/step_quad.wgsl (four whole words
    per invocation): rows of whole 128-cell groups, so no ragged word and no partial group."""
    return width % 128 == 0


@dataclass(frozen=True)
class Sweep:
    """How life/step_sweep.wgsl covers one layer: subgroups of `lanes` word columns, `halo` of
    them on each side lent to the neighbours, `chunk` rows each."""
    lanes: int
    halo: int
    chunk: int

    def grid(self, stride: int, height: int) -> tuple[int, int, int]:
        strips_per_group = SWEEP_GROUP // self.lanes
        return (math.ceil(stride / (strips_per_group * (self.lanes - 2 * self.halo))),
                math.ceil(height / self.chunk), 1)


def plan_sweep(lanes: int | None, width: int, height: int, torus: bool,
               busy_subgroups: int) -> Sweep | None:
    """The sweep's layout for a layer, or None where it cannot run: no subgroups, or a torus one
    word wide (a lane would be its own west and east neighbour). The halo must hold SWEEP_GENS
    cells: one word, or two on a ragged torus, whose wrapped last word may hold a single cell."""
    stride = (width + 31) // 32
    if lanes is None or (torus and stride == 1):
        return None
    halo = 2 if torus and width % 32 else 1
    if lanes - 2 * halo < 1 or SWEEP_GROUP % lanes:
        return None
    strips = math.ceil(stride / (lanes - 2 * halo))
    chunk = next((c for c in SWEEP_CHUNKS if strips * math.ceil(height / c) >= busy_subgroups),
                 SWEEP_CHUNKS[-1])
    return Sweep(lanes, halo, chunk)


def pingpong_plan(kernel: str, generations: int) -> list[int]:
    """Generations per dispatch for one step: SWEEP_GENS at a time for the sweep, then the rest
    in one smaller dispatch; one each for the single-generation kernels."""
    if kernel != "sweep":
        return [1] * generations
    whole, rest = divmod(generations, SWEEP_GENS)
    return [SWEEP_GENS] * whole + ([rest] if rest else [])


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
class _Layer:
    entity: EntityRef
    component: Life
    width: int
    height: int
    stride: int
    buffers: dict
    pipelines: dict
    texture: wgpu.GPUTexture     # the cell image the draw samples
    texture_size: tuple[int, int]
    tiles: int                   # inplace: tiles in all, and per row
    tiles_x: int
    groups: dict = field(default_factory=dict)
    parity: int = 0           # pingpong: which buffer holds the current generation
    step_parity: int = 0      # the parity the step being encoded starts from
    generation: int = 0
    look_key: tuple | None = None   # the colour and placement fields last uploaded
    trail_on: bool = False    # whether the trail pass ran in the steps so far
    kernel: str = "word"      # pingpong: the one of PINGPONG_KERNELS that runs
    sweep: Sweep | None = None
    constants: dict = field(default_factory=dict)   # the rule's override constants
    steppers: dict = field(default_factory=dict)    # (kernel, generations) -> pipeline, groups


class LifeSystem(System):
    key = "life"

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.layers: dict[str, _Layer] = {}
        self._rule_warnings: set[tuple] = set()   # said once per entity, pattern and rules
        self._sampler = self.device.create_sampler(mag_filter="nearest", min_filter="nearest")

    # lifecycle ---------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component: Life) -> None:
        name = entity.name
        width, height = component.size
        stride = (width + 31) // 32
        words = stride * height
        what = f"entity '{name}': life.size = {width}x{height} ({words * 4:,} bytes of state)"
        self.gpu.check_buffer_size(words * 4, what)
        birth, survive = parse_rule(component.rule)
        constants = {"BIRTH": birth, "SURVIVE": survive}
        tiles_x = math.ceil(stride / TILE_W)
        tiles = tiles_x * math.ceil(height / TILE_H)
        tex = (min(width, MAX_TEXTURE), min(height, MAX_TEXTURE))
        buffers = {
            "params": self.uniform_buffer(f"{name}/params", PARAMS.itemsize),
            "look": self.uniform_buffer(f"{name}/look", LOOK.itemsize),
            "placement": self.uniform_buffer(f"{name}/placement", PLACEMENT.itemsize),
            "counters": self.storage_buffer(f"{name}/counters", COUNTERS.itemsize),
            "trail": self.storage_buffer(f"{name}/trail", tex[0] * tex[1] * 4),
            "state0": self.storage_buffer(f"{name}/state0", words * 4, what=what),
        }
        if component.memory == "pingpong":
            buffers["state1"] = self.storage_buffer(f"{name}/state1", words * 4, what=what)
            pipelines = {}   # the step pipelines are made per generations-per-dispatch: _stepper
        else:
            buffers["staging"] = self.storage_buffer(f"{name}/staging", tiles * BORDER_SLOTS * 4,
                                                     what=what)
            pipelines = {"step": self.gpu.compute_pipeline("life/step_inplace.wgsl", constants),
                         "commit": self.gpu.compute_pipeline("life/tile_commit.wgsl", constants)}
        pipelines["population"] = self.gpu.compute_pipeline("life/population.wgsl")
        pipelines["display"] = self.gpu.compute_pipeline("life/display.wgsl")
        pipelines["trail"] = self.gpu.compute_pipeline("life/trail.wgsl")
        texture = self.device.create_texture(
            label=f"{name}/image", size=(tex[0], tex[1], 1), format="rgba8unorm",
            usage=wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING)
        layer = _Layer(entity, component, width, height, stride, buffers, pipelines,
                       texture, tex, tiles, tiles_x)
        layer.constants = constants
        if component.memory == "pingpong":
            self._choose_kernel(layer)
        for groups in self._grid(layer)[:2]:
            self.gpu.check_dispatch(groups, f"{what}: its step")
        self._make_groups(layer)
        record = np.zeros((), PARAMS)
        record["width"], record["height"], record["stride"], record["tiles_x"] = (
            width, height, stride, tiles_x)
        record["torus"] = int(component.topology == "torus")
        self.device.queue.write_buffer(buffers["params"], 0, record.tobytes())
        self.device.queue.write_buffer(buffers["state0"], 0,
                                       pack_cells(self._initial_cells(layer)).tobytes())
        self.layers[name] = layer
        self._write_look(layer)

    def _initial_cells(self, layer: _Layer) -> np.ndarray:
        from emberfx.systems.life_patterns import place, random_soup, read_pattern, rule_mismatch

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

    def _choose_kernel(self, layer: _Layer) -> None:
        """The component's ``kernel`` where the layer and device allow it, else the next of
        PINGPONG_KERNELS that runs ("auto": the fastest that runs)."""
        torus = layer.component.topology == "torus"
        busy = 1 if self.gpu.is_software else SWEEP_BUSY_SUBGROUPS   # lavapipe: few, long sweeps
        chosen = layer.component.kernel
        wanted: str = PINGPONG_KERNELS[0] if chosen == "auto" else chosen
        layer.sweep = (plan_sweep(self.gpu.subgroup_size, layer.width, layer.height, torus, busy)
                       if wanted == "sweep" else None)
        layer.kernel = ("sweep" if layer.sweep else
                        "quad" if wanted != "word" and uses_quads(layer.width) else "word")

    def _grid(self, layer: _Layer) -> tuple[int, int, int]:
        """The workgroup grid of each of the layer's step dispatches."""
        if layer.component.memory == "inplace":
            return self.gpu.grid(layer.tiles)
        if layer.kernel == "sweep":
            assert layer.sweep is not None   # the sweep kernel is chosen with its plan
            return layer.sweep.grid(layer.stride, layer.height)
        across = 4 if layer.kernel == "quad" else 1     # words per invocation
        return (math.ceil(layer.stride / across / STEP_GROUP[layer.kernel]),
                math.ceil(layer.height / STEP_ROWS), 1)

    def _stepper(self, layer: _Layer, gens: int):
        """(pipeline, bind group per parity) of a pingpong dispatch advancing `gens` generations,
        made on first use (a live edit of steps_per_frame may need a new remainder)."""
        key = (layer.kernel, gens)
        if key not in layer.steppers:
            b, name = layer.buffers, layer.entity.name
            if layer.kernel == "sweep":
                if not 1 <= gens <= MAX_SWEEP_GENS:   # GENS is an override: no const_assert sees it
                    raise UsageError(f"entity '{name}': life/step_sweep.wgsl advances 1 to "
                                     f"MAX_GENS = {MAX_SWEEP_GENS} generations per dispatch, "
                                     f"asked for GENS = {gens}")
                sweep, torus = layer.sweep, layer.component.topology == "torus"
                assert sweep is not None   # the sweep kernel is chosen with its plan
                pipeline = self.gpu.compute_pipeline("life/step_sweep.wgsl", dict(
                    layer.constants, GENS=gens, CHUNK=sweep.chunk, HALO=sweep.halo, TORUS=torus,
                    RAGGED_TORUS=torus and layer.width % 32 != 0))
            else:
                shader = "life/step_quad.wgsl" if layer.kernel == "quad" else "life/step.wgsl"
                pipeline = self.gpu.compute_pipeline(shader, dict(layer.constants, ROWS=STEP_ROWS))
            # the quad kernel reads its input twice: as vec4 groups and as words
            again = layer.kernel == "quad"
            groups = [self.gpu.bind_group(f"{name}:life:{layer.kernel}", pipeline, 0,
                                          [b["params"], b[f"state{k}"], b[f"state{1 - k}"]]
                                          + ([b[f"state{k}"]] if again else []))
                      for k in (0, 1)]
            layer.steppers[key] = (pipeline, groups)
        return layer.steppers[key]

    def _make_groups(self, layer: _Layer) -> None:
        b, p, name, gpu = layer.buffers, layer.pipelines, layer.entity.name, self.gpu
        if layer.component.memory == "inplace":
            layer.groups["step"] = [gpu.bind_group(f"{name}:life:step", p["step"], 0,
                                                   [b["params"], b["state0"], b["staging"]])]
            layer.groups["commit"] = gpu.bind_group(f"{name}:life:commit", p["commit"], 0,
                                                    [b["params"], b["state0"], b["staging"]])
        states = ("state0", "state1") if "state1" in b else ("state0",)
        layer.groups["population"] = [
            gpu.bind_group(f"{name}:life:population", p["population"], 0,
                           [b["params"], b[s], b["counters"]]) for s in states]
        display = p["display"]
        layer.groups["display"] = [self.device.create_bind_group(
            label=f"{name}:life:display", layout=display.get_bind_group_layout(0), entries=[
                {"binding": 0, "resource": {"buffer": b["params"]}},
                {"binding": 1, "resource": {"buffer": b["look"]}},
                {"binding": 2, "resource": {"buffer": b[s]}},
                {"binding": 3, "resource": {"buffer": b["trail"]}},
                {"binding": 4, "resource": layer.texture.create_view()}]) for s in states]
        layer.groups["trail"] = [
            gpu.bind_group(f"{name}:life:trail", p["trail"], 0,
                           [b["params"], b["look"], b[s], b["trail"]]) for s in states]
        layer.groups["draw"] = {}   # both displays: a live edit of `display` picks the other
        for mode in ("fill", "quad"):
            draw = self._draw_pipeline(mode)
            layer.groups["draw"][mode] = self.device.create_bind_group(
                label=f"{name}:life:draw", layout=draw.get_bind_group_layout(0), entries=[
                    {"binding": 0, "resource": {"buffer": self.shared.frame_uniform}},
                    {"binding": 1, "resource": {"buffer": b["placement"]}},
                    {"binding": 2, "resource": layer.texture.create_view()},
                    {"binding": 3, "resource": self._sampler}])

    def remove(self, entity: EntityRef) -> None:
        layer = self.layers.pop(entity.name)
        for buffer in layer.buffers.values():
            buffer.destroy()
        layer.texture.destroy()

    # per frame ---------------------------------------------------------------------------------
    def _draw_pipeline(self, mode: str):
        return texture_quad_pipeline(self.device, mode, self.shared.scene_format,
                                     self.shared.depth_format)

    def passes(self) -> list[Pass]:
        out = []
        for name, layer in self.layers.items():
            out += self._layer_passes(name, layer)
        return out

    def _gens(self, layer: _Layer) -> int:
        return 0 if layer.component.paused else layer.component.steps_per_frame

    def _plan(self, layer: _Layer) -> list[int]:
        """Generations per pingpong dispatch of one step."""
        return pingpong_plan(layer.kernel, self._gens(layer))

    def _layer_passes(self, name: str, layer: _Layer) -> list[Pass]:
        c, p, g = layer.component, layer.pipelines, layer.groups
        state = f"{name}/state"
        prefix = f"{name}:life"
        out = [Pass(f"{prefix}:clear", Phase.CLEAR, ClearBuffer(layer.buffers["counters"]),
                    writes=(f"{name}/counters",))]
        if c.memory == "pingpong":
            kind = "sweep" if layer.kernel == "sweep" else "step"
            grid = self._grid(layer)
            for k, gens in enumerate(self._plan(layer)):
                pipeline, groups = self._stepper(layer, gens)
                def pick(k=k, groups=groups):
                    return groups[(layer.step_parity + k) % 2]
                out.append(Pass(f"{prefix}:{kind}{k}", Phase.SIMULATE,
                                Dispatch(pipeline, (pick,), grid),
                                reads=(f"{name}/params", state), writes=(state,)))
        else:
            grid = self._grid(layer)
            for k in range(self._gens(layer)):
                out.append(Pass(f"{prefix}:step{k}", Phase.SIMULATE,
                                Dispatch(p["step"], (g["step"][0],), grid),
                                reads=(f"{name}/params", state), writes=(state, f"{name}/staging")))
                out.append(Pass(f"{prefix}:commit{k}", Phase.SIMULATE,
                                Dispatch(p["commit"], (g["commit"],), grid),
                                reads=(state, f"{name}/staging"), writes=(state,)))
        def current(key):
            return lambda: g[key][layer.parity % len(g[key])]
        tw, th = layer.texture_size
        texels = (math.ceil(tw / TEXEL_GROUP[0]), math.ceil(th / TEXEL_GROUP[1]), 1)
        if c.trail_color is not None:   # reads the state the step's generations end on
            out.append(Pass(f"{prefix}:trail", Phase.SIMULATE,
                            Dispatch(p["trail"], (current("trail"),), texels),
                            reads=(f"{name}/params", f"{name}/look", state, f"{name}/trail"),
                            writes=(f"{name}/trail",)))
        words = layer.stride * layer.height
        out.append(Pass(f"{prefix}:population", Phase.PREPARE,
                        Dispatch(p["population"], (current("population"),),
                                 self.gpu.grid(math.ceil(words / POPULATION_WORDS))),
                        reads=(state, f"{name}/counters"), writes=(f"{name}/counters",)))
        out.append(Pass(f"{prefix}:display", Phase.RENDER,
                        Dispatch(p["display"], (current("display"),), texels),
                        reads=(state, f"{name}/look", f"{name}/trail"),
                        writes=(f"{name}/image",), order=-100))
        draw, group = self._draw_pipeline(c.display), g["draw"][c.display]
        out.append(Pass(f"{prefix}:draw", Phase.RENDER,
                        Draw(draw, (group,), target="scene", vertices=6),
                        reads=("frame", f"{name}/placement", f"{name}/image"),
                        writes=("scene/color",), order=-100 if c.display == "fill" else 0))
        return out

    def uploaded(self) -> set[str]:
        return {f"{n}/{k}" for n in self.layers
                for k in ("params", "state", "look", "placement", "trail", "counters")}

    def readbacks(self) -> list[Readback]:
        return [Readback(n, "life", f"{n}/counters", layer.buffers["counters"], 0,
                         COUNTERS.itemsize) for n, layer in self.layers.items()]

    def before_step(self, step: StepInfo) -> None:
        for layer in self.layers.values():
            gens = self._gens(layer)
            layer.step_parity = layer.parity
            if layer.component.memory == "pingpong":
                layer.parity = (layer.parity + len(self._plan(layer))) % 2
            layer.generation += gens
            look_key = tuple(getattr(layer.component, f) for f in LOOK_FIELDS)
            if look_key != layer.look_key:   # rewrite only after a live edit
                self._write_look(layer)

    def _write_look(self, layer: _Layer) -> None:
        c = layer.component
        trail_on = c.trail_color is not None
        if trail_on and not layer.trail_on and layer.look_key is not None:
            # nothing aged the trail while it was off: start it dark rather than stale
            trail = layer.buffers["trail"]
            self.device.queue.write_buffer(trail, 0, bytes(trail.size))
        layer.trail_on = trail_on
        layer.look_key = tuple(getattr(c, f) for f in LOOK_FIELDS)
        look = np.zeros((), LOOK)
        look["alive"] = linear_color(c.alive_color)
        look["dead"] = linear_color(c.dead_color)
        if c.trail_color is not None:
            look["trail"] = (*linear_color(c.trail_color)[:3], 1.0)
        look["texture"] = layer.texture_size
        look["trail_fade"] = c.trail_fade
        self.device.queue.write_buffer(layer.buffers["look"], 0, look.tobytes())
        placement = np.zeros((), PLACEMENT)
        if c.display == "quad":
            placement["center"] = (*c.quad_center, 1.0)
            placement["size"] = (*c.quad_size, 0.0, 0.0)
        else:
            placement["size"] = (layer.width, layer.height, 0.0, 0.0)
        self.device.queue.write_buffer(layer.buffers["placement"], 0, placement.tobytes())

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
        nbytes = edits.nbytes
        buffer = layer.buffers.get("paint")
        if buffer is None or buffer.size < nbytes:
            if buffer is not None:
                buffer.destroy()
            capacity = max(256, 1 << (nbytes - 1).bit_length())   # grows by doubling
            buffer = layer.buffers["paint"] = self.storage_buffer(
                f"{entity.name}/paint", capacity, what=f"entity '{entity.name}': life paint")
        self.device.queue.write_buffer(buffer, 0, edits.tobytes())
        pipeline = self.gpu.compute_pipeline("life/paint.wgsl", {"ALIVE": int(bool(alive))})
        state = self.current_buffer(layer)
        group = self.device.create_bind_group(
            label=f"{entity.name}:life:paint", layout=pipeline.get_bind_group_layout(0), entries=[
                {"binding": 0, "resource": {"buffer": buffer, "offset": 0, "size": nbytes}},
                {"binding": 1, "resource": {"buffer": state, "offset": 0, "size": state.size}}])
        self.gpu.dispatch_now(f"{entity.name}:life:paint", pipeline, group,
                              self.gpu.grid(math.ceil(len(edits) / PAINT_GROUP)))

    # inspection --------------------------------------------------------------------------------
    def current_buffer(self, layer: _Layer):
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
        if layer.sweep is not None and out["kernel"] == "sweep":
            out["sweep"] = {"lanes": layer.sweep.lanes, "rows_per_subgroup": layer.sweep.chunk,
                            "generations_per_dispatch": SWEEP_GENS}
        data = readback.get(entity.name)
        if data is not None:
            out["population"] = int(np.frombuffer(data, COUNTERS)[0]["population"])
        return out


set_system("life", LifeSystem)

__all__ = ["LifeSystem", "cells_on_line", "pack_cells", "unpack_cells", "EmberError"]
