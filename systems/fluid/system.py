"""The fluid system: position-based fluids (Macklin and Mueller 2013) on the GPU.

Per simulation step, for each fluid entity ``<e>`` and each substep ``s`` (dt = fixed_dt /
substeps), all in the SIMULATE phase:
  <e>:fluid:predict:<s>       v += g dt, p* = x + v dt, clamped into the bounds
  <e>:fluid:grid:*:s<s>       the shared neighbour grid (emberfx.blocks.neighbours) over p*
  <e>:fluid:lambda:<s>:<k>    for each iteration k: densities and the constraint multipliers
  <e>:fluid:correct:<s>:<k>   position corrections with s_corr, out of the scene's colliders
                              (colliders/scene_solids.py), clamped into the bounds (predictions
                              ping-pong between two buffers)
  <e>:fluid:update:<s>        v = (p* - x) / dt
  <e>:fluid:curl:<s>          vorticity of the velocities (for confinement)
  <e>:fluid:finish:<s>        XSPH viscosity, vorticity confinement, x = p*
and RENDER <e>:fluid:draw, a sprite per live particle (look = "particles"), or the passes of
the screen-space water surface (a look table: surface.py). Before a step,
the sources' new particles are written into the next free slots (sources.py).

Each pass is one invocation per particle slot, every sum over neighbours runs in the grid's
slot order, and no pass adds floats atomically: two runs give the same bytes. The passes that
sum over neighbours (lambda, correct, curl, finish) run in the grid's slot order, invocation t
on the particle at slot t, and read positions (and lambda, the multipliers) from copies in slot
order: the grid's snapshot, then the correct passes' second output, ping-ponging between
``sorted0`` and ``sorted1``. Neighbouring invocations then read neighbouring records, as the
neighbour query of ``bench neighbours`` does. Free slots (a
capacity beyond the fill) wait at a park point outside the bounds, in a grid cell that no
particle inside the bounds visits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.blocks.neighbours import GridShape, NeighbourGrid
from emberfx.blocks.sprites import SPRITE_INDICES, sprite_indices, sprite_pipeline, sprite_queue
from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.frame_order import in_declared_order
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array
from emberfx.core.system import EntityRef, Priority, StepInfo, System
from emberfx.model.colors import linear_color
from emberfx.model.registry import set_system
from emberfx.systems.colliders.scene_solids import SceneSolids
from emberfx.systems.fluid.component import Fluid
from emberfx.systems.fluid.sources import Inflow
from emberfx.systems.fluid.surface import WaterSurface

PARAMS = struct_dtype("fluid/types.wgsl", "FluidParams")
LOOK = struct_dtype("fluid/draw.wgsl", "FluidLook")
GROUP = wgsl.workgroup_size("fluid/predict.wgsl")[0]   # every fluid pass: one slot an invocation
RELAXATION = 0.01
"""the constraint's relaxation epsilon as a fraction of the rest lattice's sum of squared
constraint gradients (keeps lambda finite for a particle with no neighbours)"""
S_CORR_RADIUS = 0.2
"""dq of the artificial pressure, a fraction of the kernel radius (Macklin and Mueller use
0.1 to 0.3)"""
PARK_CELLS = 2
"""grid cells below the bounds' lower corner on each axis; free slots park in the lowest,
which particles inside the bounds (at least this many cells up) never visit"""
FOAM_SPEED = 6.0
"""m/s at which a sprite is drawn fully white (foam); slower ones mix toward the colour"""


def poly6_coefficient(h: float) -> float:
    return 315.0 / (64.0 * math.pi * h ** 9)


def spiky_coefficient(h: float) -> float:
    return -45.0 / (math.pi * h ** 6)


def _lattice(c: Fluid, half: bool = False) -> np.ndarray:
    """Offsets of the rest lattice's points within h of a point at the origin (x >= 0 only with
    ``half``: a point in the layer next to a wall), the origin excluded."""
    h, spacing = c.kernel, 2.0 * c.particle_radius
    n = int(math.ceil(h / spacing))
    k = np.arange(-n, n + 1)
    d = np.stack(np.meshgrid(k, k, k, indexing="ij"), -1).reshape(-1, 3) * spacing
    r = np.linalg.norm(d, axis=1)
    keep = (r > 0.0) & (r < h) & ((d[:, 0] >= 0.0) if half else True)
    return d[keep]


def lattice_density(c: Fluid) -> float:
    """V sum_j W(x_i - x_j) (the point itself included) inside the rest lattice, relative to the
    rest density: poly6 on a lattice of spacing h / 2 sums to 1.0098. The solver's poly6 is
    divided by this, so that the fill starts at rest density."""
    h = c.kernel
    r2 = np.sum(_lattice(c) ** 2, axis=1)
    return float((2.0 * c.particle_radius) ** 3 * poly6_coefficient(h)
                 * (h ** 6 + np.sum((h * h - r2) ** 3)))


def wall_integral(y: float, h: float, coefficient: float) -> float:
    """F(y) of fluid/types.wgsl: the poly6 integral over the half-space beyond distance y."""
    def primitive(z: float) -> float:
        return z * (h ** 8 - 4.0 / 3.0 * h ** 6 * z ** 2 + 1.2 * h ** 4 * z ** 4
                    - 4.0 / 7.0 * h ** 2 * z ** 6 + z ** 8 / 9.0)
    y = min(max(y, 0.0), h)
    return math.pi * coefficient / 4.0 * (primitive(h) - primitive(y))


def wall_distance(c: Fluid) -> float:
    """The distance from the wall at which F of the normalized kernel makes a rest lattice layer
    touching the wall (centres r from it) sum to the rest density: the walls' planes sit this
    far from the centres of the particles that touch them (r plus about r/10 for h = 4 r)."""
    h = c.kernel
    coefficient = poly6_coefficient(h) / lattice_density(c)
    r2 = np.sum(_lattice(c, half=True) ** 2, axis=1)
    real = (2.0 * c.particle_radius) ** 3 * coefficient * (h ** 6 + np.sum((h * h - r2) ** 3))
    lo, hi = 0.0, h   # F falls from 1/2 to 0 on [0, h]: bisect F(y) = 1 - real
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if wall_integral(mid, h, coefficient) > 1.0 - real else (lo, mid)
    return 0.5 * (lo + hi)


def lattice_gradient_sum(c: Fluid) -> float:
    """S0 = sum_j |V grad W(x_i - x_j)|^2 + |sum_j V grad W|^2 for a particle inside the rest
    lattice (spacing 2 r): the scale of the density constraint's denominator."""
    h, spacing = c.kernel, 2.0 * c.particle_radius
    d = _lattice(c)
    r = np.linalg.norm(d, axis=1)
    g = (spacing ** 3) * spiky_coefficient(h) * ((h - r) ** 2 / r)[:, None] * d
    return float(np.sum(g * g) + np.sum(np.sum(g, 0) ** 2))


