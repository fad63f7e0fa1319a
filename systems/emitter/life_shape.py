"""The Life emission shape, an emitter feature: ``shape = { kind = "life", layer = "wall",
on = "birth" }``.

Births come from the cells of a Life layer placed in the world (``display = "quad"``): each
birth picks one eligible cell uniformly at random and a uniform point of that cell's square in
the layer's plane (the quad at ``quad_center`` of ``quad_size``, row 0 at the top), whatever the
emitter's ``position``. Eligible: ``on = "alive"``, alive now; ``on = "birth"``, alive now and
dead in the previous displayed state, the state one simulation step ago, however many
generations the layer ran in between (``steps_per_frame``, several per dispatch or not). A step
with no eligible cell drops its births (they are born dead, lifetime 0). The first step after the
emitter is made has no previous state and lists no births.

What the feature adds, and where (emitter/features.py lists the features):
  applies      shape.kind == "life"
  batch key    none: the emitter runs alone (its list is its own)
  buffers      ``life_shape`` (emitter/life_shape_types.wgsl LifeShape: the placement, the
               mode, the count and the eligible cells' list, one word per cell of the layer) and
               ``life_previous`` (the layer's state as the last step left it), made with the
               simulation, sized by the layer
  WGSL         emitter/life_shape.wgsl in place of emitter/life_hook.wgsl in BIRTH_PASSES
  bindings     ``life_shape`` in those passes
  passes       ``<e>:emitter:life_cells`` before the births (emitter/life_cells.wgsl): reads the
               layer's current state buffer, lists the eligible cells in cell order (a scan, no
               atomics: two runs give the same bytes), then keeps the state as the previous one.
               The frame graph runs it after the layer's step (it reads what the step writes).
  upload       the placement and mode, each step (the quad and `on` are live)
The emitter's own copy of the previous state is why pingpong and in-place layers give the same
births: the layer itself keeps only what its step needs.

This module imports nothing of the Life system: it reads the layer's public fields through the
world query, its buffers by resource name, and which pingpong buffer is current through the
layers the Life system announces (LIFE_LAYERS).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, cast

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.errors import SceneError
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.shader_names import BIRTH_PASSES
from emberfx.systems.life.component import LIFE_LAYERS

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

HOOK = "emitter/life_hook.wgsl"
LIFE_SHAPE = "emitter/life_shape.wgsl"
TYPES = "emitter/life_shape_types.wgsl"
CELLS = "emitter/life_cells.wgsl"
HEADER = struct_dtype(TYPES, "LifeShapeHeader")   # the fields before the list
ON = wgsl.enum_constants(TYPES, "LIFE_ON")  # "birth" / "alive" -> LifeShape.on
BUFFER, PREVIOUS = "life_shape", "life_previous"
COUNT_OFFSET = int(cast(dict, HEADER.fields)["count"][1])   # the host writes the fields before it
STORAGE = wgpu.BufferUsage.STORAGE


def layer_component(system, name: str | None):
    """The life component of entity ``name``, or None where it has none."""
    return next((c for ref, c in system.query("life") if ref.name == name), None)


def layer_problem(system, shape) -> str | None:
    """Why the shape's layer cannot give births, as "shape.<field>: ...", or None."""
    life = layer_component(system, shape.layer)
    if life is None:
        names = [ref.name for ref, _ in system.query("life")]
        close = difflib.get_close_matches(shape.layer or "", names, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return (f"shape.layer: expected an entity with a life component, found "
                f"'{shape.layer}'{hint}")
    if life.display == "fill":
        return (f'shape.layer: expected a layer placed in the world (display = "quad"), found '
                f"'{shape.layer}' with display = \"fill\" (it covers the view, it has no place "
                f"in the world)")
    return None


def header(life, on: str) -> bytes:
    """The LifeShape fields the host writes: the placement and the mode (the list pass keeps
    its own words as they are: only the first 48 bytes up to `count` are written)."""
    rec = np.zeros((), HEADER)
    width, height = life.size
    cx, cy, cz = life.quad_center
    sx, sy = life.quad_size
    rec["corner"][:3] = (cx - 0.5 * sx, cy + 0.5 * sy, cz)
    rec["cell"][:2] = (sx / width, sy / height)
    rec["width"], rec["height"], rec["stride"] = width, height, (width + 31) // 32
    rec["on"] = ON[on]
    return rec.tobytes()[:COUNT_OFFSET]


class LifeShapeFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "life_shape"

    def applies(self, component) -> bool:
        return component.shape.kind == "life"

    def batch_key(self, component, resolve) -> tuple | None:
        return None

    def includes(self, base: str) -> dict[str, str]:
        return {HOOK: LIFE_SHAPE} if base in BIRTH_PASSES else {}

    def bindings(self, base: str, buffers: dict) -> dict:
        return {BUFFER: buffers[BUFFER]} if base in BIRTH_PASSES else {}

    def simulation(self, system: EmitterHost, pool: Pool, sim: Simulation) -> None:
        shape = pool.component.shape
        life = layer_component(system, shape.layer)
        problem = layer_problem(system, shape)
        if problem is not None and life is not None:   # (a missing one: the loader says so)
            field, _, why = problem.partition(": ")
            raise SceneError(system.shared.scene_path, why, entity=pool.entity.name,
                             field=f"emitter.{field}")
        # a layer deleted while the emitter runs: an empty list, every birth dropped, until a
        # layer of that name comes back (stale() then builds the emitter again)
        width, height = (0, 0) if life is None else life.size
        words = (width + 31) // 32 * height
        system.gpu.check_buffer_size(HEADER.itemsize + 4 * width * height,
                                     f"entity '{pool.entity.name}': emitter.shape.layer "
                                     f"'{shape.layer}' ({width}x{height} cells, one word each)")
        b = sim.buffers
        # the list rounded up to the struct's 16-byte alignment (WGSL's minimum binding size)
        b[BUFFER] = system.buffer(pool.entity, BUFFER,
                                  HEADER.itemsize + -(-4 * max(1, width * height) // 16) * 16,
                                  STORAGE)
        b[PREVIOUS] = system.buffer(pool.entity, PREVIOUS, 4 * max(1, words), STORAGE)
        rec = np.zeros((), HEADER)
        rec["words"] = words
        system.resources.write(b[BUFFER], rec.tobytes())
        sim.parts[self.name] = LayerLink(shape.layer or "", (width, height),
                                         system.resources.get(f"{shape.layer}/state0"))

    def step_passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass]) -> list[Pass]:
        name = f"{sim.name}:emitter:life_cells"
        passes = [p for p in passes if p.name != name]
        link = sim.parts.get(self.name)
        if not isinstance(link, LayerLink):
            return passes
        states = [system.resources.get(f"{link.layer}/state{k}") for k in (0, 1)]
        if states[0] is None:
            return passes   # the layer is not made yet: nothing is listed, nothing born
        life = layer_component(system, link.layer)
        if life is None or tuple(life.size) != link.size:
            return passes   # gone, or made anew at another size: this emitter is rebuilt
        b = sim.buffers
        variants = [{"shape": b[BUFFER], "state": s, "previous": b[PREVIOUS]}
                    for s in states if s is not None]
        listing = system.build.compute(
            name, Phase.SIMULATE, CELLS, (1, 1, 1), variants,
            pick=lambda: min(link.parity(system), len(variants) - 1),
            does=f"lists the cells of '{link.layer}' that births come from (born since the "
                 f"previous step, or alive), in cell order; keeps the state as the previous")
        return [listing, *passes]

    def stale(self, system: EmitterHost, pool: Pool) -> bool:
        """The layer was made (after the emitter), made anew (a reload, a new size) or deleted
        since the emitter bound its state: the emitter is built again (a deleted layer is then
        the scene error an unknown one is)."""
        link = None if pool.sim is None else pool.sim.parts.get(self.name)
        if not isinstance(link, LayerLink):
            return False
        life = layer_component(system, link.layer)
        if life is None:   # deleted: rebuilt once, without a layer
            return link.size != (0, 0)
        return (tuple(life.size) != link.size
                or system.resources.get(f"{link.layer}/state0") is not link.bound)

    def upload(self, system: EmitterHost, pool: Pool, acting: list) -> None:
        sim = pool.sim
        link = None if sim is None else sim.parts.get(self.name)
        if not isinstance(link, LayerLink) or sim is None:
            return
        life = layer_component(system, link.layer)
        if life is None or tuple(life.size) != link.size:
            return
        data = header(life, pool.component.shape.on)
        if data != link.written:
            system.resources.write(sim.buffers[BUFFER], data)
            link.written = data


class LayerLink:
    """An emitter's hold on its Life layer: its name, size and first state buffer as the
    emitter's buffers were made, the header last written, and the Life system's announced
    layers (found on first use)."""

    def __init__(self, layer: str, size: tuple[int, int], bound):
        self.layer = layer
        self.size = size
        self.bound = bound   # the layer's state0 view when the emitter was made (or None)
        self.written = b""
        self.layers = None

    def parity(self, system) -> int:
        """Which of the layer's state buffers holds its current state (0 in place)."""
        if self.layers is None:
            found: list = []
            system.shared.events.set_handler(LIFE_LAYERS, found.append)
            system.shared.events.remove_handler(LIFE_LAYERS, found.append)
            self.layers = found[0] if found else None
        layer = None if self.layers is None else self.layers.get(self.layer)
        return 0 if layer is None else layer.parity
