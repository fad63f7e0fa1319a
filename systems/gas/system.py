"""The gas system: smoke and fire as an Eulerian gas on a MAC grid (Stam 1999; Fedkiw, Stam and
Jensen 2001; Bridson 2015), on the GPU.

Per simulation step, for each gas entity ``<e>``, all in the SIMULATE phase:
  <e>:gas:solids[:clear]              the cells inside the scene's colliders (and as bits)
  <e>:gas:advect:velocity[:correct]   the velocity carries itself (semi-Lagrangian, then
                                      MacCormack's correction)
  <e>:gas:advect:scalars[:correct]    and the density, temperature and fuel
  <e>:gas:curl                        each cell's vorticity magnitude
  <e>:gas:cells                       sources, combustion, cooling and dissipation, then
                                      each cell's buoyancy, weight, vorticity confinement
                                      and the scene's forces
  <e>:gas:faces                       the forces onto the faces, the sources' velocities, walls
  <e>:gas:divergence                  the pressure equation's right-hand side
  <e>:gas:mg:*                        multigrid V-cycles (multigrid.py)
  <e>:gas:project                     the velocity less the pressure gradient
and RENDER <e>:gas:volume, the gas ray marched as lit smoke and glowing fire
(shaders/gas/volume.wgsl). Coupled with particles (coupling.py), a gas also starts its step with
<e>:gas:feed (what feeding emitters splatted), ends it with <e>:gas:centres (its velocity for
force fields whose `source` it is) and splats its feeders in PREPARE (<e>:gas:splat:<emitter>).
Each pass writes buffers the others read (no float atomics; the splats sum integers), so two
runs give the same bytes.
The grid and its records: shaders/gas/types.wgsl and records.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase, RenderQueue
from emberfx.core.frame_order import in_declared_order
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.readback import read_array
from emberfx.core.shadows import OPACITY_MAP, SHADOW_MAP
from emberfx.core.system import EntityRef, Priority, Readback, StepInfo, System
from emberfx.model.registry import set_system
from emberfx.systems.colliders.particles import SOLID_KINDS, solid_kind
from emberfx.systems.colliders.scene_solids import SceneSolids
from emberfx.systems.forces.forces import FORCE, kind_bits, pack_forces
from emberfx.systems.forces.forces import MAX_FORCES as FORCE_SLOTS
from emberfx.systems.gas import records
from emberfx.systems.gas.component import MAX_SOURCES, Gas
from emberfx.systems.gas.coupling import Coupling
from emberfx.systems.gas.fire_light import light_passes, partials_size
from emberfx.systems.gas.multigrid import v_cycles

RESIDUAL = "gas/residual.wgsl"
RESIDUAL_GROUP = wgsl.int_constant(RESIDUAL, "WORKGROUP_SIZE")
RESIDUAL_BYTES = 16    # gas/residual_total.wgsl's one vec4f
ACTING = ("attractor", "force_field")   # what may act on a gas (kill zones kill no gas)
GROUP = 64   # every gas pass: one cell or face an invocation


@dataclass
class _Body:
    entity: EntityRef
    component: Gas
    buffers: dict
    passes: list
    cells: int
    faces: int
    solids: SceneSolids   # the colliders, as the solids pass binds them
    coupling: Coupling    # the force fields sampling it and the emitters feeding it
    written: dict[str, bytes] = field(default_factory=dict)   # buffer key -> bytes last written
    kinds: int = 0        # the FORCE_KINDS the force pass was compiled for
    solid_kinds: int = 0  # the SOLID_KINDS the solids pass was compiled for
    lit: bool = False     # whether its passes include the fire's point light
    time: float = 0.0     # the last step's start, s
    steps: int = 0


class GasSystem(System):
    key = "gas"
    priority = Priority.SIMULATION

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.bodies: dict[str, _Body] = {}

    def add(self, entity: EntityRef, component: Gas) -> None:
        c, name = component, entity.name
        n = c.resolution
        cells, faces = math.prod(n), sum(records.face_counts(n))
        what = f"entity '{name}': gas of {cells:,} cells ({list(n)})"
        self.gpu.check_buffer_size(16 * cells, what)
        storage = wgpu.BufferUsage.STORAGE
        b = {key: self.buffer(entity, key, 4 * faces, storage, what=what)
             for key in ("velocity", "velocity_hat", "velocity_next")}
        b.update({key: self.buffer(entity, key, 16 * cells, storage, what=what)
                  for key in ("scalars", "scalars_hat", "scalars_next")})
        b["force"] = self.buffer(entity, "force", 8 * cells, storage, what=what)
        b["curl"] = self.buffer(entity, "curl", 4 * cells, storage, what=what)
        for level, m in enumerate(records.level_cells(c)):
            for key in ("rhs", "pressure"):
                b[f"{key}{level}"] = self.buffer(entity, f"{key}{level}",
                                                 4 * records.level_slots(m), storage, what=what)
        b["params"] = self.buffer(entity, "params", records.PARAMS.itemsize, storage)
        b["sources"] = self.buffer(entity, "sources", MAX_SOURCES * records.SOURCE.itemsize,
                                   storage)
        b["levels"] = self.buffer(entity, "levels", c.levels * records.LEVEL.itemsize, storage)
        self.resources.write(b["levels"], records.levels_record(c))
        b["look"] = self.buffer(entity, "look", records.LOOK.itemsize, storage)
        b["forces"] = self.buffer(entity, "forces", FORCE_SLOTS * FORCE.itemsize, storage)
        b["solid"] = self.buffer(entity, "solid", 4 * cells, storage, what=what)
        b["solid_bits"] = self.buffer(entity, "solid_bits", 4 * records.solid_words(n), storage,
                                      what=what)
        b["motion"] = self.buffer(entity, "motion", 16 * FORCE_SLOTS, storage)
        b["partials"] = self.buffer(entity, "partials", 8 * _residual_groups(self.gpu, cells),
                                    storage, what=what)
        b["light_partials"] = self.buffer(entity, "light_partials",
                                          partials_size(self.gpu, cells), storage, what=what)
        b["residual"] = self.buffer(entity, "residual", RESIDUAL_BYTES, storage)
        table = records.blackbody_table()
        b["blackbody"] = self.buffer(entity, "blackbody", len(table), storage)
        self.resources.write(b["blackbody"], table)
        body = _Body(entity, c, b, [], cells, faces, SceneSolids(self, entity),
                     Coupling(self, entity))
        body.solids.refresh()
        body.coupling.refresh(cells)
        body.kinds = kind_bits(self._acting(c))
        body.lit = c.look.fire_light > 0.0
        body.solid_kinds = self._solid_kinds()
        body.passes = self._passes(body)
        self.bodies[name] = body
        self._write(body)

    def _passes(self, body: _Body) -> list[Pass]:
        c, b, e = body.component, body.buffers, body.entity.name
        compute = self.build.compute
        on_cells = self.gpu.grid(math.ceil(body.cells / GROUP))
        on_faces = self.gpu.grid(math.ceil(body.faces / GROUP))
        params = b["params"]
        correct = c.advection == "maccormack"
        passes = [
            self.build.clear(f"{e}:gas:solids:clear", Phase.SIMULATE, b["solid_bits"],
                             does="the solid bits zeroed for the solids pass to set"),
            compute(f"{e}:gas:solids", Phase.SIMULATE, "gas/solids.wgsl", on_cells,
                    {"params": params, "solid": b["solid"], "solid_bits": b["solid_bits"],
                     **body.solids.bindings()},
                    constants={"SOLID_KINDS": body.solid_kinds},
                    does="which cells lie inside the scene's colliders, also as bits")]
        passes += body.coupling.first_passes(b, body.cells)
        passes += [compute(
            f"{e}:gas:advect:velocity", Phase.SIMULATE, "gas/advect_faces.wgsl", on_faces,
            {"params": params, "velocity": b["velocity"],   # (hat: unread here)
             "hat": b["velocity_next" if correct else "velocity_hat"],
             "result": b["velocity_hat" if correct else "velocity_next"]},
            constants={"CORRECT": False},
            does="each face's component from where its point was (semi-Lagrangian)")]
        if correct:
            passes.append(compute(
                f"{e}:gas:advect:velocity:correct", Phase.SIMULATE, "gas/advect_faces.wgsl",
                on_faces, {"params": params, "velocity": b["velocity"], "hat": b["velocity_hat"],
                           "result": b["velocity_next"]},
                constants={"CORRECT": True}, does="MacCormack's correction, clamped"))
        passes.append(compute(
            f"{e}:gas:advect:scalars", Phase.SIMULATE, "gas/advect_cells.wgsl", on_cells,
            {"params": params, "velocity": b["velocity"], "scalars": b["scalars"],
             "hat": b["scalars_next" if correct else "scalars_hat"],
             "result": b["scalars_hat" if correct else "scalars_next"]},
            constants={"CORRECT": False},
            does="each cell's scalars from where its centre was (semi-Lagrangian)"))
        if correct:
            passes.append(compute(
                f"{e}:gas:advect:scalars:correct", Phase.SIMULATE, "gas/advect_cells.wgsl",
                on_cells, {"params": params, "velocity": b["velocity"], "scalars": b["scalars"],
                           "hat": b["scalars_hat"], "result": b["scalars_next"]},
                constants={"CORRECT": True}, does="MacCormack's correction, clamped"))
        passes += [
            compute(f"{e}:gas:curl", Phase.SIMULATE, "gas/curl.wgsl", on_cells,
                    {"params": params, "velocity": b["velocity_next"], "curl": b["curl"]},
                    does="each cell's vorticity magnitude"),
            compute(f"{e}:gas:cells", Phase.SIMULATE, "gas/cells.wgsl", on_cells,
                    {"params": params, "sources": b["sources"], "advected": b["scalars_next"],
                     "scalars": b["scalars"], "solid": b["solid"], "curl": b["curl"],
                     "force": b["force"], "forces": b["forces"],
                     "velocity": b["velocity_next"]},
                    constants={"FORCE_KINDS": body.kinds},
                    does="sources, combustion, cooling and dissipation of each cell, then its "
                         "buoyancy, weight, vorticity confinement and the scene's forces"),
            compute(f"{e}:gas:faces", Phase.SIMULATE, "gas/faces.wgsl", on_faces,
                    {"params": params, "sources": b["sources"], "force": b["force"],
                     "velocity": b["velocity_next"], "solid": b["solid"],
                     "motion": b["motion"]},
                    does="the forces onto the faces, sources' velocities, walls and moving "
                         "colliders"),
            compute(f"{e}:gas:divergence", Phase.SIMULATE, "gas/divergence.wgsl", on_cells,
                    {"params": params, "velocity": b["velocity_next"], "rhs": b["rhs0"],
                     "solid": b["solid"]},
                    does="each cell's divergence: the pressure equation's right-hand side")]
        passes += v_cycles(self, e, c.pressure_cycles, records.level_cells(c), b)
        passes.append(compute(
            f"{e}:gas:project", Phase.SIMULATE, "gas/project.wgsl", on_faces,
            {"params": params, "velocity": b["velocity_next"], "pressure": b["pressure0"],
             "result": b["velocity"], "solid": b["solid"]},
            does="each face's component less the pressure gradient: divergence-free"))
        passes += [
            compute(f"{e}:gas:residual", Phase.SIMULATE, RESIDUAL,
                    self.gpu.grid(math.ceil(body.cells / RESIDUAL_GROUP)),
                    {"params": params, "velocity": b["velocity"], "rhs": b["rhs0"],
                     "solid": b["solid"], "partials": b["partials"]},
                    does="each workgroup's squared divergence before and after the projection"),
            compute(f"{e}:gas:residual:total", Phase.SIMULATE, "gas/residual_total.wgsl",
                    (1, 1, 1), {"partials": b["partials"], "residual": b["residual"]},
                    does="the squared divergences summed: the projection's residual")]
        passes += body.coupling.last_passes(b, body.cells)
        pipeline = render_pipeline(self.device, RenderKey(
            records.VOLUME, self.shared.scene_format, blend="alpha",
            depth_format=self.shared.depth_format, label=f"{e}:gas:volume"))
        volume = self.build.draw(
            f"{e}:gas:volume", records.VOLUME, pipeline,
            {"frame": "frame", "params": params, "look": b["look"], "scalars": b["scalars"],
             "blackbody": b["blackbody"], "scene_depth": "scene/depth",
             "shadow_map": SHADOW_MAP, "shadow_opacity": OPACITY_MAP},
            vertices=3, order=RenderQueue.TRANSPARENT - 1, depth_read_only=True,
            does="the gas ray marched: smoke lit and self-shadowed, fire glowing")
        lit = light_passes(self, e, body.cells, b) if c.look.fire_light > 0.0 else []
        return [*in_declared_order(passes), *body.coupling.splat_passes(), *lit, volume]

    def _acting(self, c: Gas) -> list:
        """The force components acting on the gas, in scene order."""
        wanted = c.affected_by
        return [comp for ref, comp in self.query(*ACTING)
                if wanted is None or ref.name in wanted][:FORCE_SLOTS]

    def _write(self, body: _Body, time: float = 0.0) -> None:
        """Write the step's records (params, sources, forces at `time`) and the look, each
        only when its bytes changed."""
        c = body.component
        acting = self._acting(c)
        self._write_if_changed(body, "params",
                               records.params_record(c, self.shared.fixed_dt, time, len(acting)))
        self._write_if_changed(body, "sources", records.sources_record(c))
        self._write_if_changed(body, "forces", pack_forces(acting, time).tobytes())
        self._write_look(body)

    def _write_look(self, body: _Body) -> None:
        look = records.look_record(body.component, len(records.blackbody_table()) // 16)
        self._write_if_changed(body, "look", look)

    def _write_if_changed(self, body: _Body, key: str, data: bytes) -> None:
        if body.written.get(key) != data:
            self.resources.write(body.buffers[key], data)
            body.written[key] = data

    def remove(self, entity: EntityRef) -> None:
        self.bodies.pop(entity.name)   # the registry releases its buffers

    def edited(self, entity: EntityRef, component: Gas) -> None:
        self.bodies[entity.name].component = component
        self.world_changed()   # (affected_by may name other forces)

    def before_draw(self) -> None:
        for body in self.bodies.values():
            self._write_look(body)   # (a look edited while paused shows)

    def passes(self) -> list[Pass]:
        return [p for body in self.bodies.values() for p in body.passes]

    def _solid_kinds(self) -> int:
        """The SOLID_KINDS of the scene's colliders (the solids pass compiles in only those)."""
        mask = 0
        for _, c in self.query("collider"):
            mask |= 1 << SOLID_KINDS[solid_kind(c)]
        return mask

    def world_changed(self) -> None:
        """Forces or colliders came or went: a gas whose set of force or collider kinds
        changed compiles its passes again, as one whose SDF samples' buffer grew."""
        solid_kinds = self._solid_kinds()
        for body in self.bodies.values():
            remade = body.solids.refresh()
            coupled = body.coupling.refresh(body.cells)
            kinds = kind_bits(self._acting(body.component))
            lit = body.component.look.fire_light > 0.0
            if (remade or coupled or kinds != body.kinds or solid_kinds != body.solid_kinds
                    or lit != body.lit):
                body.kinds, body.solid_kinds, body.lit = kinds, solid_kinds, lit
                body.passes = self._passes(body)

    def before_step(self, step: StepInfo) -> None:
        for body in self.bodies.values():
            body.time = step.frame * step.dt
            body.solids.write_step()
            self._write_if_changed(body, "motion", body.solids.velocities(step.dt).tobytes())
            self._write(body, body.time)
            body.coupling.write_step(body.component, step.dt)
            body.steps += 1

    def load(self, entity: EntityRef, *, density=None, temperature=None, fuel=None,
             velocity=None) -> None:
        """Set the gas's state (arrays of shape (nz, ny, nx), ``velocity`` (nz, ny, nx, 3) at
        cell centres, spread onto the faces as their means); what is not given stays."""
        body = self.bodies[entity.name]
        c = body.component
        shape = tuple(reversed(c.resolution))
        scalars = None
        for k, values in enumerate((density, temperature, fuel)):
            if values is None:
                continue
            if scalars is None:
                scalars = self._read(body, "scalars", 4).reshape(*shape, 4)
            scalars[..., k] = _checked(values, shape, ("density", "temperature", "fuel")[k])
        if scalars is not None:
            self.resources.write(body.buffers["scalars"], scalars.astype(np.float32).tobytes())
        if velocity is not None:
            values = _checked(velocity, (*shape, 3), "velocity")
            faces = records.faces_from_centres(values, c.boundary == "periodic")
            self.resources.write(body.buffers["velocity"], faces.tobytes())

    def _read(self, body: _Body, key: str, per: int) -> np.ndarray:
        count = per * (body.cells if key == "scalars" else body.faces)
        return read_array(self.device, body.buffers[key], np.float32, count)

    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        """``density``, ``temperature`` and ``fuel`` of shape (nz, ny, nx), indexed [z, y, x];
        ``velocity`` (nz, ny, nx, 3) at the cells' centres (the means of their faces)."""
        body = self.bodies[entity.name]
        n = body.component.resolution
        scalars = self._read(body, "scalars", 4).reshape(*reversed(n), 4)
        faces = self._read(body, "velocity", 1)
        return {"density": np.ascontiguousarray(scalars[..., 0]),
                "temperature": np.ascontiguousarray(scalars[..., 1]),
                "fuel": np.ascontiguousarray(scalars[..., 2]),
                "velocity": records.centres_from_faces(faces, n)}

    def faces(self, entity: EntityRef) -> dict[str, np.ndarray]:
        """The velocity where the grid keeps it, each axis's component on its faces: ``u``
        (nz, ny, nx + 1), ``v`` (nz, ny + 1, nx), ``w`` (nz + 1, ny, nx)."""
        body = self.bodies[entity.name]
        nx, ny, nz = body.component.resolution
        faces = self._read(body, "velocity", 1)
        u_count, v_count, _ = records.face_counts(body.component.resolution)
        return {"u": faces[:u_count].reshape(nz, ny, nx + 1),
                "v": faces[u_count:u_count + v_count].reshape(nz, ny + 1, nx),
                "w": faces[u_count + v_count:].reshape(nz + 1, ny, nx)}

    def readbacks(self) -> list[Readback]:
        """Each gas's squared divergences before and after its last projection."""
        return [Readback(name, self.key, view.name, view.buffer, view.offset, RESIDUAL_BYTES)
                for name, body in self.bodies.items()
                for view in [body.buffers["residual"]]]

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        """Cells and steps; ``pressure_residual``, the relative residual of a recent step's
        projection (the L2 norm of the divergence after it over that before it; 0 when there
        was none before), once the engine has read it back (a step or two late)."""
        body = self.bodies[entity.name]
        out: dict = {"cells": body.cells, "steps": body.steps}
        data = readback.get(entity.name)
        if data is not None and len(data) >= RESIDUAL_BYTES:
            before, after = np.frombuffer(data[:8], np.float32).astype(np.float64)
            out["pressure_residual"] = float(np.sqrt(after / before)) if before > 0 else 0.0
        return out


def _residual_groups(gpu, cells: int) -> int:
    """Every workgroup the residual pass dispatches (each writes a partial)."""
    x, y, z = gpu.grid(math.ceil(cells / RESIDUAL_GROUP))
    return x * y * z


def _checked(values, shape: tuple, name: str) -> np.ndarray:
    array = np.asarray(values, np.float32)
    if array.shape != shape:
        raise ValueError(f"{name}: expected an array of shape {shape}, found {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: expected finite numbers, found NaN or infinity")
    return array


set_system("gas", GasSystem)
