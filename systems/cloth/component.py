"""The ``cloth`` component: a mass-spring cloth patch.

Kept apart from the system (systems/cloth/system.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live, passes, rebuild
from emberfx.model.prewarm import PrewarmSeconds, prewarm_problem, prewarm_steps
from emberfx.model.registry import component

Positive = Annotated[float, msgspec.Meta(gt=0.0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
Vec3 = tuple[float, float, float]
# a pin's grid coordinate: bounded here so that an absurd number is refused by the loader (with
# its place) before __post_init__ formats it; the range within the resolution is checked there
GridIndex = Annotated[int, msgspec.Meta(le=4095)]
MAX_PREWARM_WORK = 1 << 29
"""vertex-substeps (vertices x substeps x prewarm steps) one patch's prewarm may take before the
first frame: the default 32 x 24 patch at 16 substeps prewarms the full 60 s at 60 steps/s (44M),
a 256 x 256 one about 8.5 s (lavapipe on 2 CPU cores runs about 9M a second, so about a minute
at the bound)"""


@component("cloth")
@dataclass(slots=True)
class Cloth(Tracked):
    resolution: tuple[Annotated[int, msgspec.Meta(ge=2, le=4096)],
                      Annotated[int, msgspec.Meta(ge=2, le=4096)]] = rebuild((32, 24))
    """vertices along x and y (reload)"""
    size: tuple[Positive, Positive] = rebuild((2.0, 1.5))
    """world units (reload)"""
    position: Vec3 = rebuild((0.0, 0.0, 0.0))
    """corner (0, 0) of the patch; the patch lies in the x-y plane, row ny - 1 on top (reload)"""
    rotation_deg: Vec3 = rebuild((0.0, 0.0, 0.0))
    """rotation about x, then y, then z around `position`, degrees (reload)"""
    pins: Literal["top-edge", "top-corners", "none"] | list[tuple[GridIndex, GridIndex]] = rebuild(
        "top-corners")
    """grid coordinates [i, j] held in place, or a preset (reload)"""
    pin_offset: Vec3 = live((0.0, 0.0, 0.0))
    """moves every pin by this much (live: animate it from a script)"""
    stiffness: Positive = live(2000.0)
    """N/m per spring"""
    damping: NonNegative = live(0.5)
    """spring damping, N s/m along each spring"""
    drag: NonNegative = live(0.0)
    """air drag, 1/s"""
    mass: Positive = live(0.01)
    """kg per vertex"""
    gravity: Vec3 = live((0.0, -9.81, 0.0))
    substeps: Annotated[int, msgspec.Meta(ge=1, le=256)] = live(16)
    """per fixed step, all in one compute pass"""
    solver: Literal["explicit"] = live("explicit")
    """explicit mass-spring (semi-implicit Euler)"""
    color: str = live("#d94f3d")
    checker: str | None = live("#f2e9dc")
    """second colour of a checker pattern; None: plain"""
    checker_cells: tuple[Annotated[int, msgspec.Meta(ge=1, le=4096)],
                         Annotated[int, msgspec.Meta(ge=1, le=4096)]] = live((8, 6))
    """checker squares along x and y"""
    wireframe: bool = passes(False)
    affected_by: list[str] | None = passes(None)
    """force_field (wind) and collider entities acting on it; None = all"""
    prewarm: PrewarmSeconds = rebuild(0.0)
    """seconds simulated when the patch is created, so it starts hanging rather than flat; the
    work, vertices x substeps x prewarm steps, is bounded by MAX_PREWARM_WORK"""

    REFERENCES = {"affected_by": ("force_field", "collider")}

    def __post_init__(self):
        nx, ny = self.resolution
        if isinstance(self.pins, list):
            for k, (i, j) in enumerate(self.pins):
                if not (0 <= i < nx and 0 <= j < ny):
                    raise ValueError(f"pins[{k}]: expected grid coordinates within "
                                     f"[0, {nx - 1}] x [0, {ny - 1}] (resolution = [{nx}, {ny}]), "
                                     f"found [{i}, {j}]")
        check_colors(self, "color", "checker")

    def prewarm_steps(self, fixed_dt: float) -> int:
        return prewarm_steps(self.prewarm, fixed_dt)

    def timestep_problem(self, fixed_dt: float) -> tuple[str, str] | None:
        """(field, why) for a value that is wrong only at the scene's ``fixed_dt`` (the scene
        loader asks, so ``validate`` refuses what the engine would)."""
        nx, ny = self.resolution
        return prewarm_problem(
            self.prewarm, fixed_dt, per_step=nx * ny * self.substeps,
            per_step_text=f"{nx}x{ny} vertices x {self.substeps} substeps",
            measure="vertices x substeps", limit=MAX_PREWARM_WORK, unit="vertex-substeps")

    def pin_list(self) -> list[tuple[int, int]]:
        nx, ny = self.resolution
        if self.pins == "top-edge":
            return [(i, ny - 1) for i in range(nx)]
        if self.pins == "top-corners":
            return [(0, ny - 1), (nx - 1, ny - 1)]
        if self.pins == "none":
            return []
        return [(i, j) for i, j in self.pins]
