"""How a Life layer steps: the choice of step kernel, its workgroup grid, and its passes.

  pingpong  <e>:life:sweep<k>   SWEEP_GENS generations per dispatch (life/step_sweep.wgsl, or
                                life/step_sweep_neighbours.wgsl), where the device has subgroups
            <e>:life:step<k>    one generation per dispatch: life/step_quad.wgsl when the width is
                                a multiple of 128, else life/step.wgsl
            Each dispatch reads state<p> and writes state<1 - p>: the pass holds both binding
            variants and picks one by the parity of the step and its index k.
  inplace   <e>:life:step<k>    one buffer: tile + halo in workgroup memory, tile borders to the
                                staging buffer (life/step_inplace.wgsl)
            <e>:life:commit<k>  the staged borders back into the state (life/tile_commit.wgsl)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from emberfx.core import wgsl
from emberfx.core.errors import UsageError
from emberfx.core.frame_graph import Pass, Phase

if TYPE_CHECKING:
    from emberfx.core.bindings import PassBuilder
    from emberfx.core.gpu import GpuContext
    from emberfx.systems.life.system import LifeLayer

TILE_W, TILE_H, BORDER_SLOTS = (wgsl.int_constant("life/tile.wgsl", k)
                                for k in ("TILE_W", "TILE_H", "BORDER_SLOTS"))
STEP_ROWS = 16                                     # rows per invocation of the step kernels
# The pingpong kernels, fastest first: "sweep" (several generations per dispatch, needs
# subgroups; counts 3x3 block totals), "sweep_neighbours" (the same sweep with the 8-neighbour
# count: the sweep's baseline in `emberfx bench life`), "quad" (one generation, four words per
# invocation, widths that are multiples of 128) and "word" (one generation, one word per
# invocation, any width). The component's ``kernel`` field picks where to start ("auto": the
# first); each falls back to the next where it cannot run.
PINGPONG_KERNELS = ("sweep", "sweep_neighbours", "quad", "word")
SWEEP_KERNELS = ("sweep", "sweep_neighbours")   # several generations per dispatch, one layout
SWEEP_GENS = 8          # generations per dispatch of life/step_sweep.wgsl (at most MAX_SWEEP_GENS)
MAX_SWEEP_GENS = min(wgsl.int_constant(f"life/step_{k}.wgsl", "MAX_GENS") for k in SWEEP_KERNELS)
SWEEP_GROUP = wgsl.workgroup_size("life/step_sweep.wgsl")[0]   # invocations per sweep workgroup
STEP_GROUP = {"word": wgsl.workgroup_size("life/step.wgsl")[0],
              "quad": wgsl.workgroup_size("life/step_quad.wgsl")[0]}
SWEEP_CHUNKS = (256, 128, 64)   # rows per subgroup, the largest that keeps the GPU busy
SWEEP_BUSY_SUBGROUPS = 8192     # ... meaning this many subgroups (a hardware GPU)
STEP_SHADERS = {"sweep": "life/step_sweep.wgsl",
                "sweep_neighbours": "life/step_sweep_neighbours.wgsl",
                "quad": "life/step_quad.wgsl", "word": "life/step.wgsl"}


def uses_quads(width: int) -> bool:
    """Whether a pingpong layer of this width can step with life/step_quad.wgsl (four whole words
    per invocation): rows of whole 128-cell groups, so no ragged word and no partial group."""
    return width % 128 == 0


@dataclass(frozen=True)
class Sweep:
    """How the sweep kernels cover one layer: subgroups of `lanes` word columns, `halo` of
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
    if kernel not in SWEEP_KERNELS:
        return [1] * generations
    whole, rest = divmod(generations, SWEEP_GENS)
    return [SWEEP_GENS] * whole + ([rest] if rest else [])


def choose_kernel(gpu: GpuContext, layer: LifeLayer) -> None:
    """The component's ``kernel`` where the layer and device allow it, else the next of
    PINGPONG_KERNELS that runs ("auto": the fastest that runs)."""
    torus = layer.component.topology == "torus"
    busy = 1 if gpu.is_software else SWEEP_BUSY_SUBGROUPS   # lavapipe: few, long sweeps
    chosen = layer.component.kernel
    wanted: str = PINGPONG_KERNELS[0] if chosen == "auto" else chosen
    layer.sweep = (plan_sweep(gpu.subgroup_size, layer.width, layer.height, torus, busy)
                   if wanted in SWEEP_KERNELS else None)
    layer.kernel = (wanted if layer.sweep else
                    "quad" if wanted != "word" and uses_quads(layer.width) else "word")


