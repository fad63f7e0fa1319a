"""The ``fluid`` component: position-based fluid particles in a box.

Kept apart from the system (systems/fluid/system.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import numpy as np

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live, passes, rebuild
from emberfx.model.registry import component

Positive = Annotated[float, msgspec.Meta(gt=0.0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
Vec3 = tuple[float, float, float]
Size3 = tuple[Positive, Positive, Positive]
MAX_PARTICLES = 1 << 24
"""particles one fluid may hold (capacity)"""
MAX_CELLS = 1 << 26
"""neighbour grid cells (bounds / kernel_radius, per axis, multiplied) one fluid may use"""
JITTER = 0.01
"""the fill lattice's jitter, a fraction of its spacing (at most, per axis)"""
KERNEL_RATIO = 4.0
"""kernel_radius when unset, in particle radii"""


def _vec(values) -> str:
    return "[" + ", ".join(f"{float(v):g}" for v in values) + "]"


@dataclass(slots=True)
class FillBox(Tracked):
    """A box of fluid at the start: particles on a cubic lattice of spacing 2 x particle_radius."""
    shape: Literal["box"] = rebuild("box")
    center: Vec3 = rebuild((0.0, 0.0, 0.0))
    half_size: Size3 = rebuild((0.25, 0.25, 0.25))


def _bounds(bounds) -> str:
    """The bounds as an error names them: both fields, and the box they make."""
    return (f"bounds (center {_vec(bounds.center)}, half_size {_vec(bounds.half_size)}: "
            f"{_vec(bounds.lower)} to {_vec(bounds.upper)})")


def disk_offsets(radius: float, spacing: float) -> np.ndarray:
    """(M, 2): the points of a square lattice of ``spacing`` within ``radius`` of the centre
    (the centre at least), ordered by distance, then angle."""
    n = int(radius / spacing)
    i, j = np.meshgrid(np.arange(-n, n + 1), np.arange(-n, n + 1), indexing="ij")
    a, b = i.reshape(-1) * spacing, j.reshape(-1) * spacing
    keep = a * a + b * b <= radius * radius + 1e-12
    a, b = a[keep], b[keep]
    order = np.lexsort((np.arctan2(b, a), np.round(np.hypot(a, b) / spacing, 6)))
    return np.stack([a[order], b[order]], -1)


@dataclass(slots=True)
class Source(Tracked):
    """A disk inflow: ``rate`` particles a second enter at ``position`` across a disk of
    ``radius`` facing ``direction``, moving at ``speed`` along it."""
    position: Vec3 = live((0.0, 0.0, 0.0))
    direction: Vec3 = live((0.0, -1.0, 0.0))
    radius: Positive = live(0.05)
    speed: NonNegative = live(1.0)
    """m/s"""
    rate: NonNegative = live(300.0)
    """particles per second (until the fluid's capacity is full); at most a lattice layer of
    the disk each 2 x particle_radius the flow moves"""


@dataclass(slots=True)
class Water(Tracked):
    """The screen-space water look (systems/fluid/surface.py): the particles' spheres smoothed
    into one surface that reflects the sky (Fresnel), refracts what is behind it and absorbs
    light with its thickness (Beer-Lambert)."""
    color: str = live("#2f86c8")
    """the tint light takes through the water: after 1 / absorption metres of water the
    light behind it is multiplied by this colour (and light scattered back from deep water
    has it)"""
    absorption: NonNegative = live(2.0)
    """1/m: how many times the tint applies per metre of water (0: clear water)"""
    ior: Annotated[float, msgspec.Meta(ge=1.0, le=3.0)] = live(1.33)
    """the index of refraction: the Fresnel reflectance at normal incidence and how far the
    background is displaced (1: no refraction)"""
    sky: str = live("#a8c4dc")
    """the sky the surface reflects (Fresnel), at the horizon; darker overhead and below"""

    def __post_init__(self):
        check_colors(self, "color", "sky")


@dataclass(slots=True)
class Bounds(Tracked):
    """The box the fluid stays in (its particles' spheres stay inside)."""
    center: Vec3 = rebuild((0.0, 0.0, 0.0))
    half_size: Size3 = rebuild((1.0, 1.0, 1.0))

    @property
    def lower(self) -> np.ndarray:
        return np.asarray(self.center, np.float64) - np.asarray(self.half_size, np.float64)

    @property
    def upper(self) -> np.ndarray:
        return np.asarray(self.center, np.float64) + np.asarray(self.half_size, np.float64)


