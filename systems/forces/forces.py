"""Forces as components: ``attractor``, ``force_field`` and ``kill_zone``.

They own no GPU resources of their own: every emitter packs the forces that act on it (all of
them, or those its ``affected_by`` names) into one storage array per step, laid out as
``Force`` in shaders/common/forces.wgsl, and its update pass sums them per substep:
a = sum(attractors) + gravity - drag v + fields; v += a h; x += v h (semi-implicit Euler).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import numpy as np

from emberfx.core import wgsl
from emberfx.core.layout import struct_dtype
from emberfx.model.components import Tracked, live, passes, rebuild
from emberfx.model.registry import component

Vec3 = tuple[float, float, float]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]

FORCE = struct_dtype("common/forces.wgsl", "Force")
KINDS = wgsl.enum_constants("common/forces.wgsl", "FORCE")   # {"attractor": 0, "kill_box": 6, ...}
FORCE_KEYS = ("attractor", "force_field", "kill_zone")
DEFAULT_FIELD_BOX = (2.0, 2.0, 2.0)
"""a vector field file's box when its `size` is not given, world units"""
MAX_FORCES = wgsl.int_constant("common/forces.wgsl", "MAX_FORCES")
"""Force records one emitter's update takes: its forces buffer is sized for this many. The scene
loader refuses more acting on one emitter (Emitter.REFERENCE_LIMITS)."""


def _finite(obj, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        values = value if isinstance(value, tuple) else (value,)
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"{name}: expected finite numbers, found {list(values)}")


def _all_finite(value) -> bool:
    return all(math.isfinite(v) for v in (value if isinstance(value, tuple) else (value,)))


def _unit(v: Vec3, name: str) -> np.ndarray:
    a = np.asarray(v, np.float64)
    n = math.hypot(*a)   # not a BLAS call: forces are packed every step
    if n == 0.0:
        raise ValueError(f"{name}: expected a non-zero vector, found [0, 0, 0]")
    return a / n


@component("attractor")
@dataclass(slots=True)
class Attractor(Tracked):
    position: Vec3 = live((0.0, 0.0, 0.0))
    """world units"""
    strength: float = live(1.0)
    """G in a = G r / (|r|^2 + softening^2)^(3/2), r = position - x; negative repels"""
    softening: Positive = live(0.1)
    """eps, world units: keeps the pull finite at the centre"""
    radius: NonNegative = live(0.0)
    """acts only within this distance; 0 = everywhere"""
    kill_radius: NonNegative = live(0.0)
    """particles closer than this die; 0 = never"""
    follow_mouse: bool = live(False)
    """interactive window: the attractor follows the cursor in the view plane; ignored headless"""

    # Every field is checked alone (component_values.checked_alone): a script moves the well
    # every step. Each with what __post_init__ asks of it besides its type (None: nothing).
    CHECKED_ALONE = {"position": _all_finite, "strength": _all_finite, "softening": _all_finite,
                     "radius": _all_finite, "kill_radius": _all_finite, "follow_mouse": None}

    def __post_init__(self):
        _finite(self, "position", "strength", "softening", "radius", "kill_radius")

    def pack(self, record) -> None:
        record["kind"] = KINDS["attractor"]
        record["a"] = (*self.position, self.strength)
        record["b"] = (self.softening ** 2, self.radius, self.kill_radius, 0.0)


