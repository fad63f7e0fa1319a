"""The ``particle_life`` component: species that attract and repel each other.

Kept apart from the system (systems/particle_life/system.py) so that validating a scene needs no
GPU code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live, rebuild
from emberfx.model.numbers import U32_MAX
from emberfx.model.prewarm import PrewarmSeconds, prewarm_problem, prewarm_steps
from emberfx.model.registry import component

Positive = Annotated[float, msgspec.Meta(gt=0.0)]
MAX_PREWARM_WORK = 1 << 26
"""particle-steps (count x prewarm steps) one swarm's prewarm may take before the first frame: the
default 20,000 particles prewarm up to 55 s at 60 steps/s. A particle-step visits 9 or 27
neighbouring cells, far more than an emitter's: lavapipe on 2 CPU cores runs about 0.4M a second
(minutes at the bound), a discrete GPU well under a second"""


@component("particle_life")
@dataclass(slots=True)
class ParticleLife(Tracked):
    count: Annotated[int, msgspec.Meta(ge=1, le=1 << 26)] = rebuild(20000)
    """particles (reload)"""
    species: Annotated[int, msgspec.Meta(ge=2, le=16)] = rebuild(6)
    """kinds of particle (reload)"""
    matrix: Literal["random"] | list[list[float]] = rebuild("random")
    """S x S attraction in [-1, 1]: row = the particle feeling it, column = the other; "random"
    draws one from the scene seed"""
    r_max: Positive = rebuild(0.1)
    """interaction radius, world units"""
    beta: Annotated[float, msgspec.Meta(gt=0.0, lt=1.0)] = live(0.3)
    """the repulsion zone as a fraction of r_max"""
    force: Annotated[float, msgspec.Meta(
        ge=-1e6, le=1e6, description="a larger scale throws particles across the whole box "
        "within one step")] = live(1.0)
    """scale of the acceleration"""
    friction_half_life: Positive = live(0.04)
    """seconds for the velocity to halve without forces"""
    # a list as scene files write it; __post_init__ stores it as a tuple
    box: list[Positive] = rebuild((2.0, 2.0))
    """2 numbers: a 2D wrap-around box; 3 numbers: 3D (reload); centred on `center`"""
    center: tuple[float, float, float] = live((0.0, 0.0, 0.0))
    """where the box's centre is drawn, world units"""
    reorder_every: Annotated[int, msgspec.Meta(ge=0, le=U32_MAX)] = live(8)
    """steps between reorders of the particle data by cell (0: never)"""
    neighbours: Literal["grid", "all_pairs"] = rebuild("grid")
    """grid: uniform grid + counting sort; all_pairs: every pair (reference, bench)"""
    grid_kernel: Literal["gathered", "per_particle", "cell_tiled", "baseline"] = rebuild(
        "gathered")
    """how the grid's forces are evaluated: gathered (the order pass copies positions into cell
    order; each particle reads its neighbours as 3 contiguous runs in 2D, 9 in 3D),
    per_particle (each particle reads its neighbours through the index list), cell_tiled (a
    subgroup per cell stages the neighbouring cells in workgroup memory) or baseline (the
    earliest kernels). The last three are kept to measure against; all four give the same
    bits"""
    precision: Literal["exact", "half"] = rebuild("exact")
    """exact: every grid kernel gives the same bits; half (an opt-in for grid_kernel =
    "gathered"): the neighbour loop reads positions as 16-bit fixed-point coordinates
    (<= cell size * 2^-14 off per axis) and evaluates the law without divisions. Particle life is
    chaotic: a half run drifts away from an exact one within tens of steps"""
    size: Positive = live(0.01)
    """sprite size, world units"""
    colors: list[str] | None = live(None)
    """one colour per species, in species order (repeated when there are fewer than species);
    None: hues evenly spaced around the colour wheel"""
    blend: Literal["additive", "alpha", "opaque"] = rebuild("additive")
    prewarm: PrewarmSeconds = rebuild(0.0)
    """seconds simulated when the swarm is created, so it starts organised rather than as
    uniform noise; the work, count x prewarm steps, is bounded by MAX_PREWARM_WORK"""

    # The fields that no check of several fields reads, each with what __post_init__ asks of it
    # alone besides its type (None: nothing): a live edit of these only is checked field by
    # field (component_values.checked_alone); scripts change the force every step.
    CHECKED_ALONE = {"beta": None, "force": math.isfinite, "friction_half_life": None,
                     "center": None, "reorder_every": None, "size": None}

    def __post_init__(self):
        if not isinstance(self.box, (list, tuple)) or len(self.box) not in (2, 3):
            raise ValueError(f"box: expected 2 numbers (2D) or 3 (3D), found {list(self.box)}")
        self.box = tuple(float(b) for b in self.box)  # type: ignore[assignment]  # see box
        # checked here too, not only by the loader: the cell count below needs finite sizes
        if not (math.isfinite(self.r_max) and self.r_max > 0.0):
            raise ValueError(f"r_max: expected a positive finite number, found {self.r_max}")
        if not all(math.isfinite(v) and v > 0.0 for v in self.box):
            raise ValueError(f"box: expected positive finite sizes, found {list(self.box)}")
        for k, side in enumerate(self.box):
            if math.floor(side / self.r_max) < 3:
                raise ValueError(f"box[{k}]: expected at least 3 cells of r_max = {self.r_max} "
                                 f"(>= {3 * self.r_max:g}), found {side:g}")
        cells = math.prod(math.floor(side / self.r_max) for side in self.box)
        if cells > U32_MAX:   # the neighbour grid's cells are counted and indexed in 32 bits
            raise ValueError(f"box: expected at most {U32_MAX} grid cells (box / r_max per side, "
                             f"multiplied), found {cells:.3g} for box {list(self.box)} and "
                             f"r_max = {self.r_max:g}")
        if self.precision == "half" and (self.neighbours, self.grid_kernel) != ("grid",
                                                                              "gathered"):
            raise ValueError(f'precision: "half" needs neighbours = "grid" and grid_kernel = '
                             f'"gathered", found neighbours = "{self.neighbours}", grid_kernel = '
                             f'"{self.grid_kernel}"')
        if self.colors is not None and not self.colors:
            raise ValueError("colors: expected at least one colour, found []")
        check_colors(self, "colors")
        if not math.isfinite(self.force):
            raise ValueError(f"force: expected a finite number, found {self.force}")
        if isinstance(self.matrix, list):
            s = self.species
            if len(self.matrix) != s or any(len(row) != s for row in self.matrix):
                shape = f"{len(self.matrix)} rows of " + "/".join(
                    str(len(r)) for r in self.matrix[:4]) if self.matrix else "0 rows"
                raise ValueError(f"matrix: expected {s} x {s} (species = {s}), found {shape}")
            for i, row in enumerate(self.matrix):
                for j, value in enumerate(row):
                    if not (-1.0 <= value <= 1.0):
                        raise ValueError(f"matrix[{i}][{j}]: expected a value in [-1, 1], "
                                         f"found {value}")

    @property
    def dims(self) -> int:
        return len(self.box)

    def prewarm_steps(self, fixed_dt: float) -> int:
        return prewarm_steps(self.prewarm, fixed_dt)

    def timestep_problem(self, fixed_dt: float) -> tuple[str, str] | None:
        """(field, why) for a value that is wrong only at the scene's ``fixed_dt`` (the scene
        loader asks, so ``validate`` refuses what the engine would)."""
        return prewarm_problem(
            self.prewarm, fixed_dt, per_step=self.count, per_step_text=f"{self.count:,} particles",
            measure="count", limit=MAX_PREWARM_WORK, unit="particle-steps")
