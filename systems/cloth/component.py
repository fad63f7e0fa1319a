"""The ``cloth`` component: a mass-spring cloth patch.

Kept apart from the system (systems/cloth/system.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Annotated, Literal

import msgspec
import numpy as np

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
MAX_SUBSTEPS = 256
MODE_SAMPLES = 360
"""wave-vector samples per axis when looking for the grid's stiffest mode (``stiffest_mode``)"""
MODE_MARGIN = 1.01
"""what the sampled maximum is raised by to bound the true one (between samples it is higher by
well under 0.1%: the symbol is smooth, its curvature about 10 per radian squared)"""
STABLE_BELOW = 4.0
"""semi-implicit Euler on x'' = -w^2 x - g x' is stable while h^2 w^2 + 2 h g < 4 (the
amplification matrix's determinant 1 - h g and trace 2 - h g - h^2 w^2, by the Jury test)"""


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
    substeps: Annotated[int, msgspec.Meta(ge=1, le=MAX_SUBSTEPS)] = live(16)
    """per fixed step, all in one compute pass; at least ``stable_substeps`` (stiffness, mass,
    damping and drag decide how short a substep the explicit integrator needs)"""
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
            measure="vertices x substeps", limit=MAX_PREWARM_WORK,
            unit="vertex-substeps") or self.stability_problem(fixed_dt)

    def stability(self, h: float) -> float:
        """h^2 w^2 + 2 h g for a substep of h seconds, w^2 the stiffest mode's (``stiffest_mode``
        k / m) and g its damping: the springs damp along themselves as they pull, so a mode's
        damping is (c / k) w^2, plus the air drag. The explicit step diverges from STABLE_BELOW
        on."""
        omega2, gamma = self._stiffest()
        return h * h * omega2 + 2.0 * h * gamma

    def _stiffest(self) -> tuple[float, float]:
        """(w^2, g) of the stiffest mode."""
        nx, ny = self.resolution
        aspect = (self.size[1] / (ny - 1)) / (self.size[0] / (nx - 1))
        mode = stiffest_mode(aspect)
        return (mode * self.stiffness / self.mass,
                mode * self.damping / self.mass + self.drag)

    def stable_substeps(self, fixed_dt: float) -> int:
        """The fewest substeps per fixed step of ``fixed_dt`` seconds that keep the explicit
        step stable (``stability`` below STABLE_BELOW); may exceed MAX_SUBSTEPS."""
        omega2, gamma = self._stiffest()
        # the root of h^2 w^2 + 2 h g = 4, written so it does not cancel for large g
        longest = STABLE_BELOW / (gamma + math.sqrt(gamma * gamma + STABLE_BELOW * omega2))
        needed = max(1, math.ceil(fixed_dt / longest))
        if needed <= MAX_SUBSTEPS and self.stability(fixed_dt / needed) >= STABLE_BELOW:
            needed += 1   # the root's rounding
        return needed

    def stability_problem(self, fixed_dt: float) -> tuple[str, str] | None:
        """(field, why) when the explicit step diverges (every vertex NaN within a few steps)
        at ``fixed_dt``: too few substeps, or a stiffness, mass, damping or drag no substep
        count allows; None when it is stable."""
        needed = self.stable_substeps(fixed_dt)
        if self.substeps >= needed:
            return None
        values = (f"stiffness {self.stiffness:g} N/m, mass {self.mass:g} kg, damping "
                  f"{self.damping:g} N s/m and drag {self.drag:g} 1/s at fixed_dt {fixed_dt:g} s")
        rule = (f"(explicit steps are stable while h^2 w^2 + 2h (c w^2 / k + drag) < 4, w^2 = "
                f"{self._stiffest()[0]:.4g}/s^2 the stiffest mode's, h = fixed_dt / substeps)")
        if needed <= MAX_SUBSTEPS:
            return ("substeps", f"expected substeps >= {needed} for {values} {rule}, found "
                                f"{self.substeps}")
        # the one field whose default alone would make it stable, else stiffness
        defaults = Cloth()
        field = next((name for name in ("stiffness", "mass", "damping", "drag")
                      if replace(self, **{name: getattr(defaults, name)}).stable_substeps(
                          fixed_dt) <= MAX_SUBSTEPS), "stiffness")
        return (field, f"expected a value the explicit integrator can step: {values} need "
                       f"substeps >= {needed:.3g} (at most {MAX_SUBSTEPS}) {rule}, found "
                       f"{field} = {getattr(self, field):g}")

    def pin_list(self) -> list[tuple[int, int]]:
        nx, ny = self.resolution
        if self.pins == "top-edge":
            return [(i, ny - 1) for i in range(nx)]
        if self.pins == "top-corners":
            return [(0, ny - 1), (nx - 1, ny - 1)]
        if self.pins == "none":
            return []
        return [(i, j) for i, j in self.pins]


@functools.lru_cache(maxsize=256)
def stiffest_mode(aspect: float) -> float:
    """An upper bound on the largest w^2 of the patch's spring network, in units of k / m, for
    grid cells ``aspect`` = height / width: the largest eigenvalue over wave vectors of the
    infinite grid's in-plane dynamical matrix (2 (1 - cos(theta . r)) r^ r^T summed over the 12
    springs of a vertex), sampled and raised by MODE_MARGIN. A finite patch, pinned or not, has
    none higher: its springs are a subset of the infinite grid's, so its energy u K u is at most
    that of u extended by zeros. 81/8 for square cells, approaching 49/4 for long thin ones.
    (At rest the springs are unstretched: across them they are not stiff.)"""
    theta = np.linspace(-np.pi, np.pi, MODE_SAMPLES + 1)
    tx, ty = np.meshgrid(theta[MODE_SAMPLES // 2:], theta)   # +-theta give the same matrix
    xx, xy, yy = (np.zeros_like(tx) for _ in range(3))
    for (i, j) in ((1, 0), (0, 1), (1, 1), (1, -1), (2, 0), (0, 2)):
        direction = np.array([i, j * aspect])
        ux, uy = direction / np.linalg.norm(direction)
        weight = 2.0 * (1.0 - np.cos(tx * i + ty * j))
        xx += weight * ux * ux
        xy += weight * ux * uy
        yy += weight * uy * uy
    largest = (xx + yy) / 2.0 + np.sqrt(((xx - yy) / 2.0) ** 2 + xy ** 2)
    return float(largest.max()) * MODE_MARGIN