def step_grid(gpu: GpuContext, layer: LifeLayer) -> tuple[int, int, int]:
    """The workgroup grid of each of the layer's step dispatches."""
    if layer.component.memory == "inplace":
        return gpu.grid(layer.tiles)
    if layer.kernel in SWEEP_KERNELS:
        assert layer.sweep is not None   # the sweep kernel is chosen with its plan
        return layer.sweep.grid(layer.stride, layer.height)
    across = 4 if layer.kernel == "quad" else 1     # words per invocation
    return (math.ceil(layer.stride / across / STEP_GROUP[layer.kernel]),
            math.ceil(layer.height / STEP_ROWS), 1)


def step_passes(build: PassBuilder, layer: LifeLayer, generations: int) -> list[Pass]:
    """The SIMULATE passes advancing the layer ``generations`` generations in one step. Those of
    each (dispatch index, generations per dispatch) are made once and kept on the layer, so a
    live edit of steps_per_frame back to an earlier value makes no bind groups."""
    inplace = layer.component.memory == "inplace"
    keys = ([(k, 1) for k in range(generations)] if inplace
            else list(enumerate(pingpong_plan(layer.kernel, generations))))
    out: list[Pass] = []
    for key in keys:
        made = layer.step_passes.get(key)
        if made is None:
            make = _inplace_passes if inplace else _pingpong_passes
            made = layer.step_passes[key] = make(build, layer, *key)
        out += made
    return out


def _pingpong_passes(build: PassBuilder, layer: LifeLayer, k: int, gens: int) -> tuple[Pass]:
    """Dispatch k of a step, advancing ``gens`` generations from state<p> into state<1 - p>."""
    name = layer.entity.name
    constants = dict(layer.constants)
    if layer.kernel in SWEEP_KERNELS:
        if not 1 <= gens <= MAX_SWEEP_GENS:   # GENS is an override: no const_assert sees it
            raise UsageError(f"entity '{name}': {STEP_SHADERS[layer.kernel]} advances 1 to "
                             f"MAX_GENS = {MAX_SWEEP_GENS} generations per dispatch, "
                             f"asked for GENS = {gens}")
        sweep, torus = layer.sweep, layer.component.topology == "torus"
        assert sweep is not None   # the sweep kernel is chosen with its plan
        ragged = layer.width % 32 != 0
        constants.update(GENS=gens, CHUNK=sweep.chunk, HALO=sweep.halo, TORUS=torus,
                         RAGGED_TORUS=torus and ragged)
        if layer.kernel == "sweep":
            constants["MASKED"] = ragged or not torus
    else:
        constants["ROWS"] = STEP_ROWS
    params = f"{name}/params"
    states = (f"{name}/state0", f"{name}/state1")
    if layer.kernel == "quad":   # reads its input twice: as vec4 groups and as the words beside
        variants = [{"params": params, "quads_in": states[p], "quads_out": states[1 - p],
                     "words_in": states[p]} for p in (0, 1)]
    else:
        variants = [{"params": params, "state_in": states[p], "state_out": states[1 - p]}
                    for p in (0, 1)]

    def pick(k: int = k) -> int:   # the buffer this dispatch starts from, when it is encoded
        return (layer.step_parity + k) % 2

    kind = "sweep" if layer.kernel in SWEEP_KERNELS else "step"
    return (build.compute(f"{name}:life:{kind}{k}", Phase.SIMULATE, STEP_SHADERS[layer.kernel],
                          layer.grid, variants, constants=constants, pick=pick,
                          does=f"{gens} generation{'s' if gens != 1 else ''} of the bit-packed "
                               f"cells ({layer.kernel} kernel), one state buffer to the other"),)


def _inplace_passes(build: PassBuilder, layer: LifeLayer, k: int, gens: int) -> tuple[Pass, Pass]:
    """Generation k of a step on the one state buffer: the step, then the commit of its
    staged tile borders (``gens`` is always 1)."""
    name = layer.entity.name
    bound = {"params": f"{name}/params", "state": f"{name}/state0",
             "staging": f"{name}/staging"}
    return (build.compute(f"{name}:life:step{k}", Phase.SIMULATE, "life/step_inplace.wgsl",
                          layer.grid, bound, constants=layer.constants,
                          does="the next generation in place, tile borders to the staging "
                               "buffer"),
            build.compute(f"{name}:life:commit{k}", Phase.SIMULATE, "life/tile_commit.wgsl",
                          layer.grid, bound, constants=layer.constants,
                          does="copies the staged tile borders into the state"))
