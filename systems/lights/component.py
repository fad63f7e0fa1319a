"""The ``point_light`` component: a light at a point, shining every way.

Kept apart from the system (systems/lights/system.py) so that validating a scene needs no GPU
code. A surface at distance d from the light, with unit normal N and L the unit vector toward
the light, receives

    color x intensity x max(N.L, 0) / d^2 x clamp(1 - (d / range)^4, 0, 1)^2

(linear colour; inverse square times a window that reaches 0 at ``range``; d is taken as at
least 0.01 world units), added to the scene's [light] and multiplied by the surface's colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live
from emberfx.model.registry import component

Vec3 = tuple[float, float, float]


@component("point_light")
@dataclass(slots=True)
class PointLight(Tracked):
    position: Vec3 = live((0.0, 0.0, 0.0))
    """world units"""
    color: str = live("#ffffff")
    """the light's colour ('#rrggbb', sRGB; used in linear light)"""
    intensity: Annotated[float, msgspec.Meta(ge=0.0)] = live(1.0)
    """the light a surface facing it receives at 1 world unit, as a multiple of its colour"""
    range: Annotated[float, msgspec.Meta(gt=0.0)] = live(5.0)
    """world units: the distance at which the light has faded to nothing (nothing beyond)"""

    def __post_init__(self):
        check_colors(self, "color")
