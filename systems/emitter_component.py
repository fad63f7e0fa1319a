"""The ``emitter`` component: what a scene file's ``[entity.emitter]`` table describes.

Kept apart from the system (systems/emitter.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

import msgspec

from emberfx.colors import parse_color
from emberfx.registry import component

MAX_CAPACITY = 1 << 28  # 268M slots; the device's buffer limit usually refuses less

NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
# msgspec cannot decode a union of a constrained scalar and a tuple: signs are checked below
Range = float | tuple[float, float]
Vec3 = tuple[float, float, float]


def as_range(value: float | tuple[float, float]) -> tuple[float, float]:
    """A scene "number or [min, max]" as (min, max)."""
    if isinstance(value, tuple):
        return value
    return (value, value)


@component("emitter")
@dataclass(slots=True)
class Emitter:
    capacity: Annotated[int, msgspec.Meta(ge=1, le=MAX_CAPACITY)] = 10000
    """slots in the pool (reload: changing it rebuilds the pool)"""
    rate: NonNegative = 1000.0
    """particles per second; the fractional part carries across steps"""
    lifetime: Range = (1.0, 2.0)
    """seconds: a number or [min, max]"""
    speed: Range = (1.0, 2.0)
    """initial speed, m/s: a number or [min, max]"""
    position: Vec3 = (0.0, 0.0, 0.0)
    """where particles are born, world units"""
    direction: Vec3 = (0.0, 1.0, 0.0)
    """axis of the emission cone"""
    spread_deg: Annotated[float, msgspec.Meta(ge=0.0, le=180.0)] = 15.0
    """cone half-angle, degrees"""
    gravity: Vec3 = (0.0, -9.81, 0.0)
    """m/s^2"""
    drag: NonNegative = 0.0
    """linear drag, 1/s"""
    size: Annotated[float, msgspec.Meta(gt=0.0)] = 0.03
    """billboard edge length, world units"""
    color: str | list[str] = field(default_factory=lambda: ["#ffd27f", "#ff6a00"])
    """'#rrggbb[aa]' or a list of stops over life (evenly spaced, at most 8)"""
    blend: Literal["additive", "alpha", "opaque"] = "additive"
    allocation: Literal["ordered", "atomic", "ticket"] = "ordered"
    """how dead slots share a step's emission budget (reload); see docs in the README"""
    substeps: Annotated[int, msgspec.Meta(ge=1, le=64)] = 1
    """integration substeps per fixed step (h = fixed_dt / substeps)"""
    affected_by: list[str] | None = None
    """names of the attractor / force_field / kill_zone entities acting on it; None = all"""

    RELOAD_FIELDS = ("capacity", "allocation")
    REFERENCES = {"affected_by": ("attractor", "force_field", "kill_zone")}

    def __post_init__(self):
        for name in ("lifetime", "speed"):
            lo, hi = as_range(getattr(self, name))
            if lo < 0.0:
                raise ValueError(f"{name}: expected values >= 0, found {getattr(self, name)}")
            if hi < lo:
                raise ValueError(f"{name}: expected [min, max] with min <= max, found [{lo}, {hi}]")
        if as_range(self.lifetime)[1] <= 0.0:
            raise ValueError(f"lifetime: expected a positive maximum, found {self.lifetime}")
        if sum(c * c for c in self.direction) == 0.0:
            raise ValueError("direction: expected a non-zero vector, found [0, 0, 0]")
        stops = [self.color] if isinstance(self.color, str) else self.color
        if not 1 <= len(stops) <= 8:
            raise ValueError(f"color: expected 1 to 8 colour stops, found {len(stops)}")
        for stop in stops:
            try:
                parse_color(stop)
            except ValueError as exc:
                raise ValueError(f"color: {exc}") from None

    def color_stops(self) -> list[str]:
        return [self.color] if isinstance(self.color, str) else list(self.color)
