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
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.blocks.textures import sprite_sampler, sprite_texture
from emberfx.core.frame_graph import Folded, Folding, Pass, Phase
from emberfx.core.resources import BufferView
from emberfx.systems.emitter.looks import DRAW, DRAW_SOFT
from emberfx.systems.emitter.structs import BLOCK, BLOCK_WORDS, RECORD
from emberfx.systems.emitter.tuning import EmitterTuning

if TYPE_CHECKING:
    from emberfx.systems.emitter.host import EmitterHost
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


def add_sort_view(system: EmitterHost, name: str, arenas: dict[str, BufferView],
                  offset: int, size: int) -> None:
    """The alpha emitters' segments of batch ``name``'s drawn list (``size`` bytes from
    ``offset``), which their back-to-front sort orders in place of the alive list's."""
    arenas["drawn_sort_values"] = system.resources.view(f"{name}/drawn_list",
                                                        "drawn_sort_values", offset, size)


def sort_inputs(b: dict[str, BufferView]) -> dict[str, BufferView]:
    """What a culling batch's back-to-front sort binds: the drawn list's segments and counts.
    Sorting the kept entries gives the kept entries of the sorted alive list, in the same order
    (the sort orders by key, then value: deterministic), so the image is the same, and it sorts
    only what is drawn."""
    return {**b, "sort_values": b["drawn_sort_values"], "alive_total": b["drawn_total"]}


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


def sorted_in_drawn_list(b: dict[str, BufferView], sort: list[Pass]) -> list[Pass]:
    """The sort's passes declaring that writing the drawn list's segments writes the drawn
    list, which the draws read."""
    view = b["drawn_sort_values"].name
    return [replace(p, writes=(*p.writes, b["drawn_list"].name)) if view in p.writes else p
            for p in sort]


def drawn(b: dict[str, BufferView]) -> dict[str, BufferView]:
    """What a batch's draws bind: its drawn list and arguments where it culls."""
    if "drawn_list" not in b:
        return b
    return {**b, "alive_list": b["drawn_list"], "draw_args": b["drawn_args"]}
