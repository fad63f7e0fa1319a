"""Particles that see each other, an emitter feature: a neighbour grid over the emitter's slots
(emberfx.blocks.neighbours; dead slots are in no cell), read by ``update`` modifiers within
``neighbour_radius`` (neighbours(), next_neighbour(), neighbour_state(): modifier_code.py
writes them), by boids (``boids``) in the update, and by particle collision
(``particle_collision``) after it.

What the feature adds, and where (emitter/features.py lists the features):
  batch key  none: the emitter runs alone (its grid is over its own slots)
  one pass   no: the update binds the grid in group 2, which the one-pass update uses
  record     ``neighbour_params`` (NeighbourParams, emitter/neighbour_types.wgsl), packed after
             an edit of the fields it is packed from
  includes   emitter/neighbours.wgsl for emitter/neighbour_hooks.wgsl in the update
  buffers    the grid's (``nb_*``), made with the simulation; with particle collision two
             sweeps' positions; with attributes and a neighbour_radius, a copy of the
             attributes as the step began (``nb_attributes``, what neighbour_state reads)
  passes     before the update: the grid over the particles as the step begins (and the
             attributes' copy), when boids or modifiers read it; after the step's births: the
             grid again, ``iterations`` projection sweeps and the finish
             (emitter/particle_project.wgsl, particle_finish.wgsl)

The grid's cells are as large as the largest radius it serves (particle collision: its contact
distance 2 x radius, and a quarter more, for the sweeps' moves). It is a box grid over the boids'
box when there is one, else a hashed grid over all of space.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.blocks.neighbours import GridShape, NeighbourGrid, query_include
from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.frame_order import in_declared_order
from emberfx.core.layout import struct_dtype
from emberfx.systems.emitter.feature import EmitterFeature, Record
from emberfx.systems.emitter.shader_names import UPDATE
from emberfx.systems.emitter.structs import PARTICLE, RECORD

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

TYPES = "emitter/neighbour_types.wgsl"
NEIGHBOUR_PARAMS = struct_dtype(TYPES, "NeighbourParams")
HOOKS, SWAPPED = "emitter/neighbour_hooks.wgsl", "emitter/neighbours.wgsl"
ALIVE = "emitter/neighbours_alive.wgsl"
PROJECT, FINISH = "emitter/particle_project.wgsl", "emitter/particle_finish.wgsl"
QUERY_GROUP = 2   # the update's group for the grid (group 1: the modifiers' attributes)
QUERY_INCLUDE = query_include(QUERY_GROUP)   # emitter/neighbours.wgsl includes it by this name
QUERY_KEYS = ("nb_grid", "nb_cell_start", "nb_cell_particles", "nb_snapshot")
CONTACT_MARGIN = 1.25   # grid cells per contact distance: room for the sweeps' moves
FLAGS = wgsl.enum_constants(TYPES, "NEIGHBOURS")   # boids, bounds, wrap, contacts
STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC


def reads_in_update(c) -> bool:
    """Whether the update reads the grid (boids, or modifiers within a neighbour_radius)."""
    return c.boids is not None or c.neighbour_radius > 0.0


def cell_size(c) -> float:
    """The largest radius the grid serves."""
    radii = [c.neighbour_radius]
    if c.boids is not None:
        radii.append(c.boids.radius)
    if c.particle_collision is not None:
        radii.append(2.0 * c.particle_collision.radius * CONTACT_MARGIN)
    return max(radii)


def grid_shape(c, points: int) -> GridShape:
    """A box grid over the boids' box (cells that tile it exactly, so that the cells wrap),
    else a hashed grid over all of space (buckets: GridShape.hashed's default for ``points``)."""
    size = cell_size(c)
    bounds = c.boids.bounds if c.boids is not None else None
    if bounds is None:
        return GridShape.hashed(size, points=points)
    edges = [2.0 * h for h in bounds.half_size]
    cells = [max(1, math.floor(e / size)) for e in edges]
    lower = [m - h for m, h in zip(bounds.center, bounds.half_size)]
    shape = GridShape((lower[0], lower[1], lower[2]),
                      (edges[0] / cells[0], edges[1] / cells[1], edges[2] / cells[2]),
                      (cells[0], cells[1], cells[2]))
    shape.check()
    return shape


def pack_params(c) -> bytes:
    rec = np.zeros((), NEIGHBOUR_PARAMS)
    rec["radius"] = c.neighbour_radius
    flags = 0
    if c.boids is not None:
        b = c.boids
        flags |= FLAGS["boids"]
        rec["boids_radius"], rec["max_speed"] = b.radius, b.max_speed
        rec["separation"], rec["alignment"], rec["cohesion"] = (b.separation, b.alignment,
                                                                 b.cohesion)
        if b.bounds is not None:
            flags |= FLAGS["bounds"] | (FLAGS["wrap"] if b.bounds.wrap else 0)
            rec["bounds_center"][:3] = b.bounds.center
            rec["bounds_size"][:3] = [2.0 * h for h in b.bounds.half_size]
    if c.particle_collision is not None:
        pc = c.particle_collision
        rec["contact"] = 2.0 * pc.radius
        rec["restitution"], rec["friction"] = pc.restitution, pc.friction
        flags |= FLAGS["contacts"]
    rec["flags"] = flags
    return rec.tobytes()


class NeighboursFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "neighbours"

    def applies(self, component) -> bool:
        c = component
        return c.neighbour_radius > 0.0 or c.boids is not None or c.particle_collision is not None

    def batch_key(self, component, resolve) -> tuple | None:
        return None

    def one_pass(self, component) -> bool:
        return False

    def records(self) -> dict[str, Record]:
        return {"neighbour_params": Record(RECORD, NEIGHBOUR_PARAMS.itemsize)}

    def record_key(self, component, key: str) -> tuple:
        c = component
        return (c.neighbour_radius, repr(c.boids), repr(c.particle_collision))

    def pack_record(self, component, key: str) -> bytes:
        return pack_params(component)

    def includes(self, base: str) -> dict[str, str]:
        return {HOOKS: SWAPPED} if base == UPDATE else {}

    def constants(self, base: str, sim: Simulation) -> dict:
        grid = sim.parts[self.name]
        assert isinstance(grid, NeighbourGrid)
        return grid.query_constants() if base == UPDATE else {}

    def bindings(self, base: str, buffers: dict) -> dict:
        if base != UPDATE:
            return {}
        out = {k: buffers[k] for k in QUERY_KEYS}
        out["nb_params"] = buffers["neighbour_params"]
        out["nb_support"] = buffers["nb_support"]
        if "nb_attributes" in buffers:
            out["nb_attributes"] = buffers["nb_attributes"]
        return out

    def simulation(self, system: EmitterHost, pool: Pool, sim: Simulation) -> None:
        c, b = pool.component, sim.buffers
        n = b["particles"].size // PARTICLE.itemsize   # every slot
        grid = NeighbourGrid(system.build, f"{sim.name}:emitter:neighbours", b["particles"], n,
                             grid_shape(c, n), stride=2, position=0, copy=2, prefix="nb_",
                             alive=ALIVE)
        b.update(grid.query_bindings())
        sim.parts[self.name] = grid
        # the support particle collision keeps per slot (a stand-in without it)
        b["nb_support"] = system.buffer(pool.entity, "nb_support",
                                        16 * n if c.particle_collision else 16, STORAGE)
        if c.particle_collision is not None:
            for key in ("nb_sweep_a", "nb_sweep_b"):
                b[key] = system.buffer(pool.entity, key, 16 * n, STORAGE)
        if "attributes" in b and c.neighbour_radius > 0.0:
            b["nb_attributes"] = system.buffer(pool.entity, "nb_attributes",
                                               b["attributes"].size, STORAGE)

    def step_passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass]) -> list[Pass]:
        c, b = pool.component, sim.buffers
        grid = sim.parts[self.name]
        assert isinstance(grid, NeighbourGrid)
        prefix = grid.name
        passes = [p for p in passes if not p.name.startswith(prefix)]
        at = next(i for i, p in enumerate(passes) if p.name.endswith(":emitter:update"))
        before: list[Pass] = []
        if reads_in_update(c):
            before = grid.passes(Phase.SIMULATE, tag="update")
            if "nb_attributes" in b:
                before.append(system.build.copy(
                    f"{prefix}:attributes", Phase.SIMULATE, b["attributes"], b["nb_attributes"],
                    b["attributes"].size))
        after = self._collision_passes(system, pool, sim, grid) if c.particle_collision else []
        own = f"{sim.name}:emitter:"
        last = max(i for i, p in enumerate(passes)
                   if p.phase in (Phase.SIMULATE, Phase.PREPARE) and p.name.startswith(own))
        out = [*passes[:at], *before, *passes[at:last + 1], *after, *passes[last + 1:]]
        return in_declared_order(out)

    def _collision_passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
                          grid: NeighbourGrid) -> list[Pass]:
        """The grid over the particles after the step's births, the sweeps, the finish."""
        b, build = sim.buffers, system.build
        pc = pool.component.particle_collision
        assert pc is not None and pool.contacts is not None
        solid_kinds = pool.variant[1]
        groups = system.gpu.grid(math.ceil(grid.n / 64))
        out = grid.passes(Phase.SIMULATE, tag="contacts")
        source, stride = b["nb_snapshot"], 2
        sweeps = (b["nb_sweep_a"], b["nb_sweep_b"])
        for k in range(pc.iterations):
            target = sweeps[k % 2]
            out.append(build.compute(
                f"{grid.name}:project:{k}", Phase.SIMULATE, PROJECT, groups,
                {"nb_params": b["neighbour_params"], "positions_in": source,
                 "positions_out": target, "emitters": b["params"], **pool.contacts.bindings(),
                 **grid.query_bindings()},
                constants={"IN_STRIDE": stride, "HAS_COLLISIONS": solid_kinds != 0,
                           "SOLID_KINDS": solid_kinds, **grid.query_constants()},
                does=f"projection sweep {k + 1} of {pc.iterations}: touching particles apart, "
                     f"out of the colliders"))
            source, stride = target, 1
        out.append(build.compute(
            f"{grid.name}:finish", Phase.SIMULATE, FINISH, groups,
            {"nb_params": b["neighbour_params"], "emitters": b["params"], "positions": source,
             "particles": b["particles"], "support": b["nb_support"], **pool.contacts.bindings(),
             **grid.query_bindings()},
            constants={"HAS_COLLISIONS": solid_kinds != 0, "SOLID_KINDS": solid_kinds,
                       **grid.query_constants()},
            does="the projected positions, the velocities they imply, restitution and friction "
                 "between touching particles"))
        return out
