"""What a Life layer does around its step: the population count, the trail, and the picture.

  CLEAR     <e>:life:clear        zero the population counter
  SIMULATE  <e>:life:trail        (with a trail_color) the trail ages once per step: 1 where a
                                  cell lives, times trail_fade after (life/trail.wgsl)
  READBACK  <e>:life:population   live cells: workgroup atomics, one global atomic per workgroup
                                  (only on the steps that read the counters back)
  RENDER    <e>:life:display      cells and trail -> the rgba8 storage texture <e>/image (<= 4096
                                  per side); reads only, so drawing never changes the next draw
            <e>:life:draw         the image filling the view or as a world quad, covering what
                                  is behind or added to it (blend)

The passes that read the state hold one binding variant per state buffer (two in pingpong
memory) and bind the one holding the current generation when the frame is encoded. They are all
made once, when the layer is added: a live edit (trail on or off, display mode) picks among them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from emberfx.blocks.sprites import QUAD_BLENDS, quad_queue, quad_target, texture_quad_pipeline
from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase, RenderQueue
from emberfx.core.layout import struct_dtype
from emberfx.model.colors import linear_color

if TYPE_CHECKING:
    import wgpu

    from emberfx.core.bindings import PassBuilder
    from emberfx.core.system import SharedResources
    from emberfx.systems.life.system import LifeLayer

LOOK = struct_dtype("life/look.wgsl", "LifeLook")
PLACEMENT = struct_dtype("common/texture_quad.wgsl", "QuadPlacement")
COUNTERS = struct_dtype("life/population.wgsl", "LifeCounters")
TEXEL_GROUP = wgsl.workgroup_size("life/display.wgsl")[:2]       # also life/trail.wgsl's
POPULATION_WORDS = (wgsl.workgroup_size("life/population.wgsl")[0]
                    * wgsl.int_constant("life/population.wgsl", "WORDS_PER_INVOCATION"))
MAX_TEXTURE = 4096
LOOK_FIELDS = ("alive_color", "dead_color", "trail_color", "trail_fade", "display", "quad_center",
               "quad_size")


def texture_size(width: int, height: int) -> tuple[int, int]:
    """The image (and trail) of a grid: one texel per cell up to MAX_TEXTURE per side."""
    return min(width, MAX_TEXTURE), min(height, MAX_TEXTURE)


@dataclass(frozen=True)
class LayerPasses:
    """A layer's passes other than its step, made once."""
    clear: Pass
    trail: Pass
    population: Pass
    display: Pass
    draw: dict[tuple[str, str], Pass]   # by display mode ("fill", "quad") and blend


def layer_passes(build: PassBuilder, layer: LifeLayer, shared: SharedResources,
                 sampler: wgpu.GPUSampler) -> LayerPasses:
    """The layer's passes other than its step, bound to its registry resources by name."""
    name = layer.entity.name
    r = {k: f"{name}/{k}" for k in ("params", "look", "placement", "counters", "trail", "image")}
    states = [f"{name}/state0"] + ([f"{name}/state1"] if layer.component.memory == "pingpong"
                                   else [])

    def current() -> int:   # the buffer holding the current generation, when encoded
        return layer.parity % len(states)

    tw, th = layer.texture_size
    texels = (math.ceil(tw / TEXEL_GROUP[0]), math.ceil(th / TEXEL_GROUP[1]), 1)
    words = layer.stride * layer.height
    prefix = f"{name}:life"
    # reads the state the step's generations end on
    trail = build.compute(f"{prefix}:trail", Phase.SIMULATE, "life/trail.wgsl", texels,
                          [{"params": r["params"], "look": r["look"], "state": s,
                            "trail": r["trail"]} for s in states], pick=current,
                          does="fades the trail of cells that died, refreshes the living")
    population = build.compute(
        f"{prefix}:population", Phase.READBACK, "life/population.wgsl",
        build.gpu.grid(math.ceil(words / POPULATION_WORDS)),
        [{"params": r["params"], "state": s, "counters": r["counters"]} for s in states],
        pick=current, does="counts the live cells into the counters read back (on the steps "
                           "that read it)")
    display = build.compute(f"{prefix}:display", Phase.RENDER, "life/display.wgsl", texels,
                            [{"params": r["params"], "look": r["look"], "state": s,
                              "trail": r["trail"], "image": r["image"]} for s in states],
                            pick=current, order=RenderQueue.BACKGROUND,
                            does="the cells and their trail as colours of the layer's image")
    draw = {}   # every display and blend: a live edit of either picks another
    for mode, blend in itertools.product(("fill", "quad"), QUAD_BLENDS):
        pipeline = texture_quad_pipeline(build.gpu.device, mode, shared.scene_format,
                                         shared.depth_format, shared.sample_count, blend)
        draw[mode, blend] = build.draw(
            f"{prefix}:draw", "common/texture_quad.wgsl", pipeline,
            {"frame": "frame", "placement": r["placement"], "image": r["image"],
             "nearest": sampler}, vertices=6, order=quad_queue(mode, blend),
            target=quad_target(blend), does=f"the layer's image on its quad ({mode}, {blend})")
    # the count is only ever read back, so it is made only on the steps that read it back; the
    # clear stays at the step's start, where it does not split the step's compute pass
    return LayerPasses(build.clear(f"{prefix}:clear", Phase.CLEAR, r["counters"],
                                   does="zeroes the population counters"), trail,
                       population, display, draw)


def look_record(layer: LifeLayer) -> bytes:
    """life/look.wgsl's LifeLook of the layer's colours and trail."""
    c = layer.component
    look = np.zeros((), LOOK)
    look["alive"] = linear_color(c.alive_color)
    look["dead"] = linear_color(c.dead_color)
    if c.trail_color is not None:
        look["trail"] = (*linear_color(c.trail_color)[:3], 1.0)
    look["texture"] = layer.texture_size
    look["trail_fade"] = c.trail_fade
    return look.tobytes()


def placement_record(layer: LifeLayer) -> bytes:
    """common/texture_quad.wgsl's QuadPlacement: the grid's size (fill) or the world quad."""
    c = layer.component
    placement = np.zeros((), PLACEMENT)
    if c.display == "quad":
        placement["center"] = (*c.quad_center, 1.0)
        placement["size"] = (*c.quad_size, 0.0, 0.0)
    else:
        placement["size"] = (layer.width, layer.height, 0.0, 0.0)
    return placement.tobytes()
