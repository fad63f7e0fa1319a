"""The particle-life system: species attracting and repelling each other, with a
uniform-grid neighbour search built by a counting sort each step.

Per simulation step, for each particle_life entity (neighbours = "grid"); clear ... order are
the shared neighbour grid's build (emberfx.blocks.neighbours, over the particles):
  CLEAR     <e>:particle_life:clear        zero the per-cell counts
  SIMULATE  <e>:particle_life:assign       each particle's cell, and cell counts (atomics); the
                                           count each atomicAdd returned is the particle's slot
            <e>:particle_life:cells:scan:* exclusive prefix sum of the counts = cell starts
                                           (emberfx.blocks.scan, parallel)
            <e>:particle_life:scatter      particle indices into their cell's runs: start + slot
            <e>:particle_life:order        each cell's indices ascending (a deterministic sum
                                           order), a workgroup per cell; for gathered, also the
                                           positions copied into cell order (<e>/gathered)
            <e>:particle_life:forces       the 9 (2D) or 27 (3D) cells around each particle's,
                                           force law, friction, Euler, wrap; every
                                           `reorder_every` steps the output is written in cell
                                           order (neighbours adjacent). grid_kernel picks how:
                                           gathered (an invocation per particle, each row of 3
                                           cells one contiguous run of <e>/gathered),
                                           per_particle (an invocation per particle, through the
                                           index list) or cell_tiled (a subgroup per cell,
                                           neighbours staged in workgroup memory);
                                           precision = "half": gathered from 8-byte records
                                           (<e>/gathered_half, forces_half.wgsl), approximate
  RENDER    <e>:particle_life:draw         sprites coloured by species
grid_kernel = "baseline" (the earlier kernels, kept to measure against: the same bits) counts
without slots, copies the starts to cursors (<e>:particle_life:cursor) for an atomic scatter,
and takes the minimum image of every neighbour (forces.wgsl).

The particle buffers ping-pong between steps; an id buffer travels with the data, so state()
returns rows in the original particle order whatever the reordering did.

A ``prewarm`` runs round(prewarm / fixed_dt) of these steps when the entity is created, batched
(emberfx.core.step_batches), with frames 0, 1, ... as the scene's own first steps would have.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.blocks.neighbours import GridShape, NeighbourGrid
from emberfx.blocks.sprites import SPRITE_INDICES, sprite_indices, sprite_pipeline, sprite_queue
from emberfx.core import step_batches, wgsl
from emberfx.core.errors import DeviceLimitError
from emberfx.core.frame_graph import SIMULATION_PHASES, FrameGraph, Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array
from emberfx.core.step_batches import PrewarmNotice, StagedUniforms
from emberfx.core.system import EntityRef, Priority, StepInfo, System
from emberfx.model.colors import linear_color, srgb_to_linear
from emberfx.model.prewarm import check_timestep
from emberfx.model.registry import set_system
from emberfx.systems.particle_life.component import ParticleLife

PARTICLE = struct_dtype("particle_life/types.wgsl", "LifeParticle")
# one invocation per particle (assign, scatter, forces, forces_all_pairs)
PARTICLE_GROUP = wgsl.workgroup_size("particle_life/assign.wgsl")[0]
# home cells per workgroup of forces_tiled.wgsl
TILED_CELLS = (wgsl.workgroup_size("particle_life/forces_tiled.wgsl")[0]
               // wgsl.int_constant("particle_life/forces_tiled.wgsl", "CELL_LANES"))
PARAMS = struct_dtype("particle_life/types.wgsl", "PLParams")
LOOK = struct_dtype("particle_life/draw.wgsl", "PLLook")


GATHERED_BYTES = {"gathered": 16, "gathered_half": 8}
"""bytes per particle of the positions in cell order: a vec4f (the neighbour grid's snapshot), or
the record of particle_life/half_positions.wgsl (precision = "half")"""


def _gathered_key(component: ParticleLife) -> str | None:
    """The buffer of positions in cell order that the order and forces passes share, if any."""
    if component.neighbours != "grid" or component.grid_kernel != "gathered":
        return None
    return "gathered_half" if component.precision == "half" else "gathered"


def grid_for(box: Sequence[float], r_max: float) -> tuple[int, int, int]:
    """Cells per axis: as many as fit with a side >= r_max (z = 1 in 2D)."""
    cells = [max(1, math.floor(side / r_max)) for side in box]
    return (cells[0], cells[1], cells[2] if len(cells) == 3 else 1)


def attraction_matrix(component: ParticleLife, seed: int, entity: int) -> np.ndarray:
    if isinstance(component.matrix, list):
        return np.asarray(component.matrix, np.float32)
    rng = np.random.default_rng([seed, entity, 0x5EED])
    return rng.uniform(-1.0, 1.0, (component.species, component.species)).astype(np.float32)


def initial_particles(component: ParticleLife, seed: int, entity: int) -> np.ndarray:
    """Positions uniform in the box, velocities zero, species uniform (from the scene seed)."""
    rng = np.random.default_rng([seed, entity, 0x9A27])
    n, box = component.count, np.asarray(component.box, np.float64)
    rows = np.zeros(n, PARTICLE)
    position = np.zeros((n, 4), np.float32)
    inside = (rng.uniform(0.0, 1.0, (n, len(box))) * box).astype(np.float32)
    position[:, :len(box)] = np.minimum(inside, np.nextafter(box.astype(np.float32), 0))
    position[:, 3] = rng.integers(0, component.species, n)
    rows["position"] = position
    return rows


@dataclass
class _Swarm:
    entity: EntityRef
    component: ParticleLife
    buffers: dict   # the registry's <entity>/<key> views, by key
    passes: list
    neighbours: NeighbourGrid | None   # the grid's counting sort (neighbours = "grid")
    grid: tuple[int, int, int]   # cells per axis
    cells: int
    parity: int = 0           # which particle buffer holds the current state
    step_parity: int = 0
    steps: int = 0
    groups: dict = field(default_factory=dict)
    look_key: tuple | None = None   # the look fields last written into the "look" uniform
    written_params: bytes = b""     # the params record last written (most steps repeat it)


def species_palette(c: ParticleLife) -> np.ndarray:
    """The (16, 4) linear RGBA colour of each species: ``colors`` in species order, repeated, or
    hues evenly spaced around the colour wheel."""
    palette = np.zeros((16, 4), np.float32)
    for s in range(c.species):
        if c.colors is not None:
            palette[s] = linear_color(c.colors[s % len(c.colors)])
        else:
            rgb = colorsys.hsv_to_rgb(s / c.species, 0.75, 1.0)
            palette[s] = (*(srgb_to_linear(v) for v in rgb), 1.0)
    return palette


class ParticleLifeSystem(System):
    key = "particle_life"
    priority = Priority.SIMULATION

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.swarms: dict[str, _Swarm] = {}

    def add(self, entity: EntityRef, component: ParticleLife) -> None:
        name, n = entity.name, component.count
        check_timestep(component, self.key, self.shared.fixed_dt, self.shared.scene_path, name)
        grid = grid_for(component.box, component.r_max)
        cells = grid[0] * grid[1] * grid[2]
        what = f"entity '{name}': particle_life.count = {n:,}"
        self.gpu.check_buffer_size(n * PARTICLE.itemsize, what)
        self.gpu.check_buffer_size(cells * 4, f"entity '{name}': particle_life grid of "
                                              f"{cells:,} cells (box / r_max)")
        limit = self.gpu.loop_iteration_limit
        if component.neighbours == "all_pairs" and limit is not None and n > limit:
            # forces_all_pairs.wgsl loops over every particle in each invocation
            raise DeviceLimitError(
                f"entity '{name}': particle_life.count = {n:,} with neighbours = \"all_pairs\" "
                f"exceeds {limit:,}, the most loop iterations a shader invocation runs on "
                f"{self.gpu.label} (longer loops end early there, silently); expected <= "
                f"{limit:,}, or neighbours = \"grid\"")
        uniform, storage = wgpu.BufferUsage.UNIFORM, wgpu.BufferUsage.STORAGE
        sizes = {"params": (PARAMS.itemsize, uniform), "look": (LOOK.itemsize, uniform),
                 "particles0": (n * PARTICLE.itemsize, storage),
                 "particles1": (n * PARTICLE.itemsize, storage),
                 "ids0": (n * 4, storage), "ids1": (n * 4, storage),
                 "matrix": (component.species ** 2 * 4, storage)}
        if component.neighbours == "grid":   # the atomic scatter's cursors (grid_kernel =
            sizes["cell_cursor"] = (cells * 4, storage)   # "baseline"; docs/scaling.md counts it)
        if _gathered_key(component) == "gathered_half":   # records in cell order
            sizes["gathered_half"] = (n * GATHERED_BYTES["gathered_half"], storage)
        b = {key: self.buffer(entity, key, size, usage,
                              what=what if key.startswith("particles") else None)
             for key, (size, usage) in sizes.items()}
        write, seed = self.resources.write, self.shared.seed
        write(b["particles0"], initial_particles(component, seed, entity.index).tobytes())
        write(b["ids0"], np.arange(n, dtype=np.uint32).tobytes())
        write(b["matrix"], attraction_matrix(component, seed, entity.index).tobytes())
        neighbours = self._neighbour_grid(entity, component, b, grid) if (
            component.neighbours == "grid") else None
        swarm = _Swarm(entity, component, b, [], neighbours, grid, cells)
        self.swarms[name] = swarm
        swarm.passes = self._passes(swarm)
        self._write_params(swarm, StepInfo(frame=0, dt=self.shared.fixed_dt, seed=seed))
        if component.prewarm > 0.0:
            self._prewarm(swarm)

    def _neighbour_grid(self, entity: EntityRef, c: ParticleLife, b: dict,
                        grid: tuple[int, int, int]) -> NeighbourGrid:
        """The counting-sort grid over the particles (emberfx.blocks.neighbours), its buffers
        named as the forces passes and cells() know them (cell_of, cell_count, cell_particles,
        gathered); it adds them to ``b``. The slots of its assign borrow the step's outgoing id
        buffer (ids of 1 - parity): nothing reads it before the forces pass rewrites all of it.
        precision = "half" orders with its own shader, which packs 8-byte records."""
        box = np.asarray(tuple(c.box) + (1.0,) * (3 - len(c.box)))
        shape = GridShape((0.0, 0.0, 0.0), tuple(box / np.asarray(grid)), grid)
        gathered = _gathered_key(c)
        order = None
        if gathered == "gathered_half":
            order = ("particle_life/sort_gather_half.wgsl",
                     [{"particles_in": b[f"particles{p}"], "gathered_half": b["gathered_half"],
                       "params": b["params"]} for p in (0, 1)])
        swarm_grid = NeighbourGrid(
            self.build, f"{entity.name}:particle_life", [b["particles0"], b["particles1"]],
            c.count, shape, stride=PARTICLE.itemsize // 16, position=0,
            copy=int(gathered == "gathered"), snapshot_key="gathered",
            slots=[b["ids1"], b["ids0"]], pick=lambda: self.swarms[entity.name].step_parity,
            order=order)
        b.update(cell_of=swarm_grid.cell_of, cell_count=swarm_grid.cell_count,
                 cell_particles=swarm_grid.cell_particles)
        if swarm_grid.snapshot is not None:
            b["gathered"] = swarm_grid.snapshot
        return swarm_grid

    def _prewarm(self, swarm: _Swarm) -> None:
        """Run the component's prewarm: the steps the scene's first ones would be, batched."""
        c, name = swarm.component, swarm.entity.name
        dt, seed = self.shared.fixed_dt, self.shared.seed
        graph = FrameGraph([p for p in swarm.passes if p.phase in SIMULATION_PHASES],
                           self.resources.persistent())

        def encode_step(encoder, k: int) -> None:   # before_step's bookkeeping
            swarm.step_parity, swarm.parity = swarm.parity, 1 - swarm.parity
            swarm.steps += 1
            graph.encode(encoder, {})

        step_batches.run_steps(
            self.device, f"{name}:particle_life:prewarm", c.prewarm_steps(dt), c.count,
            encode_step, fence_source=swarm.buffers["params"],
            notice=PrewarmNotice(name, c.prewarm, f"{c.count:,} particles", "particle-steps"),
            uniforms=StagedUniforms((swarm.buffers["params"],), lambda k: (self._params_record(
                swarm, StepInfo(frame=k, dt=dt, seed=seed)),)),
            batching=step_batches.batching_of(self.shared))
        swarm.written_params = b""   # the prewarm's steps wrote their own records there

    def _passes(self, swarm: _Swarm) -> list[Pass]:
        gpu, b, c = self.gpu, swarm.buffers, swarm.component
        prefix = f"{swarm.entity.name}:particle_life"
        compute = self.build.compute
        n_groups = gpu.grid(math.ceil(c.count / PARTICLE_GROUP))
        uses_grid = c.neighbours == "grid"
        gathered = _gathered_key(c)
        # the particle and id buffers ping-pong: variant p reads set p and writes set 1 - p; a
        # step picks by its starting parity, the draw by the parity after the step
        forces_shader, forces_groups, forces_constants = (
            self._grid_forces(swarm) if uses_grid else ("forces_all_pairs", n_groups, None))
        forces = []
        for p in (0, 1):
            forces.append({"params": b["params"], "particles_in": b[f"particles{p}"],
                           "particles_out": b[f"particles{1 - p}"], "ids_in": b[f"ids{p}"],
                           "ids_out": b[f"ids{1 - p}"], "matrix": b["matrix"]})
            if uses_grid:
                forces[p].update(cell_start=b["cell_count"], cell_particles=b["cell_particles"])
            if gathered is not None:
                forces[p][gathered] = b[gathered]
        stepping = lambda: swarm.step_parity  # noqa: E731
        passes = []
        if swarm.neighbours is not None and c.grid_kernel != "baseline":
            passes += swarm.neighbours.passes(Phase.SIMULATE, clear_phase=Phase.CLEAR)
        elif swarm.neighbours is not None:
            passes += self._baseline_build_passes(swarm, swarm.neighbours, prefix, n_groups,
                                                  stepping)
        passes.append(compute(f"{prefix}:forces", Phase.SIMULATE,
                              f"particle_life/{forces_shader}.wgsl", forces_groups, forces,
                              constants=forces_constants, pick=stepping,
                              does="the attraction matrix's forces from the neighbours, then "
                                   "each particle's move"))
        passes.append(self.build.draw(
            f"{prefix}:draw", "particle_life/draw.wgsl", self._draw_pipeline(c.blend),
            [{"frame": "frame", "look": b["look"], "particles": b[f"particles{p}"]}
             for p in (0, 1)],
            pick=lambda: swarm.parity, instances=c.count,
            index=(sprite_indices(self.resources, self.key), "uint32", len(SPRITE_INDICES)),
            order=sprite_queue(c.blend),
            does=f"a sprite per particle coloured by its type, {c.blend} blend"))
        return passes

    def _grid_forces(self, swarm: _Swarm) -> tuple[str, tuple, dict | None]:
        """The grid's forces shader (under particle_life/), its workgroups and constants."""
        c, gpu = swarm.component, self.gpu
        if c.grid_kernel == "cell_tiled":
            return "forces_tiled", gpu.grid(math.ceil(swarm.cells / TILED_CELLS)), None
        constants = None
        if c.grid_kernel == "gathered":
            shader = "forces_half" if c.precision == "half" else "forces_gathered"
            constants = {"DIMS": c.dims}
        else:
            shader = "forces_per_particle" if c.grid_kernel == "per_particle" else "forces"
        # one invocation per particle, in workgroups of the shader's own size
        per_particle = wgsl.workgroup_size(f"particle_life/{shader}.wgsl")[0]
        return shader, gpu.grid(math.ceil(c.count / per_particle)), constants

    def _baseline_build_passes(self, swarm: _Swarm, grid: NeighbourGrid, prefix: str, n_groups,
                               stepping) -> list[Pass]:
        """grid_kernel = "baseline": the earliest build, kept to measure the others against, into
        the neighbour grid's buffers: counts without slots, the starts copied to cursors, an
        atomic scatter, then the grid's own order pass."""
        b, compute = swarm.buffers, self.build.compute
        return [
            self.build.clear(f"{prefix}:clear", Phase.CLEAR, b["cell_count"],
                             does="zeroes each grid cell's particle count"),
            compute(f"{prefix}:assign", Phase.SIMULATE, "particle_life/assign.wgsl", n_groups,
                    [{"params": b["params"], "particles": b[f"particles{p}"],
                      "cell_of": b["cell_of"], "cell_count": b["cell_count"]} for p in (0, 1)],
                    pick=stepping, does="each particle's grid cell, counted per cell"),
            *grid.scan.passes(),
            self.build.copy(f"{prefix}:cursor", Phase.SIMULATE, b["cell_count"],
                            b["cell_cursor"], swarm.cells * 4,
                            does="each cell's start, copied as the scatter's cursor"),
            compute(f"{prefix}:scatter", Phase.SIMULATE, "particle_life/scatter.wgsl", n_groups,
                    {"params": b["params"], "cell_of": b["cell_of"],
                     "cell_cursor": b["cell_cursor"], "cell_particles": b["cell_particles"]},
                    does="each particle's index into its cell's run (atomic cursor)"),
            grid.order_pass(Phase.SIMULATE)]

    def _draw_pipeline(self, blend: str):
        return sprite_pipeline(self.device, "particle_life/draw.wgsl", blend,
                               self.shared.scene_format, self.shared.depth_format)

    def remove(self, entity: EntityRef) -> None:
        del self.swarms[entity.name]   # the registry releases its buffers, the scan's included

    def passes(self) -> list[Pass]:
        return [p for s in self.swarms.values() for p in s.passes]

    def before_step(self, step: StepInfo) -> None:
        for swarm in self.swarms.values():
            self._write_params(swarm, step)
            swarm.step_parity = swarm.parity
            swarm.parity = 1 - swarm.parity
            swarm.steps += 1

    def _write_params(self, swarm: _Swarm, step: StepInfo) -> None:
        c = swarm.component
        box = tuple(c.box) + (1.0,) * (3 - len(c.box))
        params = self._params_record(swarm, step)
        if params != swarm.written_params:   # it changes with an edit and on reorder steps
            self.resources.write(swarm.buffers["params"], params)
            swarm.written_params = params
        key = (tuple(c.box), tuple(c.center), c.size, c.species, c.dims,
               None if c.colors is None else tuple(c.colors))
        if key == swarm.look_key:   # most steps: the uniform holds these already
            return
        swarm.look_key = key
        look = np.zeros((), LOOK)
        corner = (np.asarray(c.center, np.float64)
                  - 0.5 * np.asarray(box if c.dims == 3 else box[:2] + (0.0,)))
        look["origin"] = (*corner, c.size)
        look["palette"] = species_palette(c)
        self.resources.write(swarm.buffers["look"], look.tobytes())

    def _params_record(self, swarm: _Swarm, step: StepInfo) -> bytes:
        """The params uniform of ``step``."""
        c = swarm.component
        box = tuple(c.box) + (1.0,) * (3 - len(c.box))
        grid = swarm.grid
        rec = np.zeros((), PARAMS)
        rec["box"] = (*box, step.dt)
        rec["cell_size"] = (*(np.asarray(box) / np.asarray(grid)),
                            0.5 ** (step.dt / c.friction_half_life))
        rec["grid"] = (*grid, swarm.cells)
        rec["count"], rec["species"], rec["dims"] = c.count, c.species, c.dims
        every = c.reorder_every
        rec["reorder"] = int(every > 0 and c.neighbours == "grid" and step.frame % every == 0)
        rec["r_max"], rec["beta"], rec["force"] = c.r_max, c.beta, c.force
        return rec.tobytes()

    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        swarm = self.swarms[entity.name]
        n, dims = swarm.component.count, swarm.component.dims
        rows = read_array(self.device, swarm.buffers[f"particles{swarm.parity}"], PARTICLE, n)
        ids = read_array(self.device, swarm.buffers[f"ids{swarm.parity}"], np.uint32, n)
        order = np.argsort(ids)
        return {"position": np.ascontiguousarray(rows["position"][order, :dims]),
                "velocity": np.ascontiguousarray(rows["velocity"][order, :dims]),
                "species": rows["position"][order, 3].astype(np.int32)}

    def cells(self, entity: EntityRef) -> dict[str, np.ndarray]:
        """The last step's counting sort (tests): cell of each particle, cell starts, sorted ids."""
        swarm = self.swarms[entity.name]
        n = swarm.component.count
        return {"cell_of": read_array(self.device, swarm.buffers["cell_of"], np.uint32, n),
                "cell_start": read_array(self.device, swarm.buffers["cell_count"], np.uint32,
                                         swarm.cells),
                "cell_particles": read_array(self.device, swarm.buffers["cell_particles"],
                                             np.uint32, n)}

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        swarm = self.swarms[entity.name]
        return {"count": swarm.component.count, "cells": swarm.cells, "steps": swarm.steps}


set_system("particle_life", ParticleLifeSystem)
