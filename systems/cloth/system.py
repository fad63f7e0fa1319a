"""The cloth system: explicit mass-spring patches.

Patches of one shape (resolution, substeps, and whether wind and colliders act) run as one batch
(batches.py: shared arenas, one dispatch per substep for all); any other patch runs alone, as a
batch of one over its own buffers. Per simulation step, for each batch (``<b>`` is the batch,
or the entity that runs alone):
  SIMULATE  <b>:cloth:substeps     `substeps` explicit substeps (one dispatch over (x, y, patch),
                                   repeated; patches of at most the tuning's resident limit: one
                                   dispatch of a workgroup per patch that loops over the
                                   substeps), positions and velocities ping-ponging between two
                                   buffer pairs (cloth/step.wgsl)
  PREPARE   <b>:cloth:normals      vertex normals after the last substep
and for each entity:
  RENDER    <e>:cloth:shadow       both faces into the light's shadow map (core/shadows.py)
  RENDER    <e>:cloth:draw         lit two-sided mesh, shadowed, indexed; <e>:cloth:wire with
                                   wireframe

Wind (force_field kind "wind") and colliders are other entities' components, packed each step
like the emitter's forces; `affected_by` limits them.

A ``prewarm`` runs round(prewarm / fixed_dt) steps (substeps and normals) when the patch is
created, batched (emberfx.core.step_batches); they lie before t = 0, as an emitter's do, so a
gusting wind continues into the first frame; the winds and colliders in the scene at its creation
act (ones spawned later do not reach back).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.core import step_batches, wgsl
from emberfx.core.events import REARRANGE
from emberfx.core.frame_graph import (
    GEOMETRY_TARGET,
    SIMULATION_PHASES,
    FrameGraph,
    Pass,
    Phase,
    RenderQueue,
)
from emberfx.core.layout import struct_dtype
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.readback import read_array
from emberfx.core.shadows import caster_draw, receiver_bindings
from emberfx.core.step_batches import PrewarmNotice, StagedUniforms
from emberfx.core.system import EntityRef, Priority, StepInfo, System
from emberfx.model.colors import linear_color
from emberfx.model.prewarm import check_timestep
from emberfx.model.registry import set_system
from emberfx.model.transforms import rotation_matrix
from emberfx.systems.cloth import batches
from emberfx.systems.cloth.batches import (
    COLLIDERS_BYTES,
    FORCES_BYTES,
    PARAMS,
    RECORD,
    SIM_BUFFERS,
    VERTEX,
    VERTEX_ARRAYS,
    ClothSim,
)
from emberfx.systems.cloth.component import Cloth
from emberfx.systems.cloth.tuning import DEFAULT, ClothTuning
from emberfx.systems.colliders.cloth import COLLIDER, cloth_colliders, pack_colliders
from emberfx.systems.forces.forces import MAX_FORCES, ForceField, pack_forces

GROUP = wgsl.workgroup_size("cloth/step.wgsl")   # also cloth/normals.wgsl's
LOOK = struct_dtype("cloth/draw.wgsl", "ClothLook")
COLLIDER_KEYS = ("collider",)


def initial_positions(c: Cloth) -> np.ndarray:
    """(ny, nx, 3): vertex (i, j) at position + R (i size_x / (nx - 1), j size_y / (ny - 1), 0)."""
    nx, ny = c.resolution
    i, j = np.meshgrid(np.arange(nx), np.arange(ny))
    local = np.stack([i * c.size[0] / (nx - 1), j * c.size[1] / (ny - 1),
                      np.zeros_like(i, float)], -1)
    return np.asarray(c.position) + local @ rotation_matrix(c.rotation_deg).T


def triangle_indices(nx: int, ny: int) -> np.ndarray:
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
    a = (j * nx + i).reshape(-1)
    quads = np.stack([a, a + 1, a + nx + 1, a, a + nx + 1, a + nx], axis=1)
    return quads.reshape(-1).astype(np.uint32)


def edge_indices(nx: int, ny: int) -> np.ndarray:
    idx = np.arange(nx * ny).reshape(ny, nx)
    horizontal = np.stack([idx[:, :-1], idx[:, 1:]], -1).reshape(-1, 2)
    vertical = np.stack([idx[:-1, :], idx[1:, :]], -1).reshape(-1, 2)
    return np.concatenate([horizontal, vertical]).reshape(-1).astype(np.uint32)


@dataclass(eq=False)
class _Patch:
    entity: EntityRef
    component: Cloth
    # registry views by key: the simulation's (batches.SIM_BUFFERS: its own, or views into its
    # batch's arenas) and its own look, triangles and edges
    buffers: dict
    passes: list = field(default_factory=list)   # its own: the draw (and the wireframe)
    sim: ClothSim = field(init=False)   # its simulation: alone, or its batch's
    member: int = 0                     # its entry in sim
    wireframe: bool = False             # whether its passes include the wireframe
    triangle_count: int = 0   # index counts of the triangle and wireframe-edge buffers
    edge_count: int = 0
    look_key: tuple | None = None   # the look fields last written into the "look" uniform
    # what the last step packed: its params (first_* left 0), its winds and colliders
    record: np.ndarray = field(default_factory=lambda: np.zeros((), PARAMS))
    winds: np.ndarray = field(default_factory=lambda: np.zeros(0, batches.FORCE))
    collider_records: np.ndarray = field(default_factory=lambda: np.zeros(0, COLLIDER))
    packed: tuple = ()   # (winds, colliders, dt) the record was packed for
    dirty: bool = True   # a field changed since the record was packed

    @property
    def parity(self) -> int:
        """The state is in pos<parity> and vel<parity> (between steps, and after this step's
        passes once before_step ran)."""
        return self.sim.parity

    @property
    def built_with(self) -> tuple[bool, bool, bool]:
        """(wireframe, wind, colliders) its passes were built for."""
        return (self.wireframe, self.sim.key[3], self.sim.key[4])


class ClothSystem(System):
    key = "cloth"
    priority = Priority.DYNAMICS

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        # how every patch of this system steps (tuning.py), fixed for its life
        self.tuning: ClothTuning = shared.tuning_value(self.key, DEFAULT, "cloth_tuning")
        self.patches: dict[str, _Patch] = {}
        self.batches: list[ClothSim] = []           # like patches sharing arenas and passes
        self.pending: dict[tuple, list[_Patch]] = {}   # spawned like patches waiting to batch
        self.actors: set[str] = set()   # wind and collider entities at the last arrange

    def add(self, entity: EntityRef, component: Cloth) -> None:
        name = entity.name
        nx, ny = component.resolution
        n = nx * ny
        # the prewarm's work and the explicit step's stability (Cloth.stability_problem)
        check_timestep(component, self.key, self.shared.fixed_dt, self.shared.scene_path, name)
        self.gpu.check_buffer_size(n * VERTEX, f"entity '{name}': cloth.resolution = {nx}x{ny}")
        uniform = wgpu.BufferUsage.UNIFORM
        b = {"look": self.buffer(entity, "look", LOOK.itemsize, uniform)}
        tris, edges = triangle_indices(nx, ny), edge_indices(nx, ny)
        b["triangles"] = self.buffer(entity, "triangles", tris.nbytes, wgpu.BufferUsage.INDEX)
        b["edges"] = self.buffer(entity, "edges", edges.nbytes, wgpu.BufferUsage.INDEX)
        patch = _Patch(entity, component, b)
        patch.triangle_count, patch.edge_count = len(tris), len(edges)
        self.patches[name] = patch
        self.place_alone(patch, self.sim_key(patch))
        positions = initial_positions(component).reshape(-1, 3)
        rest = np.zeros((n, 4), np.float32)
        rest[:, :3] = positions
        for i, j in component.pin_list():
            rest[j * nx + i, 3] = 1.0
        state = np.zeros((n, 4), np.float32)
        state[:, :3] = positions
        state[:, 3] = 1.0
        write = self.resources.write   # vel0 and normals start zeroed
        write(b["triangles"], tris.tobytes())
        write(b["edges"], edges.tobytes())
        write(b["rest"], rest.tobytes())
        write(b["pos0"], state.tobytes())
        self._pack(patch, 0.0, self.shared.fixed_dt, {})
        patch.sim.store(0, patch)
        batches.finish(self, patch.sim)
        if component.prewarm > 0.0:
            self._prewarm(patch)
            patch.sim.written.clear()   # the prewarm wrote its own records last

    def place_alone(self, patch: _Patch, key: tuple) -> None:
        """Give the patch simulation buffers of its own (a batch of one), its records stored
        (the caller writes them: batches.finish)."""
        entity, (nx, ny) = patch.entity, patch.component.resolution
        what = f"entity '{entity.name}': cloth.resolution = {nx}x{ny}"
        storage = wgpu.BufferUsage.STORAGE
        b = patch.buffers
        for k in VERTEX_ARRAYS:
            b[k] = self.buffer(entity, k, nx * ny * VERTEX, storage, what=what)
        # storage for the step, uniform for the draw
        b["params"] = self.buffer(entity, "params", RECORD.itemsize,
                                  storage | wgpu.BufferUsage.UNIFORM)
        # room for MAX_FORCES of each, so winds and colliders spawned later fit without a rebuild
        # (the step loops over the count written each step, not over the buffer)
        b["forces"] = self.buffer(entity, "forces", FORCES_BYTES, storage)
        b["colliders"] = self.buffer(entity, "colliders", COLLIDERS_BYTES, storage)
        patch.sim = ClothSim(entity.name, key, [patch], {k: b[k] for k in SIM_BUFFERS}, nx * ny)
        patch.member = 0
        patch.sim.store(0, patch)

    def refresh_alone(self, patch: _Patch, key: tuple) -> None:
        """A lone patch's passes for a new key (a wind came, substeps changed): no buffer
        moves."""
        patch.sim.key = key
        patch.sim.passes = self.sim_passes(patch.sim)

    def _prewarm(self, patch: _Patch) -> None:
        """Run the component's prewarm (see the module docstring)."""
        c, name = patch.component, patch.entity.name
        nx, ny = c.resolution
        dt, steps = self.shared.fixed_dt, c.prewarm_steps(self.shared.fixed_dt)
        sim = patch.sim   # its own, alone (it joins a batch, if any, after this)
        graph = FrameGraph([p for p in sim.passes if p.phase in SIMULATION_PHASES
                            and p.phase != Phase.READBACK], self.resources.persistent())

        def encode_step(encoder, k: int) -> None:
            sim.step_parity = sim.parity
            sim.parity = (sim.parity + sim.substeps) % 2
            graph.encode(encoder, {})

        b = patch.buffers
        step_batches.run_steps(
            self.device, f"{name}:cloth:prewarm", steps, nx * ny * c.substeps, encode_step,
            fence_source=b["params"],
            notice=PrewarmNotice(name, c.prewarm, f"{nx}x{ny} vertices x {c.substeps} substeps",
                                 "vertex-substeps"),
            uniforms=StagedUniforms((b["params"], b["forces"], b["colliders"]),
                                    lambda k: self._step_records(patch, (k - steps) * dt, dt)),
            batching=step_batches.batching_of(self.shared))

    def sim_passes(self, sim: ClothSim) -> list[Pass]:
        """The substeps and normals passes of a lone patch or a batch: one dispatch over
        (x, y, entry) each, or for small patches every substep in one dispatch of a workgroup
        per entry."""
        nx, ny, substeps, wind, colliders = sim.key
        grid = (math.ceil(nx / GROUP[0]), math.ceil(ny / GROUP[1]), len(sim.members))
        b = sim.buffers
        # The wind and collider code is compiled out when nothing of the kind acts on the patch:
        # on CPU backends (lavapipe) a step that merely contains those loops ran several times
        # slower, even with zero iterations (the emitter's HAS_FORCES found the same).
        constants = {"HAS_WIND": wind, "HAS_COLLIDERS": colliders}
        shared = {"records": b["params"], "rest": b["rest"], "forces": b["forces"],
                  "colliders": b["colliders"]}
        if nx * ny <= self.tuning.resident_limit(self.gpu):
            # variant p starts from pos<p>/vel<p> (the a pair); the state ends in the other
            # pair after an odd number of substeps
            resident = [{**shared, "pos_a": b[f"pos{p}"], "vel_a": b[f"vel{p}"],
                         "pos_b": b[f"pos{1 - p}"], "vel_b": b[f"vel{1 - p}"]} for p in (0, 1)]
            limits = self.gpu.limits
            threads = min(math.ceil(nx * ny / 64) * 64, limits["max-compute-workgroup-size-x"],
                          limits["max-compute-invocations-per-workgroup"])
            substeps_pass = self.build.compute(
                f"{sim.name}:cloth:substeps", Phase.SIMULATE, "cloth/step_resident.wgsl",
                (len(sim.members), 1, 1), resident,
                constants={**constants, "SUBSTEPS": substeps, "THREADS": threads},
                pick=lambda: sim.step_parity,
                does=f"all {substeps} substeps of springs, gravity, wind and collisions, one "
                     f"workgroup a patch holding it in workgroup memory")
        else:
            # variant p reads the state in pos<p>/vel<p> and writes the other pair
            substep = [{**shared, "pos_in": b[f"pos{p}"], "vel_in": b[f"vel{p}"],
                        "pos_out": b[f"pos{1 - p}"], "vel_out": b[f"vel{1 - p}"]}
                       for p in (0, 1)]
            substeps_pass = self.build.compute(
                f"{sim.name}:cloth:substeps", Phase.SIMULATE, "cloth/step.wgsl", grid, substep,
                constants=constants, pick=lambda k=0: (sim.step_parity + k) % 2,
                repeat=substeps,
                does=f"{substeps} substeps of springs, gravity, wind and collisions, one "
                     f"dispatch each")
        normals = self.build.compute(
            f"{sim.name}:cloth:normals", Phase.PREPARE, "cloth/normals.wgsl", grid,
            [{"records": b["params"], "positions": b[f"pos{p}"], "normals": b["normals"]}
             for p in (0, 1)], pick=lambda: sim.parity,
            does="each vertex's normal from the new positions, for lighting")
        return [substeps_pass, normals]

    def place_member(self, patch: _Patch) -> None:
        """The patch's own passes over its buffers (views into its batch's arenas, or its
        own): the draw, and the wireframe."""
        b, prefix = patch.buffers, f"{patch.entity.name}:cloth"
        sim = patch.sim
        patch.wireframe = patch.component.wireframe
        triangles = (b["triangles"], "uint32", patch.triangle_count)
        patch.passes = [caster_draw(
            self.build, f"{prefix}:shadow", "cloth/shadow.wgsl",
            [{"frame": "frame", "positions": b[f"pos{p}"]} for p in (0, 1)], closed=False,
            pick=lambda: sim.parity, index=triangles, does="the cloth into the shadow map"),
            self.build.draw(
            f"{prefix}:draw", "cloth/draw.wgsl", self._mesh_pipeline(),
            [{"frame": "frame", "params": b["params"], "look": b["look"],
              "positions": b[f"pos{p}"], "normals": b["normals"],
              **receiver_bindings(self.device)} for p in (0, 1)],
            pick=lambda: sim.parity, index=triangles,
            order=RenderQueue.OPAQUE, target=GEOMETRY_TARGET,
            does="the cloth's triangles, lit and shadowed")]
        if patch.wireframe:
            patch.passes.append(self.build.draw(
                f"{prefix}:wire", "cloth/wire.wgsl", self._wire_pipeline(),
                [{"frame": "frame", "positions": b[f"pos{p}"]} for p in (0, 1)],
                pick=lambda: sim.parity, index=(b["edges"], "uint32", patch.edge_count),
                order=RenderQueue.OPAQUE + 1, target=GEOMETRY_TARGET,
                does="the cloth's springs as lines"))

    def _render_pipeline(self, shader: str, topology: str):
        return render_pipeline(self.device, RenderKey(
            shader, self.shared.scene_format, depth_format=self.shared.depth_format,
            depth_write=True, depth_compare="less", topology=topology, cull_mode="none",
            sample_count=self.shared.sample_count))

    def _mesh_pipeline(self):
        return self._render_pipeline("cloth/draw.wgsl", "triangle-list")

    def _wire_pipeline(self):
        return self._render_pipeline("cloth/wire.wgsl", "line-list")

    def targets_changed(self) -> None:
        """A new shadow map: the draws bind it again."""
        for patch in self.patches.values():
            self.place_member(patch)

    def shadow_casters(self) -> list[tuple[tuple[float, float, float], float]]:
        """Each patch's bounding sphere: centred on its rest shape, as wide as its diagonal
        (however it swings about a pin or folds, no vertex gets further from the centre)."""
        found = []
        for patch in self.patches.values():
            c = patch.component
            middle = np.array([0.5 * c.size[0], 0.5 * c.size[1], 0.0])
            centre = (np.asarray(c.position) + rotation_matrix(c.rotation_deg) @ middle
                      + np.asarray(c.pin_offset))
            found.append((tuple(centre), float(math.hypot(*c.size))))
        return found

    def remove(self, entity: EntityRef) -> None:
        patch = self.patches.pop(entity.name)   # the registry releases its buffers and views
        if patch.sim.batched:   # its entry idles until the batch is packed again
            batches.retire_member(self, patch)

    def arrange(self, changed: str | None = None) -> bool:
        """Regroup like patches into batches (batches.py); True when buffers moved."""
        if changed is None:
            return batches.arrange(self)
        return batches.arrange_after(self, changed)

    def sims(self) -> list[ClothSim]:
        """The batches, then each lone patch's simulation, in entity order."""
        return self.batches + [p.sim for p in self.patches.values() if not p.sim.batched]

    def passes(self) -> list[Pass]:
        for patch in self.patches.values():
            if patch.wireframe != patch.component.wireframe:
                self.place_member(patch)
            if not patch.sim.batched:   # e.g. a collider became a box (a batch: before_step)
                key = self.sim_key(patch)
                if key != patch.sim.key:
                    self.refresh_alone(patch, key)
        return ([p for sim in self.sims() for p in sim.passes]
                + [p for patch in self.patches.values() for p in patch.passes])

    def _winds(self, patch: _Patch) -> list:
        return [f for f in self.acting_on(patch, ("force_field",))
                if isinstance(f, ForceField) and f.kind == "wind"]

    def sim_key(self, patch: _Patch, acting: dict | None = None) -> tuple:
        """What the patch's simulation passes compile to (batches share it): (nx, ny,
        substeps, whether wind acts, whether colliders act); ``acting`` caches what acts by
        ``affected_by``."""
        c = patch.component
        winds, colliders = self._acting(patch, {} if acting is None else acting)
        return (*c.resolution, c.substeps, bool(winds), bool(colliders))

    def _acting(self, patch: _Patch, cache: dict) -> tuple[list, list]:
        """The winds and colliders acting on the patch, the first MAX_FORCES of each in scene
        order (as an emitter takes its forces), looked up once per ``affected_by``."""
        wanted = patch.component.affected_by
        key = None if wanted is None else tuple(wanted)
        found = cache.get(key)
        if found is None:
            found = cache[key] = (self._winds(patch)[:MAX_FORCES],
                                  self.acting_on(patch, COLLIDER_KEYS)[:MAX_FORCES])
        return found

    def acting_on(self, patch: _Patch, keys: tuple[str, ...]) -> list:
        """The components of ``keys`` acting on the patch (colliders: spheres and planes only;
        other shapes act on particles)."""
        wanted = patch.component.affected_by
        found = [comp for ref, comp in self.query(*keys)
                 if wanted is None or ref.name in wanted]
        return cloth_colliders(found) if keys == COLLIDER_KEYS else found

    def before_step(self, step: StepInfo) -> None:
        acting: dict = {}   # affected_by -> the winds and colliders acting, once per step
        # a live edit of substeps or affected_by, a collider that became a box: the patch
        # leaves its batch, or joins one, or its step is compiled anew
        if any(self.sim_key(patch, acting) != patch.sim.key for patch in self.patches.values()):
            batches.arrange(self)
            self.shared.events.dispatch_event(REARRANGE)   # this step's frame graph is made again
        packs: dict = {}
        start = step.frame * step.dt
        for sim in self.sims():
            for k, patch in enumerate(sim.members):
                if k not in sim.dead:
                    sim.store(k, patch, self._pack(patch, start, step.dt, packs, acting))
            sim.upload(self.resources.write)
            sim.step_parity = sim.parity
            sim.parity = (sim.parity + sim.substeps) % 2

    def edited(self, entity: EntityRef, component) -> None:
        patch = self.patches.get(entity.name)
        if patch is not None:
            patch.dirty = True

    def _pack(self, patch: _Patch, time: float, dt: float, packs: dict,
              acting: dict | None = None) -> bool:
        """Pack the step starting at ``time`` seconds into the patch's record, winds and
        colliders (packed once per ``affected_by`` in ``packs``); the record only after an edit
        or when the counts or dt changed. True when the record was packed anew."""
        c = patch.component
        key = None if c.affected_by is None else tuple(c.affected_by)
        found = packs.get(key)
        if found is None:
            winds, colliders = self._acting(patch, {} if acting is None else acting)
            found = packs[key] = (pack_forces(winds, time)[:len(winds)],
                                  pack_colliders(colliders)[:len(colliders)])
        patch.winds, patch.collider_records = found
        packed = (len(patch.winds), len(patch.collider_records), dt)
        if not patch.dirty and packed == patch.packed:
            return False
        patch.dirty, patch.packed = False, packed
        nx, ny = c.resolution
        dx, dy = c.size[0] / (nx - 1), c.size[1] / (ny - 1)
        rec = patch.record
        rec[...] = 0
        rec["gravity"] = (*c.gravity, c.drag)
        rec["pin_offset"] = (*c.pin_offset, 0.0)
        rec["rest"] = (dx, dy, math.hypot(dx, dy), dx * dy)
        rec["nx"], rec["ny"] = nx, ny
        rec["h"] = dt / c.substeps
        rec["stiffness"], rec["damping"], rec["mass"] = c.stiffness, c.damping, c.mass
        rec["force_count"], rec["collider_count"] = packed[:2]
        return True

    def _step_records(self, patch: _Patch, time: float, dt: float) -> tuple[bytes, bytes, bytes]:
        """A lone patch's params, forces and colliders of the step starting at ``time``
        seconds, as its buffers take them (the prewarm stages these)."""
        sim = patch.sim
        sim.store(0, patch, self._pack(patch, time, dt, {}))
        return sim.records.tobytes(), sim.forces.tobytes(), sim.colliders.tobytes()

    def before_draw(self) -> None:
        """The look (colours, checker) before each render: edits show in a paused window."""
        for patch in self.patches.values():
            self._write_look(patch)

    def _write_look(self, patch: _Patch) -> None:
        c = patch.component
        key = (c.color, c.checker, tuple(c.checker_cells))
        if key == patch.look_key:   # most draws: the uniform holds these already
            return
        patch.look_key = key
        look = np.zeros((), LOOK)
        look["color"] = linear_color(c.color)
        if c.checker is not None:
            look["checker"] = (*linear_color(c.checker)[:3], 1.0)
        look["checker_cells"] = c.checker_cells
        self.resources.write(patch.buffers["look"], look.tobytes())

    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        patch = self.patches[entity.name]
        nx, ny = patch.component.resolution
        pos = read_array(self.device, patch.buffers[f"pos{patch.parity}"], np.float32, nx * ny * 4)
        vel = read_array(self.device, patch.buffers[f"vel{patch.parity}"], np.float32, nx * ny * 4)
        return {"position": pos.reshape(ny, nx, 4)[..., :3].copy(),
                "velocity": vel.reshape(ny, nx, 4)[..., :3].copy()}

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        c = self.patches[entity.name].component
        return {"vertices": c.resolution[0] * c.resolution[1], "substeps": c.substeps}


set_system("cloth", ClothSystem)
