"""The ``gas`` component: smoke and fire as an Eulerian gas on a box of cubic cells.

Kept apart from the system (systems/gas/system.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import numpy as np

from emberfx.model.colors import check_colors
from emberfx.model.components import Change, Tracked, live, passes, rebuild
from emberfx.model.registry import component
from emberfx.systems.emitter.tables import Shape
from emberfx.systems.forces.forces import MAX_FORCES

Positive = Annotated[float, msgspec.Meta(gt=0.0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
Vec3 = tuple[float, float, float]
Cells = Annotated[int, msgspec.Meta(ge=8, le=1024)]
CELL_MULTIPLE = 4
"""each resolution is a multiple of this: the multigrid halves the grid at least twice"""
MAX_CELLS = 1 << 25
"""cells one gas may hold (32M: 512 x 256 x 256)"""
MAX_SOURCES = 16
SOURCE_KINDS = ("sphere", "box", "point")
"""the emitter shapes a gas source may take (a point fills the cell it lies in)"""
CELL_TOLERANCE = 1e-4
"""how far size / cell may be from the resolution, relatively, before it is an error"""


def _vec(values) -> str:
    return "[" + ", ".join(f"{float(v):g}" for v in values) + "]"


@dataclass(slots=True)
class GasSource(Tracked):
    """Where gas comes from: inside ``shape`` at ``position``, each cell gains ``density``,
    ``temperature`` and ``fuel`` per second, and its velocity is set to ``velocity`` when that
    is not zero."""
    shape: Shape = live(default_factory=lambda: Shape(kind="sphere", radius=0.25))
    """an emitter shape: "sphere" (radius), "box" (size) or "point" (the cell it lies in)"""
    position: Vec3 = live((0.0, 0.2, 0.0))
    density: NonNegative = live(1.0)
    """smoke added per second (density units / s)"""
    temperature: NonNegative = live(1.0)
    """heat added per second (temperature units / s; 0 is the ambient)"""
    fuel: NonNegative = live(0.0)
    """fuel added per second; it burns where the temperature is above the gas's `ignition`"""
    velocity: Vec3 = live((0.0, 0.0, 0.0))
    """m/s the gas inside takes; [0, 0, 0]: left to the simulation"""


@dataclass(slots=True)
class GasLook(Tracked):
    """How the gas is drawn: ray marched as smoke that absorbs and scatters the scene's light
    and shadows itself, and fire that glows as a blackbody (shaders/gas/volume.wgsl)."""
    smoke_color: str = live("#bdbdbd")
    """the light smoke scatters, as a fraction per channel ('#rrggbb', sRGB as written)"""
    absorption: NonNegative = live(2.0)
    """light absorbed per unit density per world unit"""
    scattering: NonNegative = live(6.0)
    """light scattered per unit density per world unit; extinction is absorption + scattering"""
    fire_intensity: NonNegative = live(1.0)
    """the blackbody glow's scale (0: no fire light)"""
    kelvin_per_unit: Positive = live(1000.0)
    """kelvin per unit of temperature above the ambient 300 K: at the default, temperature 1 is
    1300 K (a dull red glow) and 2.5 is 2800 K (yellow)"""
    step: Positive | None = live(None)
    """the view ray's step, world units; None: half a cell"""
    fire_light: NonNegative = live(0.0)
    """the fire as a point light: its colour is the glow of every cell summed (fire_intensity x
    blackbody x the cell's volume, m^3) times this, at the glow's luminance-weighted centre;
    0: none (turning it on or off changes the gas's passes)"""
    fire_light_range: Positive = live(5.0)
    """the fire's point light's range, world units (the [entity.point_light] falloff)"""

    # the fire's point light coming or going changes the gas's passes
    VALUE_CHANGES = {"fire_light": lambda a, b: Change.PASSES if (a > 0.0) != (b > 0.0) else None}

    def __post_init__(self):
        check_colors(self, "smoke_color")


