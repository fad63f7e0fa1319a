"""The scene's light: the ``[light]`` table, one directional light plus a uniform ambient term.

Every lit surface (cloth, visible colliders, mesh particles) reads it from the frame uniform
(shaders/common/frame.wgsl: light_direction, light_color, with the ambient in light_color.w):

    lit = base x (ambient + color x intensity x max(n . direction, 0) x visibility)

``visibility`` is 1 without shadows. With ``shadows = true`` it is

    visibility = pcf x exp(-tau)

pcf: the share of a PCF kernel of radius ``softness`` shadow texels around the surface point
whose shadow map depth is not nearer the light than the point (common/shadow.wgsl): 0 in full
shadow, 1 in full light, in between in the penumbra. tau: the optical depth of the particles of
emitters with ``cast_shadows = true`` between the light and the point, each adding alpha x alpha
over life x sprite coverage over its square (four opacity layers along the light). Only the
directional term is shadowed; the ambient stays. Sprites with ``receive_shadows = true`` take
the same light at their centre, as a surface facing the light (n . direction = 1). The shadow map
is an orthographic depth image of ``shadow_resolution``^2 texels seen from the light, its box
fitted each frame to the bounds of what casts (runtime/core/shadows.py), or ``shadow_extent``
world units either side of their centre when that is set.

Point lights (``[entity.point_light]``, and emitters' ``emit_light``) add their own term to
the same surfaces (runtime/core/point_lights.py, systems/lights/component.py states the falloff);
this table stays the one directional light.

The defaults: a white key light from above, right and in front (+z), 25 % ambient, shadows on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

import msgspec

from emberfx.model.colors import check_colors, linear_color

NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
ShadowResolution = Annotated[int, msgspec.Meta(ge=16, le=8192)]   # WebGPU's texture size limit
Softness = Annotated[float, msgspec.Meta(ge=0.0, le=8.0)]
Extent = Annotated[float, msgspec.Meta(gt=0.0)]


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
    shadows: bool = True
    """whether colliders, cloth, mesh particles and emitters with cast_shadows cast shadows
    from the light"""
    shadow_resolution: ShadowResolution = 2048
    """texels along each side of the square shadow map"""
    softness: Softness = 1.5
    """radius of the shadow's PCF kernel in shadow texels: 0 gives hard edges"""
    shadow_extent: Extent | None = None
    """half-size in world units of the light's orthographic shadow box; default: fitted each
    frame to the bounds of what casts"""

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
