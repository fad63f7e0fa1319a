"""The ``trail`` component: ribbons behind the particles of another entity's emitter.

Kept apart from the system (systems/trails/system.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live, rebuild
from emberfx.model.registry import component

MAX_LENGTH = 256
"""samples kept per particle: the ring costs capacity x length x 16 bytes, and a ribbon's
(length - 1) segments are drawn for every alive particle"""
MAX_EVERY = 1 << 16
"""steps between samples (about 18 minutes at 60 steps a second)"""

NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]


@component("trail")
@dataclass(slots=True)
class Trail(Tracked):
    source: str = rebuild("")
    """the entity whose emitter's particles leave the trail (rebuild: binds its buffers)"""
    length: Annotated[int, msgspec.Meta(ge=2, le=MAX_LENGTH)] = rebuild(16)
    """samples kept per particle, newest first; state()["points"] has shape (capacity, length,
    3) (rebuild)"""
    width: Annotated[float, msgspec.Meta(ge=0.0)] = live(0.02)
    """ribbon width, world units"""
    width_curve: list[NonNegative] = live(default_factory=lambda: [1.0])
    """width multipliers over the trail, newest to oldest, evenly spaced (e.g. [1, 0] tapers)"""
    color: str | list[str] = live(default_factory=lambda: ["#ffd27a", "#ff5a1f00"])
    """a colour, or colours evenly spaced over the trail from newest to oldest ('#rrggbbaa':
    alpha scales the additive light)"""
    every: Annotated[int, msgspec.Meta(ge=1, le=MAX_EVERY)] = live(1)
    """simulation steps between samples"""

    REFERENCES = {"source": ("emitter",)}

    def __post_init__(self):
        if not self.source:
            raise ValueError("source: expected the name of an entity with an emitter, "
                             "found nothing")
        if isinstance(self.color, list) and not self.color:
            raise ValueError("color: expected at least one colour, found []")
        check_colors(self, "color")
        if not self.width_curve:
            raise ValueError("width_curve: expected at least one value, found []")

    def colors(self) -> list[str]:
        return [self.color] if isinstance(self.color, str) else list(self.color)
