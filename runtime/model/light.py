"""The scene's light: the ``[light]`` table, one directional light plus a uniform ambient term.

Every lit surface (cloth, visible colliders, mesh particles) reads it from the frame uniform
(shaders/common/frame.wgsl: light_direction, light_color, with the ambient in light_color.w):

    lit = base x (ambient + color x intensity x max(n . direction, 0))

The defaults: a white key light from above, right and in front (+z), 25 % ambient.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

import msgspec

from emberfx.model.colors import check_colors, linear_color

NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]


@dataclass(slots=True)
class Light:
    """The ``[light]`` table."""

    direction: tuple[float, float, float] = (0.35, 0.85, 0.45)
    """world direction from a surface toward the light; normalised when used"""
    color: str = "#ffffff"
    """'#rrggbb' (or '#rgb'), sRGB as written (linearised for the GPU)"""
    intensity: NonNegative = 0.75
    """multiplies ``color`` for the directional term"""
    ambient: NonNegative = 0.25
    """the fraction of a surface's colour lit from everywhere (faces turned away included)"""

    def __post_init__(self):
        check_colors(self, "color")
        if not all(math.isfinite(c) for c in self.direction):
            raise ValueError(f"direction: expected finite numbers, found {list(self.direction)}")
        if sum(c * c for c in self.direction) == 0.0:
            raise ValueError("direction: expected a non-zero vector, found [0, 0, 0]")

    def unit_direction(self) -> tuple[float, float, float]:
        length = math.sqrt(sum(c * c for c in self.direction))
        x, y, z = (c / length for c in self.direction)
        return (x, y, z)

    def linear_radiance(self) -> tuple[float, float, float]:
        """The directional term's linear RGB: color x intensity."""
        r, g, b, _ = linear_color(self.color)
        return (r * self.intensity, g * self.intensity, b * self.intensity)
