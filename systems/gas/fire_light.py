"""The fire of a gas as a point light (``look.fire_light`` > 0): two RENDER passes, before the
scene's lights are culled (core/point_lights.py), that sum each cell's glow on the GPU
(shaders/gas/light_sum.wgsl: fire_intensity x blackbody x the cell's volume, and its
luminance-weighted centre) and append one light at that centre, coloured by the sum times
``fire_light``, with range ``fire_light_range`` (shaders/gas/light.wgsl). Nothing is read back:
the light flickers with the fire each frame."""

from __future__ import annotations

import math
from dataclasses import replace

from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.point_lights import COUNTS, LIGHT_ORDER, LIGHTS

SUM = "gas/light_sum.wgsl"
GROUP = wgsl.int_constant(SUM, "WORKGROUP_SIZE")
PARTIAL_BYTES = 32   # two vec4f per workgroup


def partials_size(gpu, cells: int) -> int:
    """Bytes of the partials buffer: one entry per workgroup the sum dispatches."""
    x, y, z = gpu.grid(math.ceil(cells / GROUP))
    return PARTIAL_BYTES * x * y * z


def light_passes(system, name: str, cells: int, b: dict) -> list[Pass]:
    """The passes of gas ``name`` of ``cells`` cells whose buffers are ``b`` (``params``,
    ``look``, ``scalars``, ``blackbody`` and ``light_partials`` of ``partials_size``)."""
    made = [
        system.build.compute(
            f"{name}:gas:light:sum", Phase.RENDER, SUM,
            system.gpu.grid(math.ceil(cells / GROUP)),
            {"params": b["params"], "look": b["look"], "scalars": b["scalars"],
             "blackbody": b["blackbody"], "partials": b["light_partials"]},
            does="each workgroup's fire glow and its luminance-weighted centre"),
        system.build.compute(
            f"{name}:gas:light", Phase.RENDER, "gas/light.wgsl", (1, 1, 1),
            {"look": b["look"], "partials": b["light_partials"], "light_counts": COUNTS,
             "point_lights": LIGHTS},
            does="the fire as one point light, appended to the scene's lights")]
    return [replace(p, order=LIGHT_ORDER) for p in made]