@component("gas")
@dataclass(slots=True)
class Gas(Tracked):
    resolution: tuple[Cells, Cells, Cells] = rebuild((64, 64, 64))
    """cells along x, y, z, each a multiple of 4 (reload)"""
    size: tuple[Positive, Positive, Positive] | None = rebuild(None)
    """the box's world extent; it must be resolution x cell (cells are cubes). None: from
    `cell` (reload)"""
    cell: Positive | None = rebuild(None)
    """a cell's edge, world units; None: from `size` (one of the two is given; both: they
    must agree) (reload)"""
    center: Vec3 = rebuild((0.0, 1.0, 0.0))
    """the box's centre; y is up (reload)"""
    boundary: Literal["open", "closed", "periodic"] = rebuild("open")
    """"open": a solid floor, gas leaves through the other five sides; "closed": six solid
    walls; "periodic": each side wraps to the opposite one (reload)"""
    advection: Literal["maccormack", "semi_lagrangian"] = rebuild("maccormack")
    """MacCormack with clamping (Selle et al. 2008: sharper, second order) or plain
    semi-Lagrangian (first order, smoother) (reload)"""
    buoyancy: float = live(1.0)
    """m/s^2 of lift per unit temperature"""
    weight: float = live(0.0)
    """m/s^2 of fall per unit density (smoke sinks when it outweighs its heat)"""
    vorticity: NonNegative = live(0.0)
    """vorticity confinement strength epsilon (Fedkiw et al. 2001): swirls kept from
    smoothing out"""
    burn_rate: NonNegative = live(4.0)
    """the fraction of the fuel that burns per second where it is hotter than `ignition`"""
    ignition: NonNegative = live(0.5)
    """the temperature above which fuel burns"""
    heat: NonNegative = live(2.0)
    """temperature a unit of burnt fuel adds"""
    smoke_per_fuel: NonNegative = live(0.5)
    """density a unit of burnt fuel adds"""
    cooling: NonNegative = live(0.8)
    """the fraction of the temperature lost per second (exponential)"""
    dissipation: NonNegative = live(0.1)
    """the fraction of the density (and fuel) lost per second (exponential)"""
    pressure_cycles: Annotated[int, msgspec.Meta(ge=1, le=32)] = rebuild(3)
    """multigrid V-cycles of the pressure projection per step (reload: the passes are
    unrolled)"""
    sources: list[GasSource] = live(default_factory=list)
    """where smoke, heat, fuel and motion come from (at most 16)"""
    look: GasLook = live(default_factory=GasLook)
    """how it is drawn: smoke colour, absorption, scattering and the fire's glow"""
    affected_by: list[str] | None = passes(None)
    """the attractors and force fields acting on the gas (each cell's centre and velocity
    taken as an emitter particle's); None: all of them"""

    REFERENCES = {"affected_by": ("attractor", "force_field")}
    REFERENCE_LIMITS = {"affected_by": {("attractor", "force_field"): MAX_FORCES}}

    CHECKED_ALONE = {"buoyancy": math.isfinite, "weight": math.isfinite}

    def __post_init__(self):
        for name in ("buoyancy", "weight"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise ValueError(f"{name}: expected a finite number, found {value}")
        if not all(math.isfinite(v) for v in self.center):
            raise ValueError(f"center: expected 3 finite numbers, found {list(self.center)}")
        odd = [n for n in self.resolution if n % CELL_MULTIPLE]
        if odd:
            raise ValueError(f"resolution: expected multiples of {CELL_MULTIPLE} per axis, "
                             f"found {list(self.resolution)}")
        cells = math.prod(self.resolution)
        if cells > MAX_CELLS:
            raise ValueError(f"resolution: expected at most {MAX_CELLS:,} cells, found "
                             f"{cells:,} for {list(self.resolution)}")
        if self.size is None and self.cell is None:
            raise ValueError("size: expected the box's extent (or `cell`, a cell's edge), found "
                             "neither")
        if self.size is not None:
            edges = np.asarray(self.size) / np.asarray(self.resolution)
            cell = self.cell if self.cell is not None else float(edges[0])
            if np.any(np.abs(edges - cell) > CELL_TOLERANCE * cell):
                raise ValueError(f"size: expected resolution x cell = "
                                 f"{_vec(np.asarray(self.resolution) * cell)} (cells are "
                                 f"cubes), found {_vec(self.size)}")
        if len(self.sources) > MAX_SOURCES:
            raise ValueError(f"sources: expected at most {MAX_SOURCES}, found "
                             f"{len(self.sources)}")
        for k, source in enumerate(self.sources):
            if source.shape.kind not in SOURCE_KINDS:
                raise ValueError(f"sources[{k}].shape.kind: expected one of "
                                 f"{', '.join(repr(s) for s in SOURCE_KINDS)} for a gas source, "
                                 f"found {source.shape.kind!r}")
            for name in ("position", "velocity"):
                values = getattr(source, name)
                if not all(math.isfinite(v) for v in values):
                    raise ValueError(f"sources[{k}].{name}: expected 3 finite numbers, found "
                                     f"{list(values)}")

    @property
    def edge(self) -> float:
        """A cell's edge, world units."""
        if self.cell is not None:
            return float(self.cell)
        assert self.size is not None
        return float(self.size[0]) / self.resolution[0]

    @property
    def lower(self) -> np.ndarray:
        """The box's lowest corner."""
        return np.asarray(self.center, np.float64) - 0.5 * self.edge * np.asarray(
            self.resolution, np.float64)

    @property
    def levels(self) -> int:
        """Multigrid levels: halved while every axis stays even and at least 4 cells."""
        n, levels = np.asarray(self.resolution), 1
        while np.all(n % 2 == 0) and np.all(n // 2 >= 4):
            n, levels = n // 2, levels + 1
        return levels