@component("fluid")
@dataclass(slots=True)
class Fluid(Tracked):
    particle_radius: Positive = rebuild(0.02)
    """world units; the fill lattice's spacing is twice this (reload)"""
    kernel_radius: Positive | None = rebuild(None)
    """the smoothing kernels' support, world units; None: 4 x particle_radius (reload)"""
    rest_density: Positive = live(1000.0)
    """kg/m^3; a particle's mass is rest_density x (2 x particle_radius)^3"""
    iterations: Annotated[int, msgspec.Meta(ge=1, le=64)] = rebuild(4)
    """density solver iterations per substep (reload: the passes are unrolled)"""
    substeps: Annotated[int, msgspec.Meta(ge=1, le=16)] = rebuild(2)
    """substeps per fixed step, each with a fresh neighbour grid (reload)"""
    viscosity: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] = live(0.01)
    """XSPH: the fraction of the neighbours' mean relative velocity blended in each substep"""
    vorticity: NonNegative = live(0.0)
    """vorticity confinement strength (epsilon), m/s^2 per unit vorticity"""
    surface_tension: NonNegative = live(0.01)
    """strength k of the artificial pressure s_corr = -k (W(r) / W(0.2 h))^4 (Macklin and
    Mueller 2013), as a fraction of the density constraint's scale; 0: off"""
    gravity: Vec3 = live((0.0, -9.81, 0.0))
    """m/s^2"""
    fill: list[FillBox] = rebuild(default_factory=lambda: [FillBox()])
    """boxes of fluid at the start (reload)"""
    bounds: Bounds = rebuild(default_factory=Bounds)
    """the box the fluid stays in (reload)"""
    sources: list[Source] = live(default_factory=list)
    """disk inflows that fill the free slots (capacity beyond the fill)"""
    capacity: Annotated[int, msgspec.Meta(ge=1, le=MAX_PARTICLES)] | None = rebuild(None)
    """particle slots; None: exactly the particles of `fill` (reload)"""
    look: Literal["particles"] | Water = passes("particles")
    """"particles": a round lit sprite per particle; a table (color, absorption, ior, sky): one
    smoothed, refracting water surface rendered in screen space (docs/guides/fluids.md)"""
    color: str = live("#3f8fd8")
    """the sprites' colour (look = "particles")"""

    CHECKED_ALONE = {"rest_density": None, "viscosity": None, "vorticity": math.isfinite,
                     "surface_tension": math.isfinite}

    def __post_init__(self):
        r = self.particle_radius
        for name in ("particle_radius", "rest_density", "vorticity", "surface_tension"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise ValueError(f"{name}: expected a finite number, found {value}")
        if not all(math.isfinite(g) for g in self.gravity):
            raise ValueError(f"gravity: expected 3 finite numbers, found {list(self.gravity)}")
        h = self.kernel_radius
        if h is not None and not (math.isfinite(h) and 2.0 * r < h <= 8.0 * r):
            raise ValueError(f"kernel_radius: expected more than 2 x particle_radius "
                             f"({2 * r:g}) and at most 8 x ({8 * r:g}), found {h:g}")
        bounds = self.bounds
        for name in ("center", "half_size"):
            if not all(math.isfinite(v) for v in getattr(bounds, name)):
                raise ValueError(f"bounds.{name}: expected 3 finite numbers, found "
                                 f"{list(getattr(bounds, name))}")
        if np.any(np.asarray(bounds.half_size) < 2.0 * r):
            raise ValueError(f"bounds.half_size: expected at least 2 x particle_radius "
                             f"({2 * r:g}) per axis, found {_vec(bounds.half_size)}")
        cells = np.prod(np.ceil(2.0 * np.asarray(bounds.half_size) / self.kernel) + 3.0)
        if cells > MAX_CELLS:
            raise ValueError(f"bounds.half_size: expected at most {MAX_CELLS:,} grid cells of "
                             f"kernel_radius = {self.kernel:g}, found {cells:,.0f} for "
                             f"{_vec(bounds.half_size)}")
        if not self.fill:
            raise ValueError("fill: expected at least one box of fluid, found none")
        lower, upper = bounds.lower, bounds.upper
        for k, box in enumerate(self.fill):
            c, s = np.asarray(box.center), np.asarray(box.half_size)
            if not (np.all(np.isfinite(c)) and np.all(np.isfinite(s))):
                raise ValueError(f"fill[{k}]: expected finite center and half_size, found "
                                 f"{list(box.center)} and {list(box.half_size)}")
            if np.any(s < r):
                raise ValueError(f"fill[{k}].half_size: expected at least particle_radius "
                                 f"({r:g}) per axis, found {_vec(box.half_size)}")
            if np.any(c - s < lower - 1e-9) or np.any(c + s > upper + 1e-9):
                raise ValueError(f"fill[{k}]: expected a box inside {_bounds(bounds)}, found "
                                 f"{_vec(c - s)} to {_vec(c + s)}")
        filled = self.fill_count
        if filled > MAX_PARTICLES:
            raise ValueError(f"fill: expected at most {MAX_PARTICLES:,} particles, found "
                             f"{filled:,} (larger particle_radius, or smaller boxes)")
        if self.capacity is not None and self.capacity < filled:
            raise ValueError(f"capacity: expected at least the {filled:,} particles of fill, "
                             f"found {self.capacity:,}")
        for k, source in enumerate(self.sources):
            values = (*source.position, *source.direction, source.radius, source.speed,
                      source.rate)
            if not all(math.isfinite(v) for v in values):
                raise ValueError(f"sources[{k}]: expected finite numbers, found {values}")
            if not any(source.direction):
                raise ValueError(f"sources[{k}].direction: expected a non-zero vector, found "
                                 f"{_vec(source.direction)}")
            if np.any(np.asarray(source.position) < lower) or np.any(
                    np.asarray(source.position) > upper):
                raise ValueError(f"sources[{k}].position: expected a point inside "
                                 f"{_bounds(bounds)}, found {_vec(source.position)}")
            across = source.radius / (2.0 * r)   # lattice spacings across the disk's radius
            if math.pi * across * across > MAX_PARTICLES:
                raise ValueError(f"sources[{k}].radius: expected a disk of at most "
                                 f"{MAX_PARTICLES:,} lattice points of 2 x particle_radius, "
                                 f"found radius {source.radius:g} (about "
                                 f"{math.pi * across * across:,.0f})")
            most = len(disk_offsets(source.radius, 2.0 * r)) * source.speed / (2.0 * r)
            if source.rate > most:
                raise ValueError(f"sources[{k}].rate: expected at most {most:,.0f} particles/s "
                                 f"(the disk's {len(disk_offsets(source.radius, 2.0 * r))} "
                                 f"lattice points x speed / (2 x particle_radius): more would "
                                 f"start inside each other), found {source.rate:g}")
        if self.sources and self.slots <= filled:
            raise ValueError(f"capacity: expected more slots than the {filled:,} particles of "
                             f"fill, for sources to fill, found {self.capacity}")
        check_colors(self, "color")

    @property
    def kernel(self) -> float:
        """The kernel radius h (kernel_radius, or its default)."""
        if self.kernel_radius is not None:
            return self.kernel_radius
        return KERNEL_RATIO * self.particle_radius

    @property
    def mass(self) -> float:
        return self.rest_density * (2.0 * self.particle_radius) ** 3

    def lattice(self, k: int) -> tuple[int, int, int]:
        """Particles per axis of fill box ``k``."""
        s = np.asarray(self.fill[k].half_size, np.float64)
        n = np.maximum(1, np.floor(s / self.particle_radius + 1e-6)).astype(int)
        return int(n[0]), int(n[1]), int(n[2])

    @property
    def fill_count(self) -> int:
        return sum(math.prod(self.lattice(k)) for k in range(len(self.fill)))

    @property
    def slots(self) -> int:
        return self.capacity if self.capacity is not None else self.fill_count

    def initial_positions(self, seed: int, entity: int) -> np.ndarray:
        """(fill_count, 3) float64: each box's lattice, x fastest, jittered by at most JITTER of
        the spacing per axis (from the scene seed)."""
        rng = np.random.default_rng([seed, entity, 0xF1D])
        spacing = 2.0 * self.particle_radius
        out = []
        for k, box in enumerate(self.fill):
            nx, ny, nz = self.lattice(k)
            start = (np.asarray(box.center) - np.asarray(box.half_size) + self.particle_radius)
            z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
            grid = np.stack([x, y, z], -1).reshape(-1, 3) * spacing + start
            out.append(grid)
        points = np.concatenate(out)
        return points + rng.uniform(-JITTER, JITTER, points.shape) * spacing
