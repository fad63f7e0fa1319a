"""The ``collider`` component: a solid that cloth and particles do not enter.

Kept apart from the systems so that validating a scene needs no GPU code. Who reads it:
- cloth (systems/cloth) collides with ``sphere`` and ``plane`` colliders, removing ``friction``
  of the tangential velocity on contact;
- emitters that opt in with ``collision = {...}`` collide with every shape; their particles'
  material (restitution, friction, lifetime loss, kill) is the emitter's, not the collider's;
- the collider draw (systems/colliders/system.py) shows ``visible`` ones as lit meshes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.model.colors import parse_color
from emberfx.model.components import Tracked, live, passes, rebuild
from emberfx.model.registry import component

Vec3 = tuple[float, float, float]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]
PositiveVec3 = tuple[Positive, Positive, Positive]

DRAWN_BY_DEFAULT = ("sphere", "box", "plane")
"""shapes drawn unless ``visible = false`` (an SDF or the depth buffer has no mesh of its own)"""


@component("collider")
@dataclass(slots=True)
class Collider(Tracked):
    shape: Literal["sphere", "plane", "box", "sdf", "depth"] = rebuild("sphere")
    """sphere (center, radius), plane (point, normal), box (center, half_size, rotation_deg),
    sdf (a signed-distance volume over the box center, size, rotation_deg), depth (what the last
    render drew; particles only)"""
    center: Vec3 = live((0.0, 0.0, 0.0))
    """sphere, box, sdf: world units (edit it live to move the collider)"""
    radius: Positive = live(1.0)
    """sphere; sdf_kind sphere and torus (the ring's radius)"""
    point: Vec3 = live((0.0, 0.0, 0.0))
    """plane: a point on it"""
    normal: Vec3 = live((0.0, 1.0, 0.0))
    """plane: the side that stays free (the solid is behind it)"""
    half_size: PositiveVec3 = live((0.5, 0.5, 0.5))
    """box, sdf_kind box: half extents along the local x, y, z"""
    size: PositiveVec3 = live((2.0, 2.0, 2.0))
    """sdf: full edge lengths of the box the volume covers; outside it the collider does
    nothing"""
    rotation_deg: Vec3 = live((0.0, 0.0, 0.0))
    """box, sdf: rotation about x, then y, then z around `center`, degrees"""
    sdf: str | None = rebuild(None)
    """sdf: a .npy file of float32 (D, H, W) signed distances in world units (negative inside),
    sampled at the centres of D x H x W cells filling the box"""
    sdf_kind: Literal["sphere", "box", "torus"] | None = rebuild(None)
    """sdf: an analytic solid instead of a file (sphere: radius; box: half_size; torus: radius
    and minor_radius, around the local y axis)"""
    minor_radius: Positive = live(0.25)
    """sdf_kind torus: the tube's radius"""
    inside: bool = live(False)
    """particles only: keep them inside the shape instead of out"""
    thickness: Positive = live(0.1)
    """depth: how far behind the drawn surface a particle still collides, world units"""
    friction: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = live(0.3)
    """cloth only: share of the tangential velocity removed on contact (particles use their
    emitter's collision.friction)"""
    visible: bool | None = passes(None)
    """draw it as a lit mesh; unset: drawn for sphere, box and plane"""
    wireframe: bool = passes(False)
    """draw edges only (a debug look)"""
    extent: Positive = live(8.0)
    """plane: edge length of the square drawn around `point`, world units"""
    color: str = live("#8d939c")
    """the drawn mesh's colour"""
    pattern: Literal["checker", "noise", "plain"] | None = live(None)
    """the drawn surface: checker (a plane's floor cells), noise (mottled, like earth or stone;
    any shape) or plain; unset: checker on a plane, plain otherwise"""

    PATH_FIELDS = ("sdf",)

    def __post_init__(self):
        for name in ("center", "radius", "point", "normal", "half_size", "size", "rotation_deg",
                     "minor_radius", "thickness", "extent"):
            value = getattr(self, name)
            values = value if isinstance(value, tuple) else (value,)
            if not all(math.isfinite(v) for v in values):
                raise ValueError(f"{name}: expected finite numbers, found {list(values)}")
        if self.shape == "plane" and sum(c * c for c in self.normal) == 0.0:
            raise ValueError("normal: expected a non-zero vector, found [0, 0, 0]")
        if self.shape == "sdf" and (self.sdf is None) == (self.sdf_kind is None):
            found = "both" if self.sdf is not None else "neither"
            raise ValueError(f"sdf: expected a .npy file in `sdf` or an analytic `sdf_kind` for "
                             f"shape = \"sdf\", found {found}")
        if self.sdf is not None and not self.sdf.lower().endswith(".npy"):
            raise ValueError(f"sdf: expected a .npy file, found '{self.sdf}'")
        if self.visible and self.shape not in DRAWN_BY_DEFAULT:
            raise ValueError(f"visible: expected false for shape = \"{self.shape}\" (only sphere, "
                             f"box and plane have a mesh), found true")
        if self.pattern == "checker" and self.shape != "plane":
            raise ValueError(f"pattern: expected \"noise\" or \"plain\" for shape = "
                             f"\"{self.shape}\" (the checker is a floor's, on a plane), found "
                             f"\"checker\"")
        try:
            parse_color(self.color)
        except ValueError as exc:
            raise ValueError(f"color: {exc}") from None

    @property
    def drawn(self) -> bool:
        """Whether the collider draw shows it."""
        return self.shape in DRAWN_BY_DEFAULT if self.visible is None else self.visible

    def check_files(self, resolve) -> None:
        """The scene loader's check of the SDF file (dtype, shape, finite values), as the engine
        will load it; ValueError "sdf: expected ..., found ..."."""
        if self.sdf is None:
            return
        from emberfx.systems.forces.volumes import VolumeError, load_volume

        try:
            load_volume(resolve(self.sdf), channels=1)
        except VolumeError as exc:
            raise ValueError(f"sdf: {exc}") from None
