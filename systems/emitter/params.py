"""What the host computes for an emitter each step: the birth budget (rate with fractional carry,
emission over distance, bursts), the emitter's own velocity, the uniform parameters, and the
appearance over life baked into a lookup table. No GPU calls here: systems/emitter/system.py
uploads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from emberfx.core.layout import FieldPacker
from emberfx.model.numbers import U32_MAX
from emberfx.systems.emitter.component import Emitter, as_range, numeric
from emberfx.systems.emitter.mesh_shape import transform_rows
from emberfx.systems.emitter.structs import BLOCK, PARAMS, SHAPES
from emberfx.systems.forces.forces import MAX_FORCES, pack_forces
from emberfx.systems.forces.forces import arrange as arrange_forces

if TYPE_CHECKING:
    from emberfx.core.system import StepInfo
    from emberfx.systems.emitter.pool import Pool

# What pack_params sets (the batch layout's fields, first_block on, are the system's); a step's
# own fields (budget, frame, seed, h, time and the forces' counts) the records pages set for
# all emitters at once (records.py: RecordPages.set_step)
_NAMES = PARAMS.names or ()
FULL_PACK = FieldPacker(PARAMS, _NAMES[:_NAMES.index("first_block")])
# EmitterParams.radial: the initial direction (emitter/types.wgsl)
VELOCITY_MODES = {"direction": 0, "radial": 1, "normal": 2}
SHAPE_PACK = FieldPacker(PARAMS, ("shape_x", "shape_y", "shape_z"))   # a mesh shape's transform


@dataclass
class Births:
    """Per-emitter bookkeeping between steps."""
    carry: float = 0.0                   # fractional births carried to the next step
    last_position: tuple[float, float, float] | None = None   # the emitter's previous position
    last_budget: int = 0
    extra: int = 0                       # one-off births asked for by a script (ctx.burst)

    def step(self, c: Emitter, start: float, dt: float,
             event_target: bool = False) -> tuple[int, tuple[float, float, float]]:
        """The host's birth budget of the step covering [start, start + dt) seconds and the
        emitter's velocity (from its moving position). ``event_target``: some emitter's events
        spawn into this one (an unset `rate` is then none). Events add their births to this
        budget on the GPU (emitter/event_tally.wgsl)."""
        # Python floats, not numpy: this runs per emitter per step, where numpy's per-call
        # cost on three numbers is most of the work (a BLAS norm measured ~100 us while
        # lavapipe's threads ran); the doubles and hence the budgets are the same
        x, y, z = c.position
        last = self.last_position
        moved = (0.0, 0.0, 0.0) if last is None else (x - last[0], y - last[1], z - last[2])
        self.last_position = (float(x), float(y), float(z))
        self.carry += (c.birth_rate(event_target) * dt
                       + c.rate_over_distance * math.hypot(*moved))
        budget = int(math.floor(self.carry))
        self.carry -= budget
        if c.bursts:
            budget += sum(b.count * b.times(start, start + dt) for b in c.bursts)
        budget += self.extra
        # The GPU's budget is a u32; no step can fill more slots than that (capacity <= 2^28),
        # however far the emitter jumped or however many bursts coincide.
        budget = min(budget, U32_MAX)
        self.extra = 0
        self.last_budget = budget
        if dt > 0:
            moved = (moved[0] / dt, moved[1] / dt, moved[2] / dt)
        return budget, moved


def pack_params(record: np.ndarray, c: Emitter, *, entity: int, frame: int, seed: int, dt: float,
                budget: int, force_count: int, velocity=(0.0, 0.0, 0.0),
                accelerate_end: int | None = None, kill_start: int = 0,
                time: float = 0.0) -> bytes:
    """The EmitterParams record of one step; ``time``: seconds at its start. A field given as
    an expression (emitter/modifiers.py) is computed on the GPU: its uniform gets 1.0."""
    dx, dy, dz = c.direction
    # math.hypot, not np.linalg.norm: packed after every edit (a script may steer the emitter
    # every step), and a BLAS call on three numbers is slow while lavapipe's threads run
    length = math.hypot(dx, dy, dz)
    s = c.shape
    half = s.size
    FULL_PACK.pack(record, {
        "origin": (*c.position, 0.0),
        "direction": (dx / length, dy / length, dz / length,
                      math.cos(math.radians(c.spread_deg))),
        "gravity": (*c.gravity, c.drag),
        "inherit": (*(c.inherit_velocity * u for u in velocity), 0.0),
        "shape_size": (0.5 * half[0], 0.5 * half[1], 0.5 * half[2],
                       max(0.0, s.radius - s.thickness)),
        "shape": (s.radius, math.tan(math.radians(s.angle_deg)), c.size_variation,
                  c.color_variation),
        "speed_range": as_range(numeric(c.speed)),
        "lifetime_range": as_range(numeric(c.lifetime)),
        "capacity": c.capacity, "budget": budget, "frame": frame, "seed": seed,
        "entity": entity, "block_count": math.ceil(c.capacity / BLOCK), "h": dt,
        "size": numeric(c.size), "shape_kind": SHAPES[s.kind],
        "shape_surface": int(s.surface), "radial": VELOCITY_MODES[c.velocity],
        "size_in_pixels": int(c.size_unit == "pixels"), "substeps": c.substeps,
        "force_count": force_count,
        "accelerate_end": force_count if accelerate_end is None else accelerate_end,
        "kill_start": kill_start,
        "age_event_rate": 1.0 / c.on_age.every if c.on_age is not None else 0.0,
        "time": time})
    x, y, z = transform_rows(s)
    SHAPE_PACK.pack(record, {"shape_x": x, "shape_y": y, "shape_z": z})
    return record.tobytes()


def pack_step(pool: Pool, step: StepInfo, start: float, arranged: tuple, full: bool,
              event_target: bool) -> int:
    """Advance the pool's birth bookkeeping by the step covering [start, start + dt) and pack
    what of its params record (``pool.param_record``) is the component's: all of it after an
    edit (``full``), else only the velocity it inherits; ``arranged``: the forces on it as
    ``arrange_forces`` orders them (forces, accelerate_end, kill_start); ``event_target``:
    whether events spawn into it. Returns the host's birth budget; the step's own fields are
    the records pages' (RecordPages.set_step)."""
    c = pool.component
    budget, velocity = pool.births.step(c, start, step.dt, event_target)
    forces, accelerate_end, kill_start = arranged
    record = pool.param_record
    if full:
        pack_params(record, c, entity=pool.entity.index, frame=step.frame, seed=step.seed,
                    dt=step.dt, budget=budget, force_count=len(forces), velocity=velocity,
                    accelerate_end=accelerate_end, kill_start=kill_start, time=start)
    elif c.inherit_velocity:
        record["inherit"][:3] = [c.inherit_velocity * u for u in velocity]
    return budget


def arranged(acting: list) -> tuple[list, int | None, int]:
    """The forces acting on an emitter in the order its update reads them (at most
    MAX_FORCES): the forces, where the accelerating ones end and the killing ones start."""
    return arrange_forces(acting[:MAX_FORCES])


def force_records(pool: Pool, forces: list, step: StepInfo) -> np.ndarray:
    """The pool's Force records for the step (``forces``: at least one)."""
    volumes = pool.contacts.volume_index if pool.contacts is not None else {}
    return pack_forces(forces, step.frame * step.dt, volumes)