@component("force_field")
@dataclass(slots=True)
class ForceField(Tracked):
    kind: Literal["gravity", "drag", "vortex", "turbulence", "wind", "vector_field"] = passes(
        "gravity")
    acceleration: Vec3 = live((0.0, -9.81, 0.0))
    """gravity: m/s^2"""
    coefficient: NonNegative = live(0.1)
    """drag: 1/s (a = -coefficient v)"""
    center: Vec3 = live((0.0, 0.0, 0.0))
    """vortex: a point on the axis; vector_field: the centre of the field's box"""
    axis: Vec3 = live((0.0, 1.0, 0.0))
    """vortex: rotation axis (right-handed)"""
    strength: float = live(1.0)
    """vortex: 1/s^2 (a = strength axis x (x - center)); turbulence: m/s^2; vector_field:
    scales the sampled vectors"""
    pull: float = live(0.0)
    """vortex: 1/s^2, an acceleration towards the axis of pull x the distance from it (a = strength
    axis x r - pull r, r the offset from the axis): the converging inflow at a tornado's foot,
    which spins faster as it nears the axis; negative pushes outwards"""
    frequency: Positive = live(1.0)
    """turbulence: spatial frequency of the first octave, 1/m; wind: gusts per second"""
    octaves: Annotated[int, msgspec.Meta(ge=1, le=8)] = live(3)
    direction: Vec3 = live((1.0, 0.0, 0.0))
    """wind: the direction it blows (its speed is `strength`, m/s)"""
    gust: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = live(0.0)
    """wind: gusts vary the speed by up to this fraction"""
    field: str | None = rebuild(None)
    """vector_field: a .npy file of float32 (D, H, W, 3) vectors in the box's local frame, sampled
    at the centres of D x H x W cells filling the box (Engine.set_field replaces them live)"""
    source: str | None = rebuild(None)
    """vector_field: the name of a gas entity, in place of `field`: the field is the gas's
    velocity at its cells' centres, copied on the GPU each step, in the gas's box (no `size`,
    no rotation)"""
    size: tuple[Positive, Positive, Positive] | None = live(None)
    """vector_field: full edge lengths of the box the field fills; None: [2, 2, 2] for a
    `field` file (a `source` gas's box is its own)"""
    rotation_deg: Vec3 = live((0.0, 0.0, 0.0))
    """vector_field: rotation of the box about x, then y, then z, degrees"""
    mode: Literal["force", "velocity"] = live("force")
    """vector_field: force: a = strength x field; velocity: particles are pulled towards the
    velocity strength x field, a = tightness (strength x field - v)"""
    tightness: NonNegative = live(2.0)
    """vector_field, velocity mode: how fast particles take the field's velocity, 1/s"""
    tile: bool = live(False)
    """vector_field: repeat the field beyond its box (else it acts only inside the box)"""

    PATH_FIELDS = ("field",)
    REFERENCES = {"source": ("gas",)}

    def __post_init__(self):
        _finite(self, "acceleration", "coefficient", "center", "axis", "strength", "pull",
                "frequency", "direction")
        if self.kind == "vortex":
            _unit(self.axis, "axis")
        if self.kind == "wind":
            _unit(self.direction, "direction")
        _finite(self, "rotation_deg", "tightness")
        if self.size is not None:
            _finite(self, "size")
        if self.source is not None:
            self._check_source()
        elif self.kind == "vector_field" and self.field is None:
            raise ValueError("field: expected a .npy file of float32 (D, H, W, 3) vectors (or "
                             "`source`, the name of a gas entity) for kind = \"vector_field\", "
                             "found neither")
        if self.field is not None and not self.field.lower().endswith(".npy"):
            raise ValueError(f"field: expected a .npy file, found '{self.field}'")

    def _check_source(self) -> None:
        """A gas-sourced field: the box is the gas's, so no file, size or rotation."""
        source = f"source = '{self.source}'"
        if self.kind != "vector_field":
            raise ValueError(f"source: expected kind = \"vector_field\" with a gas source, "
                             f"found kind = \"{self.kind}\"")
        if self.field is not None:
            raise ValueError(f"field: expected no file with {source} (the field is the gas's "
                             f"velocity), found '{self.field}'")
        if self.size is not None:
            raise ValueError(f"size: expected no size with {source} (the box is the gas's), "
                             f"found {list(self.size)}")
        if any(self.rotation_deg):
            raise ValueError(f"rotation_deg: expected [0, 0, 0] with {source} (the gas's box "
                             f"is not turned), found {list(self.rotation_deg)}")

    @property
    def box_size(self) -> tuple[float, float, float]:
        """A file field's box, full edge lengths (`size`, or [2, 2, 2] when not given)."""
        return self.size if self.size is not None else DEFAULT_FIELD_BOX

    def check_files(self, resolve) -> None:
        """The scene loader's check of the field file, as the engine will load it."""
        if self.field is None:
            return
        from emberfx.systems.forces.volumes import VolumeError, load_volume

        try:
            load_volume(resolve(self.field), channels=3)
        except VolumeError as exc:
            raise ValueError(f"field: {exc}") from None

    def wind_velocity(self, time: float) -> np.ndarray:
        """Wind: its velocity at a simulated time, gusting smoothly (a sum of incommensurate
        sines)."""
        phase = 2.0 * math.pi * self.frequency * time
        wave = (0.6 * math.sin(phase) + 0.3 * math.sin(2.7 * phase + 1.3)
                + 0.1 * math.sin(6.1 * phase))
        return _unit(self.direction, "direction") * self.strength * (1.0 + self.gust * wave)

    def pack(self, record, time: float = 0.0, volume: int = 0) -> None:
        """``volume``: a vector field's index among the emitter's volume records."""
        record["kind"] = KINDS[self.kind]
        if self.kind == "gravity":
            record["a"] = (*self.acceleration, 0.0)
        elif self.kind == "drag":
            record["a"] = (self.coefficient, 0.0, 0.0, 0.0)
        elif self.kind == "vortex":
            record["a"] = (*self.center, self.strength)
            record["b"] = (*_unit(self.axis, "axis"), self.pull)
        elif self.kind == "wind":
            record["a"] = (*self.wind_velocity(time), self.coefficient)
        elif self.kind == "vector_field":
            record["a"] = (self.strength, self.tightness, float(self.mode == "velocity"),
                           float(volume))
        else:
            record["a"] = (self.frequency, self.strength, float(self.octaves), 0.0)


