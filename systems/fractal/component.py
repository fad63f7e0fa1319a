"""The ``fractal`` component: a Mandelbrot or Julia set computed per pixel.

Kept apart from the system (systems/fractal/system.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live, passes, rebuild
from emberfx.model.registry import component

Side = Annotated[int, msgspec.Meta(ge=1, le=16384)]
MIN_ZOOM, MAX_ZOOM = 1e-30, 1e30
"""the pixel spacing 3 / (zoom h) stays a normal, finite 32-bit float for every resolution"""


@component("fractal")
@dataclass(slots=True)
class Fractal(Tracked):
    kind: Literal["mandelbrot", "julia"] = live("mandelbrot")
    resolution: tuple[Side, Side] = rebuild((1024, 768))
    """texels computed (w, h); state()["iterations"] has shape (h, w) (reload)"""
    center: tuple[float, float] = live((-0.5, 0.0))
    zoom: Annotated[float, msgspec.Meta(
        ge=MIN_ZOOM, le=MAX_ZOOM,
        description="the pixel spacing 3 / (zoom height) is a 32-bit float")] = live(1.0)
    """1.0 shows the height [-1.5, 1.5] around the centre"""
    zoom_rate: float = live(0.0)
    """animated zoom: the zoom grows by a factor e^(zoom_rate t) over simulated time t (per
    second; 0: still), and holds once it reaches MIN_ZOOM or MAX_ZOOM. The set is then
    recomputed every drawn frame."""
    max_iterations: Annotated[int, msgspec.Meta(ge=1, le=1 << 20)] = live(256)
    julia_c: tuple[float, float] = live((-0.8, 0.156))
    """julia: the constant c"""
    palette: list[str] = live(default_factory=lambda: ["#000764", "#206bcb", "#edffff",
                                                        "#ffaa00", "#000200"])
    """colours cycled along the smooth escape count; points inside the set use inside_color"""
    palette_period: Annotated[float, msgspec.Meta(gt=0.0)] = live(64.0)
    """escape iterations per palette cycle"""
    inside_color: str = live("#000000")
    display: Literal["fill", "quad"] = passes("fill")
    """"fill": cover the whole view behind everything (square texels, centred, the excess
    cropped); "quad": a world quad (quad_center, quad_size) seen through the camera"""
    quad_center: tuple[float, float, float] = live((0.0, 0.0, 0.0))
    quad_size: tuple[float, float] = live((4.0, 3.0))

    def __post_init__(self):
        if not self.palette:
            raise ValueError("palette: expected at least one colour, found []")
        check_colors(self, "palette", "inside_color")
