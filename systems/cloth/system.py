"""The cloth system: explicit mass-spring patches.

Per simulation step, for each cloth entity (one compute pass):
  SIMULATE  <e>:cloth:substeps     `substeps` explicit substeps (one dispatch, repeated),
                                   positions and velocities ping-ponging between two buffer
                                   pairs (cloth/step.wgsl)
  PREPARE   <e>:cloth:normals      vertex normals after the last substep
  RENDER    <e>:cloth:draw         lit two-sided mesh, indexed; <e>:cloth:wire with wireframe

Wind (force_field kind "wind") and colliders are other entities' components, packed each step
like the emitter's forces; `affected_by` limits them.

A ``prewarm`` runs round(prewarm / fixed_dt) steps (substeps and normals) when the patch is
created, batched (emberfx.core.step_batches); they lie before t = 0, as an emitter's do, so a
gusting wind continues into the first frame; the winds and colliders in the scene at its creation
act (ones spawned later do not reach back).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.core import step_batches, wgsl
from emberfx.core.bindings import RENDER, pipeline_layout
from emberfx.core.frame_graph import SIMULATION_PHASES, FrameGraph, Pass, Phase, RenderQueue
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array
from emberfx.core.step_batches import PrewarmNotice, StagedUniforms
from emberfx.core.system import EntityRef, Priority, StepInfo, System
from emberfx.model.colors import linear_color
from emberfx.model.prewarm import check_timestep
from emberfx.model.registry import set_system
from emberfx.model.transforms import rotation_matrix
from emberfx.systems.cloth.component import Cloth
from emberfx.systems.colliders.cloth import COLLIDER, cloth_colliders, pack_colliders
from emberfx.systems.forces.forces import FORCE, MAX_FORCES, ForceField, pack_forces

PARAMS = struct_dtype("cloth/types.wgsl", "ClothParams")
GROUP = wgsl.workgroup_size("cloth/step.wgsl")   # also cloth/normals.wgsl's
LOOK = struct_dtype("cloth/draw.wgsl", "ClothLook")
COLLIDER_KEYS = ("collider",)


def stable_substeps(c: Cloth, fixed_dt: float) -> int:
    """Substeps for which the explicit step stays stable: h sqrt(12 k / m) below ~1.8 (12 springs
    act on a vertex at most; semi-implicit Euler diverges past h omega = 2)."""
    omega = math.sqrt(12.0 * c.stiffness / c.mass)
    return max(1, math.ceil(fixed_dt * omega / 1.8))


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


@dataclass
class _Patch:
    entity: EntityRef
    component: Cloth
    buffers: dict   # registry views by key: pos0, vel0, pos1, vel1, rest, normals, ...
    passes: list
    parity: int = 0
    step_parity: int = 0
    built_with: tuple = ()    # (wireframe, wind, colliders) the passes were built for
    triangle_count: int = 0   # index counts of the triangle and wireframe-edge buffers
    edge_count: int = 0
    look_key: tuple | None = None   # the look fields last written into the "look" uniform


class ClothSystem(System):
    key = "cloth"
    priority = Priority.DYNAMICS

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.patches: dict[str, _Patch] = {}

    def add(self, entity: EntityRef, component: Cloth) -> None:
        name = entity.name
        nx, ny = component.resolution
        n = nx * ny
        what = f"entity '{name}': cloth.resolution = {nx}x{ny}"
        check_timestep(component, self.key, self.shared.fixed_dt, self.shared.scene_path, name)
        needed = stable_substeps(component, self.shared.fixed_dt)
        if component.substeps < needed:
            print(f"emberfx: warning: entity '{name}': cloth.substeps = {component.substeps} is "
                  f"too few for stiffness {component.stiffness:g} and mass {component.mass:g} "
                  f"(explicit steps diverge); use at least {needed}", file=sys.stderr)
        self.gpu.check_buffer_size(n * 16, what)
        storage, uniform = wgpu.BufferUsage.STORAGE, wgpu.BufferUsage.UNIFORM
        b = {k: self.buffer(entity, k, n * 16, storage, what=what)
             for k in ("pos0", "pos1", "vel0", "vel1", "rest", "normals")}
        b["params"] = self.buffer(entity, "params", PARAMS.itemsize, uniform)
        b["look"] = self.buffer(entity, "look", LOOK.itemsize, uniform)
        # room for MAX_FORCES of each, so winds and colliders spawned later fit without a rebuild
        # (the step loops over the count written each step, not over the buffer)
        b["forces"] = self.buffer(entity, "forces", MAX_FORCES * FORCE.itemsize, storage)
        b["colliders"] = self.buffer(entity, "colliders", MAX_FORCES * COLLIDER.itemsize, storage)
        tris, edges = triangle_indices(nx, ny), edge_indices(nx, ny)
        b["triangles"] = self.buffer(entity, "triangles", tris.nbytes, wgpu.BufferUsage.INDEX)
        b["edges"] = self.buffer(entity, "edges", edges.nbytes, wgpu.BufferUsage.INDEX)
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
        patch = _Patch(entity, component, b, [])
        patch.triangle_count, patch.edge_count = len(tris), len(edges)
        self.patches[name] = patch
        patch.passes = self._passes(patch)
        self._write_params(patch, StepInfo(frame=0, dt=self.shared.fixed_dt, seed=self.shared.seed))
        if component.prewarm > 0.0:
            self._prewarm(patch)

    def _prewarm(self, patch: _Patch) -> None:
        """Run the component's prewarm (see the module docstring)."""
        c, name = patch.component, patch.entity.name
        nx, ny = c.resolution
        dt, steps = self.shared.fixed_dt, c.prewarm_steps(self.shared.fixed_dt)
        graph = FrameGraph([p for p in patch.passes if p.phase in SIMULATION_PHASES
                            and p.phase != Phase.READBACK], self.resources.persistent())

        def encode_step(encoder, k: int) -> None:
            patch.step_parity = patch.parity
            patch.parity = (patch.parity + c.substeps) % 2
            graph.encode(encoder, {})

        b = patch.buffers
        step_batches.run_steps(
            self.device, f"{name}:cloth:prewarm", steps, nx * ny * c.substeps, encode_step,
            fence_source=b["params"],
            notice=PrewarmNotice(name, c.prewarm, f"{nx}x{ny} vertices x {c.substeps} substeps",
                                 "vertex-substeps"),
            uniforms=StagedUniforms((b["params"], b["forces"], b["colliders"]),
                                    lambda k: self._step_records(patch, (k - steps) * dt, dt)))

    def _passes(self, patch: _Patch) -> list[Pass]:
        c = patch.component
        name = patch.entity.name
        prefix = f"{name}:cloth"
        patch.built_with = wireframe, wind, colliders = self._variant(patch)
        nx, ny = c.resolution
        grid = (math.ceil(nx / GROUP[0]), math.ceil(ny / GROUP[1]), 1)
        r = (lambda k: f"{name}/{k}")  # noqa: E731
        # variant p reads the state in pos<p>/vel<p> and writes the other pair
        substep = [{"params": r("params"), "pos_in": r(f"pos{p}"), "vel_in": r(f"vel{p}"),
                    "pos_out": r(f"pos{1 - p}"), "vel_out": r(f"vel{1 - p}"), "rest": r("rest"),
                    "forces": r("forces"), "colliders": r("colliders")} for p in (0, 1)]
        # The wind and collider code is compiled out when nothing of the kind acts on the patch:
        # on CPU backends (lavapipe) a step that merely contains those loops ran several times
        # slower, even with zero iterations (the emitter's HAS_FORCES found the same).
        passes = [self.build.compute(
            f"{prefix}:substeps", Phase.SIMULATE, "cloth/step.wgsl", grid, substep,
            constants={"HAS_WIND": wind, "HAS_COLLIDERS": colliders},
            pick=lambda k: (patch.step_parity + k) % 2,
            repeat=lambda: patch.component.substeps)]
        passes.append(self.build.compute(
            f"{prefix}:normals", Phase.PREPARE, "cloth/normals.wgsl", grid,
            [{"params": r("params"), "positions": r(f"pos{p}"), "normals": r("normals")}
             for p in (0, 1)], pick=lambda: patch.parity))
        passes.append(self.build.draw(
            f"{prefix}:draw", "cloth/draw.wgsl", self._mesh_pipeline(),
            [{"frame": "frame", "params": r("params"), "look": r("look"),
              "positions": r(f"pos{p}"), "normals": r("normals")} for p in (0, 1)],
            pick=lambda: patch.parity, index=(r("triangles"), "uint32", patch.triangle_count),
            order=RenderQueue.OPAQUE))
        if wireframe:
            passes.append(self.build.draw(
                f"{prefix}:wire", "cloth/wire.wgsl", self._wire_pipeline(),
                [{"frame": "frame", "positions": r(f"pos{p}")} for p in (0, 1)],
                pick=lambda: patch.parity, index=(r("edges"), "uint32", patch.edge_count),
                order=RenderQueue.OPAQUE + 1))
        return passes

    def _render_pipeline(self, shader: str, topology: str, cull: str = "none"):
        cache = self.__dict__.setdefault("_pipelines", {})
        if shader not in cache:
            module = wgsl.create_module(self.device, shader)
            cache[shader] = self.device.create_render_pipeline(
                label=shader, layout=pipeline_layout(self.device, shader, RENDER),
                vertex={"module": module, "entry_point": "vs_main"},
                primitive={"topology": topology, "cull_mode": cull},
                depth_stencil={"format": self.shared.depth_format, "depth_write_enabled": True,
                               "depth_compare": "less"},
                fragment={"module": module, "entry_point": "fs_main",
                          "targets": [{"format": self.shared.scene_format}]})
        return cache[shader]

    def _mesh_pipeline(self):
        return self._render_pipeline("cloth/draw.wgsl", "triangle-list")

    def _wire_pipeline(self):
        return self._render_pipeline("cloth/wire.wgsl", "line-list")

    def remove(self, entity: EntityRef) -> None:
        del self.patches[entity.name]   # the registry releases its buffers

    def passes(self) -> list[Pass]:
        for patch in self.patches.values():
            if patch.built_with != self._variant(patch):
                patch.passes = self._passes(patch)
        return [p for patch in self.patches.values() for p in patch.passes]

    def _winds(self, patch: _Patch) -> list:
        return [f for f in self.acting_on(patch, ("force_field",))
                if isinstance(f, ForceField) and f.kind == "wind"]

    def _variant(self, patch: _Patch) -> tuple[bool, bool, bool]:
        """What the passes depend on beyond the buffers: the wireframe pass, and whether wind and
        colliders act (specialisation constants of the step)."""
        return (patch.component.wireframe, bool(self._winds(patch)),
                bool(self.acting_on(patch, COLLIDER_KEYS)))

    def acting_on(self, patch: _Patch, keys: tuple[str, ...]) -> list:
        """The components of ``keys`` acting on the patch (colliders: spheres and planes only;
        other shapes act on particles)."""
        wanted = patch.component.affected_by
        found = [comp for ref, comp in self.query(*keys)
                 if wanted is None or ref.name in wanted]
        return cloth_colliders(found) if keys == COLLIDER_KEYS else found

    def before_step(self, step: StepInfo) -> None:
        for patch in self.patches.values():
            self._write_params(patch, step)
            patch.step_parity = patch.parity
            patch.parity = (patch.parity + patch.component.substeps) % 2

    def _write_params(self, patch: _Patch, step: StepInfo) -> None:
        buffers = patch.buffers
        for key, record in zip(("params", "forces", "colliders"),
                               self._step_records(patch, step.frame * step.dt, step.dt)):
            self.resources.write(buffers[key], record)

    def _step_records(self, patch: _Patch, time: float, dt: float) -> tuple[bytes, bytes, bytes]:
        """The params, forces and colliders of the step starting at ``time`` seconds."""
        c = patch.component
        nx, ny = c.resolution
        # the first MAX_FORCES of each in scene order, as an emitter takes its forces
        winds = self._winds(patch)[:MAX_FORCES]
        colliders = self.acting_on(patch, COLLIDER_KEYS)[:MAX_FORCES]
        dx, dy = c.size[0] / (nx - 1), c.size[1] / (ny - 1)
        rec = np.zeros((), PARAMS)
        rec["gravity"] = (*c.gravity, c.drag)
        rec["pin_offset"] = (*c.pin_offset, 0.0)
        rec["rest"] = (dx, dy, math.hypot(dx, dy), dx * dy)
        rec["nx"], rec["ny"] = nx, ny
        rec["h"] = dt / c.substeps
        rec["stiffness"], rec["damping"], rec["mass"] = c.stiffness, c.damping, c.mass
        rec["force_count"], rec["collider_count"] = len(winds), len(colliders)
        return (rec.tobytes(), pack_forces(winds, time).tobytes(),
                pack_colliders(colliders).tobytes())

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
