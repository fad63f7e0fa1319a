"""The emitters' render passes: the alpha emitters' back-to-front sort and the sprites' draws,
one per lone pool and one per run of batched emitters (the step's passes: step.py)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from emberfx.blocks.sort import KeySort
from emberfx.blocks.sprites import SPRITE_INDICES, sprite_indices, sprite_pipeline, sprite_queue
from emberfx.blocks.textures import sprite_sampler
from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView
from emberfx.systems.emitter import features
from emberfx.systems.emitter.looks import DRAW, DRAW_SOFT, textured
from emberfx.systems.emitter.structs import RECORD

if TYPE_CHECKING:
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

DEPTH_GROUP = wgsl.workgroup_size("emitter/depth.wgsl")[0]   # alive entries per depth workgroup
DEPTH_PARAMS = struct_dtype("emitter/depth.wgsl", "DepthParams")


def alpha_sort(system: EmitterHost, owner: str, b: dict[str, BufferView], segment: int,
               first_owner: int, segments: int) -> list[Pass]:
    """Back to front by this frame's camera: depth keys, then the sort of the alive lists in
    ``segments`` segments of ``segment`` entries (``b["sort_values"]``), segment s holding
    emitter first_owner + s's (one segment: an emitter alone)."""
    record = np.zeros((), DEPTH_PARAMS)
    record["segment"], record["first_owner"], record["segments"] = (segment, first_owner,
                                                                    segments)
    system.resources.write(b["depth_params"], record.tobytes())
    prefix = f"{owner}:emitter"
    depth = system.build.compute(
        f"{prefix}:depth", Phase.RENDER, "emitter/depth.wgsl",
        system.gpu.grid(math.ceil(segment * segments / DEPTH_GROUP)),
        {"frame": "frame", "particles": b["particles"], "alive_list": b["sort_values"],
         "alive_totals": b["alive_total"], "keys": b["sort_keys"], "emitters": b["params"],
         "depth_params": b["depth_params"]},
        does="each alive particle's distance from this frame's camera, the back-to-front keys")
    sort = KeySort(system.build, prefix, b["sort_keys"], b["sort_values"], segment,
                   count=(b["alive_total"], first_owner * RECORD),
                   segments=segments, count_stride=RECORD if segments > 1 else 0)
    return [depth, *sort.passes(Phase.RENDER)]



def _draw_pipeline(system: EmitterHost, component, shader: str):
    soft = component.soft > 0.0
    fragment = ("fs_soft" if soft else "fs") + ("_textured" if textured(component) else "")
    return sprite_pipeline(system.device, shader, component.blend,
                           system.shared.scene_format, system.shared.depth_format, fragment)

def draw_pass(system: EmitterHost, name: str, pool: Pool, b: dict[str, BufferView],
              records: list[int]) -> Pass:
    """The sprites' draw of ``pool`` and the emitters drawn with it (``records``: their
    indices in the batch whose arenas ``b`` holds; a lone pool: its own buffers, [0]), one
    drawIndirect each; soft ones read this frame's opaque depth, so they draw after every
    opaque draw, in a pass whose depth attachment is read-only."""
    component, texture = pool.component, pool.texture
    soft = component.soft > 0.0
    shader = pool.shader(DRAW_SOFT if soft else DRAW)
    bindings = {"frame": "frame", "emitters": b["params"], "particles": b["particles"],
                "alive_list": b["alive_list"], "looks": b["looks"],
                "sprite_looks": b["sprite_look"], "sprite_texture": texture,
                "sprite_sampler": sprite_sampler(system.device), "list_owner": b["list_owner"],
                **features.part_bindings(pool, DRAW_SOFT if soft else DRAW),
                **features.bindings(component, DRAW_SOFT if soft else DRAW, b)}
    if soft:
        bindings["scene_depth"] = "scene/depth"
    offsets = [k * RECORD for k in records]
    return system.build.draw(name, shader, _draw_pipeline(system, component, shader), bindings,
                             indirect=(b["draw_args"], offsets[0]), depth_read_only=soft,
                             index=(sprite_indices(system.resources, system.key), "uint32",
                                    len(SPRITE_INDICES)),
                             order=sprite_queue(component.blend, component.soft),
                             more_indirect=tuple(offsets[1:]),
                             does=f"camera-facing sprites of the alive list, {component.blend} "
                                  f"blend" + (", soft against the scene's depth" if soft else "")
                                  + (f" (one drawIndexedIndirect each for {len(records)} "
                                     f"emitters)" if len(records) > 1
                                     else " (drawIndexedIndirect)"))


def draw_signature(pool: Pool) -> tuple:
    """What two emitters' draws must share to be one Pass (pipeline, shader, texture)."""
    c = pool.component
    return (pool.shader(DRAW_SOFT if c.soft > 0.0 else DRAW), c.blend, c.soft > 0.0,
            textured(c), id(pool.texture))


def lone_draw_pass(system: EmitterHost, pool: Pool) -> Pass:
    """The draw of an emitter alone: its own buffers, one record."""
    return draw_pass(system, f"{pool.entity.name}:emitter:draw", pool, pool.buffers, [0])


def draw_runs(system: EmitterHost, order: list[Pool]) -> dict[int, Pass]:
    """One draw Pass per run of batched emitters that follow each other among the draws of
    their render queue (``order``: the pools in the order their draws are declared) and share a
    batch and a draw signature, keyed by the id of the run's first pool: one bind group for all,
    one drawIndirect each. A lone emitter's draw in the same queue ends a run, so every draw
    keeps its place and a batched frame blends in the same order as the emitters alone.
    Cached until the pools or batches change."""
    key = tuple((id(p), id(p.batch)) for p in order)
    if system.runs[0] == key:
        return system.runs[1]
    open_runs: dict[int, tuple] = {}   # queue order -> (batch, signature, members)
    runs: list[tuple] = []
    for pool in order:
        queue = sprite_queue(pool.component.blend, pool.component.soft)
        if pool.batch is None:
            for p in pool.passes:   # a lone draw in a queue keeps its place there
                if p.phase == Phase.RENDER and p.kind == "render":
                    open_runs.pop(p.order, None)
            continue
        signature = draw_signature(pool)
        run = open_runs.get(queue)
        if run is not None and run[0] is pool.batch and run[1] == signature:
            run[2].append(pool)
        else:
            run = open_runs[queue] = (pool.batch, signature, [pool])
            runs.append(run)
    passes = {}
    for batch, _, members in runs:
        first = members[0]
        b = features.draw_inputs(first.component, batch.sim.buffers)
        passes[id(first)] = draw_pass(
            system, f"{first.entity.name}:emitter:draw", first, b, [p.member for p in members])
    system.runs = (key, passes)
    return passes