@dataclass
class _Body:
    entity: EntityRef
    component: Fluid
    buffers: dict
    grid: NeighbourGrid
    contacts: SceneSolids
    inflow: Inflow
    passes: list
    n: int
    final: int            # which prediction buffer holds p* after the iterations
    surface: WaterSurface
    written: bytes = b""  # the params record last written
    look_key: tuple | None = None
    steps: int = 0


class FluidSystem(System):
    key = "fluid"
    priority = Priority.SIMULATION

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.bodies: dict[str, _Body] = {}

    def add(self, entity: EntityRef, component: Fluid) -> None:
        c, name = component, entity.name
        n = c.slots
        what = f"entity '{name}': fluid of {n:,} particle slots"
        self.gpu.check_buffer_size(16 * n, what)
        uniform, storage = wgpu.BufferUsage.UNIFORM, wgpu.BufferUsage.STORAGE
        keys = ("position", "velocity", "predicted0", "predicted1", "sorted0", "sorted1", "solve",
                "solve_sorted", "moved", "vorticity")
        b = {key: self.buffer(entity, key, 16 * n, storage, what=what) for key in keys}
        b["params"] = self.buffer(entity, "params", PARAMS.itemsize, uniform)
        b["look"] = self.buffer(entity, "look", LOOK.itemsize, uniform)
        rows = np.zeros((n, 4), np.float32)
        filled = c.initial_positions(self.shared.seed, entity.index)
        rows[:len(filled), :3] = filled
        rows[:len(filled), 3] = 1.0
        rows[len(filled):, :3] = self._park(c)
        self.resources.write(b["position"], rows.tobytes())
        self.resources.write(b["velocity"], np.zeros((n, 4), np.float32).tobytes())
        lower = c.bounds.lower - PARK_CELLS * c.kernel
        shape = GridShape.covering(lower.tolist(), c.bounds.upper.tolist(), c.kernel)
        grid = NeighbourGrid(self.build, f"{name}:fluid:grid", b["predicted0"], n, shape,
                             stride=1, position=0, copy=1, prefix="grid_")
        contacts = SceneSolids(self, entity)
        contacts.refresh()
        surface = WaterSurface(self, entity, b["position"], n)
        body = _Body(entity, c, b, grid, contacts, Inflow(len(filled)), [], n,
                     final=c.iterations % 2, surface=surface)
        if not isinstance(c.look, str):
            surface.make(c.look, c.particle_radius)
        body.passes = self._passes(body)
        self.bodies[name] = body
        self._write_uniforms(body)

    @staticmethod
    def _park(c: Fluid) -> np.ndarray:
        """Where free slots wait: inside the grid's lowest cell (see PARK_CELLS)."""
        return c.bounds.lower - (PARK_CELLS - 0.5) * c.kernel

    def _passes(self, body: _Body) -> list[Pass]:
        c, b, e = body.component, body.buffers, body.entity.name
        compute = self.build.compute
        groups = self.gpu.grid(math.ceil(body.n / GROUP))
        query = body.grid.query_bindings()
        params = b["params"]
        passes: list[Pass] = []
        for s in range(c.substeps):
            passes.append(compute(
                f"{e}:fluid:predict:{s}", Phase.SIMULATE, "fluid/predict.wgsl", groups,
                {"params": params, "position": b["position"], "velocity": b["velocity"],
                 "predicted": b["predicted0"]},
                does="gravity on each velocity, the predicted position clamped into bounds"))
            passes += body.grid.passes(Phase.SIMULATE, tag=f"s{s}")
            for k in range(c.iterations):
                # predictions in slot order: the grid's snapshot first, then ping-pong
                now = query["nb_snapshot"] if k == 0 else b[f"sorted{(k - 1) % 2}"]
                passes.append(compute(
                    f"{e}:fluid:lambda:{s}:{k}", Phase.SIMULATE, "fluid/lambda.wgsl", groups,
                    {"params": params, "sorted": now, "solve": b["solve"],
                     "solve_sorted": b["solve_sorted"], **query},
                    does="each particle's density and density constraint multiplier"))
                passes.append(compute(
                    f"{e}:fluid:correct:{s}:{k}", Phase.SIMULATE, "fluid/correct.wgsl",
                    groups, {"params": params, "sorted": now, "solve_sorted": b["solve_sorted"],
                             "corrected": b[f"predicted{(k + 1) % 2}"],
                             "corrected_sorted": b[f"sorted{k % 2}"], **query,
                             **body.contacts.bindings()},
                    does="each particle's position correction (with s_corr), out of the "
                         "colliders, clamped into the bounds"))
            final = b[f"predicted{body.final}"]
            final_sorted = b[f"sorted{(c.iterations - 1) % 2}"]
            passes.append(compute(
                f"{e}:fluid:update:{s}", Phase.SIMULATE, "fluid/update.wgsl", groups,
                {"params": params, "position": b["position"], "predicted": final,
                 "moved": b["moved"]}, does="each velocity from the corrected move"))
            passes.append(compute(
                f"{e}:fluid:curl:{s}", Phase.SIMULATE, "fluid/curl.wgsl", groups,
                {"params": params, "sorted": final_sorted, "moved": b["moved"],
                 "vorticity": b["vorticity"], **query}, does="each particle's vorticity"))
            passes.append(compute(
                f"{e}:fluid:finish:{s}", Phase.SIMULATE, "fluid/finish.wgsl", groups,
                {"params": params, "sorted": final_sorted, "moved": b["moved"],
                 "vorticity": b["vorticity"], "solve": b["solve"], "position": b["position"],
                 "velocity": b["velocity"], **query},
                does="XSPH viscosity and vorticity confinement; the position moves"))
        passes = in_declared_order(passes)
        if not isinstance(c.look, str):
            return passes + body.surface.passes
        passes.append(self.build.draw(
            f"{e}:fluid:draw", "fluid/draw.wgsl",
            sprite_pipeline(self.device, "fluid/draw.wgsl", "opaque", self.shared.scene_format,
                            self.shared.depth_format, fragment="fluid"),
            {"frame": "frame", "look": b["look"], "position": b["position"],
             "velocity": b["velocity"]},
            instances=body.n,
            index=(sprite_indices(self.resources, self.key), "uint32", len(SPRITE_INDICES)),
            order=sprite_queue("opaque"), does="a round sprite per live fluid particle"))
        return passes

    def params_record(self, c: Fluid, dt: float) -> bytes:
        """The FluidParams of ``c`` for substeps of ``dt`` seconds."""
        h, r = c.kernel, c.particle_radius
        s0 = lattice_gradient_sum(c)
        rec = np.zeros((), PARAMS)
        rec["lower"] = (*(c.bounds.lower + r), dt)
        rec["upper"] = (*(c.bounds.upper - r), h)
        rec["gravity"] = (*c.gravity, (2.0 * r) ** 3)
        rec["kernel"] = (poly6_coefficient(h) / lattice_density(c), spiky_coefficient(h),
                         RELAXATION * s0, c.rest_density)
        w_dq = poly6_coefficient(h) * (h * h * (1.0 - S_CORR_RADIUS ** 2)) ** 3
        rec["tension"] = (c.surface_tension / s0, 1.0 / w_dq, c.viscosity, c.vorticity)
        rec["park"] = (*self._park(c), wall_distance(c))
        rec["count"] = self.bodies_count(c)
        return rec.tobytes()

    @staticmethod
    def bodies_count(c: Fluid) -> int:
        return c.slots

    def _write_uniforms(self, body: _Body) -> None:
        c = body.component
        record = self.params_record(c, self.shared.fixed_dt / c.substeps)
        if record != body.written:
            self.resources.write(body.buffers["params"], record)
            body.written = record
        key = (c.color, c.particle_radius)
        if key != body.look_key:
            look = np.zeros((), LOOK)
            look["color"] = linear_color(c.color)
            look["size"][:2] = (2.0 * c.particle_radius, FOAM_SPEED)
            self.resources.write(body.buffers["look"], look.tobytes())
            body.look_key = key
        if not isinstance(c.look, str):
            body.surface.write(c.look, c.particle_radius)

    def remove(self, entity: EntityRef) -> None:
        # the registry releases its buffers, the grid's included; the surface's are its own
        self.bodies.pop(entity.name).surface.release()

    def edited(self, entity: EntityRef, component: Fluid) -> None:
        """A live edit; a look that changes between sprites and the water surface makes or
        drops the surface and the passes again (the look field rebuilds the frame graph)."""
        body = self.bodies[entity.name]
        look = component.look
        water = not isinstance(look, str)
        had = bool(body.surface.passes)
        body.component = component
        if not isinstance(look, str) and not had:
            body.surface.make(look, component.particle_radius)
        elif had and not water:
            body.surface.release()
        if water != had:
            body.passes = self._passes(body)

    def targets_changed(self) -> None:
        """New render targets: each water surface is made again at the new size."""
        for body in self.bodies.values():
            c = body.component
            if not isinstance(c.look, str):
                body.surface.make(c.look, c.particle_radius)
                body.passes = self._passes(body)

    def before_draw(self) -> None:
        for body in self.bodies.values():
            c = body.component
            if not isinstance(c.look, str):
                body.surface.write(c.look, c.particle_radius)

    def passes(self) -> list[Pass]:
        return [p for body in self.bodies.values() for p in body.passes]

    def world_changed(self) -> None:
        """Colliders came or went: an SDF file's samples are uploaded, and the passes rebuilt
        when its buffer had to grow."""
        for body in self.bodies.values():
            if body.contacts.refresh():
                body.passes = self._passes(body)

    def before_step(self, step: StepInfo) -> None:
        for body in self.bodies.values():
            body.contacts.write_step()
            self._write_uniforms(body)
            for slot, rows in body.inflow.step(body.component, step.dt, body.n):
                self.resources.write(body.buffers["position"], rows[:, 0].tobytes(), 16 * slot)
                self.resources.write(body.buffers["velocity"], rows[:, 1].tobytes(), 16 * slot)
            body.steps += 1

    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        """Every slot: ``position`` and ``velocity`` (n, 3), ``density`` (n,) in kg/m^3 (the
        last substep's estimate), ``alive`` (n,) bool."""
        body = self.bodies[entity.name]
        x = read_array(self.device, body.buffers["position"], np.float32, 4 * body.n)
        v = read_array(self.device, body.buffers["velocity"], np.float32, 4 * body.n)
        x, v = x.reshape(body.n, 4), v.reshape(body.n, 4)
        return {"position": np.ascontiguousarray(x[:, :3]),
                "velocity": np.ascontiguousarray(v[:, :3]),
                "density": np.ascontiguousarray(v[:, 3]), "alive": x[:, 3] != 0.0}

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        body = self.bodies[entity.name]
        return {"count": body.component.fill_count, "slots": body.n, "steps": body.steps}


set_system("fluid", FluidSystem)
