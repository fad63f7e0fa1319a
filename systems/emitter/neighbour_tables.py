"""The emitter's tables for particles that see each other: ``particle_collision``, ``boids`` and
its ``bounds`` (systems/emitter/neighbours_feature.py runs them; ``neighbour_radius`` is a plain
field of the component)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

import msgspec

from emberfx.model.components import Change, Tracked, live, rebuild

Positive = Annotated[float, msgspec.Meta(gt=0.0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
Fraction = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Vec3 = tuple[float, float, float]
MAX_CONTACT_ITERATIONS = 32


def switched_on_or_off(before, after) -> Change | None:
    """A table that came or went rebuilds (the emitter's VALUE_CHANGES)."""
    return Change.REBUILD if (before is None) != (after is None) else None


def _finite(name: str, values) -> None:
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"{name}: expected finite numbers, found {list(values)}")


@dataclass(slots=True)
class ParticleCollision(Tracked):
    """Particles as spheres of ``radius`` that do not overlap: after each step, contacts are
    projected apart (position-based, ``iterations`` Jacobi sweeps over a neighbour grid, the
    emitter's colliders kept), and the velocity follows the projection; ``restitution`` gives
    back the approaching normal speed; ``friction`` is Coulomb's between a particle and what it
    rests on (a heap stands at about atan(friction))."""
    radius: Positive = rebuild(0.02)
    """world units: a particle's sphere (two touch at 2 x radius)"""
    restitution: Fraction = live(0.3)
    """share of the approaching normal speed given back, reflected"""
    friction: NonNegative = live(0.5)
    """Coulomb coefficient against what a particle rests on: static up to friction x the normal
    pull, and sliding speed lost = friction x the normal speed taken"""
    iterations: Annotated[int, msgspec.Meta(ge=1, le=MAX_CONTACT_ITERATIONS)] = rebuild(8)
    """projection sweeps per step (reload: the passes are unrolled); more for deep piles"""


@dataclass(slots=True)
class FlockBounds(Tracked):
    """The box a flock lives in: positions wrap around it (``wrap``), or the boids steer away
    from its walls and never leave it."""
    center: Vec3 = rebuild((0.0, 0.0, 0.0))
    half_size: tuple[Positive, Positive, Positive] = rebuild((1.0, 1.0, 1.0))
    wrap: bool = live(True)

    def __post_init__(self):
        _finite("center", self.center)
        _finite("half_size", self.half_size)


@dataclass(slots=True)
class Boids(Tracked):
    """Reynolds flocking: each boid steers towards ``max_speed`` along three desired
    velocities from its neighbours within ``radius``: away from those closer than radius / 2
    (separation), along their mean heading (alignment) and towards their centre (cohesion);
    each steering is (desired - velocity) x its weight, per second."""
    radius: Positive = rebuild(0.5)
    """world units: how far a boid sees"""
    separation: NonNegative = live(1.5)
    alignment: NonNegative = live(1.0)
    cohesion: NonNegative = live(0.8)
    max_speed: Positive = live(3.0)
    """m/s: the speed the steering aims at, and the most a boid reaches"""
    bounds: FlockBounds | None = rebuild(None)
    """the flock's box; None: unbounded"""
