"""The nested tables of the ``emitter`` component (``shape``, ``bursts``, colour stops,
``collision``, the sub-emitter links) and the value types and checks they share with it.

No GPU code: validating a scene imports these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.model.components import Change, Tracked, live, rebuild
from emberfx.model.numbers import U32_MAX
from emberfx.systems.meshes.files import mesh_format

MAX_CAPACITY = 1 << 28  # 268M slots; the device's buffer limit usually refuses less
MAX_PREWARM_WORK = 1 << 30
"""particle-steps (capacity x prewarm steps) one emitter's prewarm may take before the first
frame: a 200k pool prewarms the full 60 s at 60 steps/s, a 4M pool about 4.5 s (roughly a minute
of lavapipe on a small CPU; well under a second on a discrete GPU)"""
MIN_BURST_REPEAT = 1e-3
"""seconds: a burst fires at most 1000 times a second (faster is what `rate` is for); the
births of one step are a 32-bit budget"""
BirthRate = Annotated[float, msgspec.Meta(
    ge=0.0, le=float(U32_MAX),
    description="a step's births are a 32-bit count on the GPU and a step lasts at most 1 s")]

NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]
Fraction = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
# msgspec cannot decode a union of a constrained scalar and a tuple: signs are checked below
Range = float | tuple[float, float]
Vec3 = tuple[float, float, float]
Expression = str
"""a WGSL expression evaluated per particle (systems/emitter/modifiers.py)"""


def numeric(value):
    """A field that may hold an expression, as the host's number: 1.0 for an expression (the
    GPU computes the value, emitter/modifiers.py)."""
    return 1.0 if isinstance(value, str) else value


def as_range(value: float | tuple[float, float]) -> tuple[float, float]:
    """A scene "number or [min, max]" as (min, max)."""
    if isinstance(value, tuple):
        return value
    return (value, value)


def finite(values) -> bool:
    flat: list[float] = []
    for v in values if isinstance(values, (tuple, list)) else (values,):
        flat.extend(v if isinstance(v, (tuple, list)) else (v,))
    return all(math.isfinite(v) for v in flat)


def check_finite(name: str, values) -> None:
    if not finite(values):
        raise ValueError(f"{name}: expected finite numbers, found {values}")


def non_zero(vector) -> bool:
    return sum(c * c for c in vector) != 0.0


def ordered(pair) -> bool:
    return not pair[1] < pair[0]


def finite_or_unset(value) -> bool:
    return value is None or finite(value)


def finite_non_zero(vector) -> bool:
    return finite(vector) and non_zero(vector)


def finite_ordered(pair) -> bool:
    return finite(pair) and ordered(pair)


@dataclass(slots=True)
class Shape(Tracked):
    """Where on the emitter particles are born (centred on ``position``, oriented by
    ``direction`` for disk, cone and ring; a mesh as authored, by its own transform; a Life
    layer's eligible cells where the layer lies in the world)."""
    # a mesh or Life shape owns buffers: kind becoming or leaving either makes the emitter anew
    VALUE_CHANGES = {"kind": lambda a, b: Change.REBUILD if {"mesh", "life"} & {a, b} else None}
    kind: Literal["point", "sphere", "box", "disk", "cone", "ring", "mesh", "life"] = live("point")
    radius: NonNegative = live(0.5)
    """sphere, disk, cone (base), ring: world units"""
    size: tuple[NonNegative, NonNegative, NonNegative] = live((1.0, 1.0, 1.0))
    """box: full extents along x, y, z"""
    thickness: NonNegative = live(0.1)
    """ring: radial width (the ring spans radius - thickness .. radius)"""
    angle_deg: Annotated[float, msgspec.Meta(ge=0.0, lt=90.0)] = live(25.0)
    """cone: half-angle of the velocity directions at the base's rim"""
    surface: bool = live(False)
    """true: on the shape's surface (sphere shell, box faces, disk/cone rim, ring circle, mesh
    triangles); false: in its volume (a mesh must be closed)"""
    path: str | None = rebuild(None)
    """mesh: a Wavefront .obj or .ply file (relative to the scene), used as authored: births are
    uniform over its triangles' area (surface) or its volume"""
    scale: Annotated[float, msgspec.Meta(gt=0.0)] = live(1.0)
    """mesh: its vertices are scaled by this, then turned by `rotation_deg`, then moved by
    `offset`, in the emitter's frame at `position`"""
    rotation_deg: Vec3 = live((0.0, 0.0, 0.0))
    """mesh: degrees about x, then y, then z (as a collider's rotation_deg)"""
    offset: Vec3 = live((0.0, 0.0, 0.0))
    """mesh: world units from `position`"""
    layer: str | None = rebuild(None)
    """life: the entity whose Life layer gives the births, placed in the world (display =
    "quad"): each birth is a uniform point of the square of a random eligible cell, in the
    layer's plane, whatever the emitter's `position` (systems/emitter/life_shape.py)"""
    on: Literal["birth", "alive"] = live("birth")
    """life: the eligible cells: "birth", alive now and dead in the previous displayed state
    (one simulation step ago, however many generations it ran); "alive", alive now. A step with
    no eligible cell drops its births"""

    def __post_init__(self):
        if self.kind == "ring" and self.thickness > self.radius:
            raise ValueError(f"thickness: expected <= radius ({self.radius}), "
                             f"found {self.thickness}")
        if self.kind == "mesh" and not self.path:
            raise ValueError('path: expected a mesh file "*.obj" or "*.ply" for kind = "mesh", '
                             'found none')
        if self.kind == "life" and not self.layer:
            raise ValueError('layer: expected the name of an entity with a life component for '
                             'kind = "life", found none')
        if self.path is not None and mesh_format(self.path) is None:
            raise ValueError(f'path: expected a mesh file "*.obj" or "*.ply", found '
                             f'{self.path!r}')
        for name in ("scale", "rotation_deg", "offset"):
            check_finite(name, getattr(self, name))


@dataclass(slots=True)
class Burst(Tracked):
    """``count`` particles at ``time`` seconds, then every ``repeat`` seconds, ``cycles`` times."""
    time: NonNegative = live(0.0)
    count: Annotated[int, msgspec.Meta(ge=1)] = live(100)
    repeat: NonNegative = live(0.0)
    """seconds between cycles; 0 fires once"""
    cycles: Annotated[int, msgspec.Meta(ge=0, le=U32_MAX)] = live(1)
    """how many times it fires; 0 = forever (needs repeat > 0)"""

    def __post_init__(self):
        if 0.0 < self.repeat < MIN_BURST_REPEAT:
            raise ValueError(f"repeat: expected 0 (fire once) or at least {MIN_BURST_REPEAT:g} s, "
                             f"found {self.repeat:g}")

    def times(self, start: float, end: float) -> int:
        """How many firings fall in the step interval [start, end) (seconds)."""
        if end <= self.time:
            return 0
        if self.repeat <= 0.0:
            return int(start <= self.time < end)
        first = max(0, math.ceil((start - self.time) / self.repeat))
        last = math.ceil((end - self.time) / self.repeat) - 1
        if self.cycles:
            last = min(last, self.cycles - 1)
        return max(0, last - first + 1)


@dataclass(slots=True)
class ColorStop(Tracked):
    t: Fraction = live()
    """position over life, 0 = birth, 1 = death"""
    color: str = live()
    """'#rrggbb', '#rrggbbaa', '#rgb' or '#rgba'"""


@dataclass(slots=True)
class CollisionMaterial(Tracked):
    """How an emitter's particles answer colliders (``collision = {...}``): on contact the
    particle is put back on the surface, the normal velocity is reflected and scaled by
    ``restitution``, and the tangential velocity loses ``friction`` x the normal speed change
    (Coulomb), down to zero."""
    restitution: Fraction = live(0.5)
    """share of the normal speed kept, reflected (0: stops dead, 1: elastic)"""
    friction: NonNegative = live(0.2)
    """Coulomb coefficient: tangential speed lost = friction x normal speed change"""
    lifetime_loss: Fraction = live(0.0)
    """share of its lifetime a particle loses at each collision"""
    kill: bool = live(False)
    """the particle dies when it touches a collider"""


EVENT_KINDS = ("death", "collision", "age")
"""the GPU events an emitter can send (field ``on_<kind>``), in the order they are ranked
(EVENT_* in shaders/emitter/event_types.wgsl)"""
MAX_EVENT_LINKS = 8
"""sub-emitter links (a source and one of its event kinds) that may name one target emitter
(the size of EventInbox.links in shaders/emitter/event_types.wgsl)"""
EventShare = Annotated[float, msgspec.Meta(ge=-1.0, le=1.0)]


@dataclass(slots=True)
class SubEmitter(Tracked):
    """``on_death = { emitter = "sparks", count = 20, inherit_velocity = 0.3 }``: each event
    spawns ``count`` particles of the emitter named, its shape centred where the parent was.
    Which emitter and how many per event decide the GPU buffers: editing them rebuilds."""
    emitter: str = rebuild()
    """the target: an emitter entity with allocation = "ordered\""""
    count: Annotated[int, msgspec.Meta(ge=1, le=MAX_CAPACITY)] = rebuild(1)
    """particles per event (fewer when the target's pool is full)"""
    inherit_velocity: EventShare = live(0.0)
    """share of the PARENT PARTICLE's velocity added to each child's own (the emitter field of
    the same name is the share of the emitter's motion)"""
    inherit_color: bool = rebuild(False)
    """children start with the colour the parent shows at the event (its look at its age, times
    its own `p.color`): the target then carries a colour per particle (systems/emitter/color.py)"""


@dataclass(slots=True)
class AgeSubEmitter(Tracked):
    """``on_age = { every = 0.1, emitter = "smoke", count = 1 }``: a trail of spawns, one event
    each time a particle's age passes a whole multiple of ``every`` (at most one per step)."""
    emitter: str = rebuild()
    """the target: an emitter entity with allocation = "ordered\""""
    every: Positive = live()
    """seconds of a particle's age between events; at least the scene's fixed_dt"""
    count: Annotated[int, msgspec.Meta(ge=1, le=MAX_CAPACITY)] = rebuild(1)
    """particles per event (fewer when the target's pool is full)"""
    inherit_velocity: EventShare = live(0.0)
    """share of the parent particle's velocity added to each child's own"""
    inherit_color: bool = rebuild(False)
    """children start with the colour the parent shows at the event (as on_death's)"""
