"""Post-processing components: ``edge_detect`` (a Sobel filter),
``bloom`` and ``tonemap``. Put them on one or more entities; they run on the
scene's HDR image in the order they are declared in the scene file (entity by entity, and in each
entity table by table), before the image goes to the window or the capture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live
from emberfx.model.registry import component

NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]
HALF_MAX = 65504.0
"""the largest value of the scene's HDR image (rgba16float): a larger gain or threshold only
turns lit pixels into infinities, and infinities into NaN after tone mapping"""
_GAIN = msgspec.Meta(le=HALF_MAX, description="the scene image is 16-bit float, at most 65504")
Gain = Annotated[float, msgspec.Meta(ge=0.0), _GAIN]


@component("edge_detect")
@dataclass(slots=True)
class EdgeDetect(Tracked):
    """Sobel edges of the luminance; each workgroup works on a tile + halo in workgroup memory."""
    strength: Gain = live(1.0)
    """scale of the gradient magnitude before it is mixed in"""
    color: str = live("#ffffff")
    mode: Literal["overlay", "edges"] = live("overlay")
    """overlay: edges drawn over the image; edges: the edges alone"""

    def __post_init__(self):
        check_colors(self, "color")


@component("bloom")
@dataclass(slots=True)
class Bloom(Tracked):
    threshold: Gain = live(1.0)
    """linear brightness above which light blooms"""
    intensity: Gain = live(0.6)
    radius: Annotated[int, msgspec.Meta(ge=1, le=32)] = live(8)
    """blur radius in half-resolution pixels (Gaussian, sigma = radius / 2)"""


@component("tonemap")
@dataclass(slots=True)
class Tonemap(Tracked):
    operator: Literal["aces", "reinhard"] = live("aces")
    exposure: Annotated[float, msgspec.Meta(gt=0.0), _GAIN] = live(1.0)
    gamma: Positive = live(1.0)
    """an extra power on the mapped value (1: none; the output's sRGB encoding still applies)"""

