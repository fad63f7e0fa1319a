"""The ``life`` component: a Life-like cellular automaton layer (seeds 000 and 001).

Kept apart from the system (systems/life.py) so that validating a scene needs no GPU code. Rules
and patterns are parsed by systems/life_rules.py and systems/life_patterns.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.colors import check_colors
from emberfx.registry import component

MAX_SIDE = 1 << 20   # cells per side accepted by the scene format; the device refuses earlier

Side = Annotated[int, msgspec.Meta(ge=1, le=MAX_SIDE)]


@component("life")
@dataclass(slots=True)
class Life:
    size: tuple[Side, Side] = (256, 256)
    """cells: width, height (reload)"""
    rule: str = "B3/S23"
    """any Life-like rule: "B3/S23", "b36s23", or MCell "23/3" (reload)"""
    topology: Literal["torus", "dead"] = "torus"
    """torus wraps both edges; dead treats cells beyond the edges as dead (reload)"""
    memory: Literal["pingpong", "inplace"] = "pingpong"
    """two state buffers, or one with a tile/halo/staging step (seed 000) (reload)"""
    pattern: str | None = None
    """.rle or .cells file, relative to the scene file (reload)"""
    offset: tuple[int, int] | None = None
    """where the pattern's top-left cell goes (x, y); default: centred (reload)"""
    density: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = 0.0
    """random soup density when > 0, seeded by the scene seed (reload)"""
    soup: tuple[int, int, int, int] | None = None
    """rectangle (x, y, width, height) the soup fills; default: the whole grid (reload)"""
    steps_per_frame: Annotated[int, msgspec.Meta(ge=0, le=1024)] = 1
    """generations per simulation step"""
    paused: bool = False
    alive_color: str = "#00e676"
    dead_color: str = "#151515"
    trail_color: str | None = None
    """colour recently dead cells fade from; None: no trail"""
    trail_fade: Annotated[float, msgspec.Meta(gt=0.0, lt=1.0)] = 0.85
    """trail brightness kept per displayed frame"""
    display: Literal["fill", "quad"] = "fill"
    """fill the view, or draw as a quad in the world (quad_center, quad_size)"""
    quad_center: tuple[float, float, float] = (0.0, 0.0, 0.0)
    quad_size: tuple[float, float] = (4.0, 4.0)
    """world units; the quad lies in the x-y plane"""

    PATH_FIELDS = ("pattern",)
    RELOAD_FIELDS = ("size", "rule", "topology", "memory", "pattern", "offset", "density", "soup")

    def __post_init__(self):
        from emberfx.systems.life_rules import parse_rule

        try:
            parse_rule(self.rule)
        except ValueError as exc:
            raise ValueError(f"rule: {exc}") from None
        check_colors(self, "alive_color", "dead_color", "trail_color")
        if self.soup is not None:
            x, y, w, h = self.soup
            if w < 1 or h < 1 or x < 0 or y < 0 or x + w > self.size[0] or y + h > self.size[1]:
                raise ValueError(f"soup: expected a rectangle (x, y, width, height) inside the "
                                 f"{self.size[0]}x{self.size[1]} grid, found {list(self.soup)}")
        if self.pattern is not None and not self.pattern.lower().endswith((".rle", ".cells")):
            raise ValueError(f"pattern: expected a .rle or .cells file, found '{self.pattern}'")
