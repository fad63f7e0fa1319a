"""Culling a batch's sprites before its draws: the draws launch only the sprites that cover a
pixel centre of the target, with the same image.

Where few units run the graphics pipeline (the H200 has two graphics-capable TPCs), a sprite's
cost is launching its vertices, whether or not it covers a pixel: 1M unindexed sprites of a pixel
or less cost ~4.5 ms there however cheap their vertex shader is.
Per render, a batch whose alive list has at least ``cull_from`` entries (the system's tuning,
systems/emitter/tuning.py) runs three steps in the
RENDER phase, before its back-to-front sort:

  <batch>:emitter:cull          emitter/cull.wgsl: a bit per alive-list entry, set when the
                                sprite's window-space box (grown for the rasteriser's sub-pixel
                                snapping) holds a pixel centre; a count per block of 256 entries
  <batch>:emitter:drawn:scan:*  the PrefixScan of those counts
  <batch>:emitter:cull_compact  emitter/cull_compact.wgsl: each emitter's kept entries, in order,
                                packed from its alive_base into <batch>/drawn_list, and its
                                drawIndexedIndirect arguments in <batch>/drawn_args

and its draws bind drawn_list in place of the alive list and draw_args (drawIndexedIndirect's, as
every sprite draw's: runtime/blocks/sprites.py) from drawn_args.
Its alpha emitters' sort then orders their drawn lists (counts in <batch>/drawn_total), not their
alive lists: the same entries in the same order as sorting first and culling after, for a
fraction of the work.
A dropped sprite covers no pixel centre, so the rasteriser would shade none of it: the images
are byte-identical (tests/test_emitter_culling.py), and the alive list, draw_args and every other
reader of them (trails, meshes, state()) are untouched.

Batches with draw modifiers (a `size` expression, `color` modifiers) are not culled: the cull
pass runs the plain billboard code. Lone emitters are not culled (their draws are one pool's).

What the feature adds, and where (emitter/features.py lists the features):
  applies        every emitter; whether a batch culls is decided per batch (its arenas)
  batch key      nothing
  arenas         ``drawn_list``, ``drawn_mask``, ``drawn_block``, ``drawn_args``,
                 ``drawn_total``, where the batch culls (``culls``)
  simulation     ``drawn_sort_values``: the alpha emitters' segments of the drawn list
  render passes  the cull, the scan and the compaction above, before the sort
  sort inputs    the drawn list's segments and counts; the sort's passes declare that they
                 write the drawn list
  draw inputs    the drawn list and the drawn arguments
The simulation passes and their shaders are untouched.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.blocks.textures import sprite_sampler, sprite_texture
from emberfx.core.frame_graph import Folded, Folding, Pass, Phase
from emberfx.core.resources import BufferView
from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.looks import DRAW, DRAW_SOFT
from emberfx.systems.emitter.structs import BLOCK, BLOCK_WORDS, RECORD
from emberfx.systems.emitter.tuning import EmitterTuning

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.layout import Layout
    from emberfx.systems.emitter.pool import Pool

CULL, COMPACT = "emitter/cull.wgsl", "emitter/cull_compact.wgsl"


def culls(tuning: EmitterTuning, members: list[Pool], entries: int) -> bool:
    """Whether a batch of ``members`` with ``entries`` alive-list entries culls its sprites
    (from ``tuning.cull_from`` entries; None: never)."""
    return tuning.cull_from is not None and entries >= tuning.cull_from and all(
        p.shader(DRAW) == DRAW and p.shader(DRAW_SOFT) == DRAW_SOFT for p in members)


def arena_sizes(entries: int, emitters: int) -> dict[str, tuple[int, int]]:
    """Byte sizes and usages of the culling arenas of a batch (``entries`` alive-list entries,
    a whole number of blocks)."""
    storage = wgpu.BufferUsage.STORAGE
    blocks = entries // BLOCK
    return {"drawn_list": (entries * 4, storage),
            "drawn_mask": (blocks * BLOCK_WORDS * 4, storage),
            "drawn_block": (blocks * 4, storage),
            "drawn_args": (emitters * RECORD, storage | wgpu.BufferUsage.INDIRECT),
            "drawn_total": (emitters * RECORD, storage)}


def cull_passes(system: EmitterHost, name: str, b: dict[str, BufferView]) -> list[Pass]:
    """The cull, scan and compaction of batch ``name`` (its arenas ``b``)."""
    blocks = b["drawn_block"].size // 4
    grid = system.gpu.grid(blocks)
    prefix = f"{name}:emitter"
    device = system.device
    cull = system.build.compute(
        f"{prefix}:cull", Phase.RENDER, CULL, grid,
        {"frame": "frame", "emitters": b["params"], "particles": b["particles"],
         "alive_list": b["alive_list"], "looks": b["looks"], "sprite_looks": b["sprite_look"],
         "sprite_texture": sprite_texture(device, "dot"), "sprite_sampler": sprite_sampler(device),
         "list_owner": b["list_owner"], "alive_totals": b["alive_total"],
         "drawn_mask": b["drawn_mask"], "drawn_block": b["drawn_block"]},
        does="marks the alive particles whose sprites this frame's camera sees, counts per block")
    scan = PrefixScan(system.build, f"{prefix}:drawn", b["drawn_block"], blocks)
    compact = system.build.compute(
        f"{prefix}:cull_compact", Phase.RENDER, COMPACT, grid,
        {"emitters": b["params"], "alive_list": b["alive_list"], "list_owner": b["list_owner"],
         "alive_totals": b["alive_total"], "drawn_mask": b["drawn_mask"],
         "drawn_offset": b["drawn_block"], "drawn_sum": scan.total,
         "drawn_list": b["drawn_list"], "drawn_args": b["drawn_args"],
         "drawn_totals": b["drawn_total"]},
        does="the list of the particles in view",
        folded=(Folded(Phase.PREPARE, Folding.IN_PASS,
                       f"{b['drawn_args'].name}: the drawIndirect arguments of what is in view "
                       f"(they follow this frame's camera)"),))
    if "drawn_sort_values" in b:   # the sort reads the list through its view: say so
        compact = replace(compact, writes=(*compact.writes, b["drawn_sort_values"].name))
    return [cull, *scan.passes(Phase.RENDER), compact]


class CullingFeature(EmitterFeature):
    """The feature as emitter/features.py runs it; it acts only on the simulations that have
    its arenas (``drawn_list``)."""
    name = "culling"

    def applies(self, component) -> bool:
        return True   # (whether a batch culls: arenas, from its members and its size)

    def arenas(self, system: EmitterHost, members: list[Pool],
               layout: Layout) -> dict[str, tuple[int, int]]:
        if not culls(system.tuning, members, layout.entries):
            return {}
        return arena_sizes(layout.entries, len(members))

    def simulation(self, system: EmitterHost, pool: Pool, sim: Simulation) -> None:
        """The alpha emitters' segments of the drawn list (where the alive list's are), which
        their back-to-front sort orders in place of the alive list's."""
        b = sim.buffers
        if "drawn_list" in b and "sort_values" in b:
            alive = b["sort_values"]
            b["drawn_sort_values"] = system.resources.view(
                f"{sim.name}/drawn_list", "drawn_sort_values", alive.offset, alive.size)

    def render_passes(self, system: EmitterHost, pool: Pool, sim: Simulation) -> list[Pass]:
        if "drawn_list" not in sim.buffers:
            return []
        return cull_passes(system, sim.name, sim.buffers)

    def sort_inputs(self, buffers: dict[str, BufferView]) -> dict[str, BufferView]:
        """The drawn list's segments and counts. Sorting the kept entries gives the kept
        entries of the sorted alive list, in the same order (the sort orders by key, then
        value: deterministic), so the image is the same, and it sorts only what is drawn."""
        if "drawn_sort_values" not in buffers:
            return {}
        return {"sort_values": buffers["drawn_sort_values"],
                "alive_total": buffers["drawn_total"]}

    def sort_passes(self, buffers: dict[str, BufferView], passes: list[Pass]) -> list[Pass]:
        """Writing the drawn list's segments writes the drawn list, which the draws read."""
        if "drawn_sort_values" not in buffers:
            return passes
        view = buffers["drawn_sort_values"].name
        return [replace(p, writes=(*p.writes, buffers["drawn_list"].name))
                if view in p.writes else p for p in passes]

    def draw_inputs(self, buffers: dict[str, BufferView]) -> dict[str, BufferView]:
        if "drawn_list" not in buffers:
            return {}
        return {"alive_list": buffers["drawn_list"], "draw_args": buffers["drawn_args"]}