@component("kill_zone")
@dataclass(slots=True)
class KillZone(Tracked):
    shape: Literal["sphere", "box"] = live("sphere")
    center: Vec3 = live((0.0, 0.0, 0.0))
    radius: Positive = live(1.0)
    """sphere: world units"""
    half_size: tuple[Positive, Positive, Positive] = live((1.0, 1.0, 1.0))
    """box: half extents along x, y, z"""

    def __post_init__(self):
        _finite(self, "center", "radius", "half_size")

    def pack(self, record) -> None:
        record["kind"] = KINDS["kill_" + self.shape]
        record["a"] = (*self.center, self.radius)
        record["b"] = (*self.half_size, 0.0)


def kind_bits(forces) -> int:
    """The FORCE_KINDS mask (shaders/common/forces.wgsl) for these force components: the code
    of the kinds outside it compiles out. A kill zone sets both shapes' bits, since its shape
    is a live field and a live edit rebuilds no pass."""
    bits = 0
    for force in forces:
        if isinstance(force, KillZone):
            bits |= 1 << KINDS["kill_sphere"] | 1 << KINDS["kill_box"]
        elif isinstance(force, ForceField):
            bits |= 1 << KINDS[force.kind]
        else:
            bits |= 1 << KINDS["attractor"]
    return bits


def kills(force) -> bool:
    """Whether a force can kill particles (a kill zone, or an attractor with a kill radius)."""
    return isinstance(force, KillZone) or (isinstance(force, Attractor) and force.kill_radius > 0)


def accelerates(force) -> bool:
    return not isinstance(force, KillZone)


def arrange(forces: list) -> tuple[list, int, int]:
    """Order forces so that the update's two loops touch only what they need: accelerating ones
    first (those that also kill last among them), then pure kill zones. Returns (forces,
    accelerate_end, kill_start): accelerations come from [0, accelerate_end), kills from
    [kill_start, len)."""
    plain = [f for f in forces if accelerates(f) and not kills(f)]
    both = [f for f in forces if accelerates(f) and kills(f)]
    zones = [f for f in forces if not accelerates(f)]
    ordered = plain + both + zones
    return ordered, len(plain) + len(both), len(plain)


def pack_forces(forces: list, time: float = 0.0,
                volumes: dict[int, int] | None = None) -> np.ndarray:
    """The Force records (shaders/common/forces.wgsl) for these components, in order, at a
    simulated time (for gusting wind). ``volumes``: id(vector field component) -> its index among
    the emitter's volume records."""
    records = np.zeros(max(1, len(forces)), FORCE)
    for record, force in zip(records, forces):
        if isinstance(force, ForceField):
            force.pack(record, time, (volumes or {}).get(id(force), 0))
        else:
            force.pack(record)
    return records
