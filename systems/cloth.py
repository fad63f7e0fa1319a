"""The cloth system: explicit mass-spring patches.

Per simulation step, for each cloth entity (one compute pass):
  SIMULATE  <e>:cloth:substeps     `substeps` explicit substeps (one dispatch, repeated),
                                   positions and velocities ping-ponging between two buffer
                                   pairs (cloth/step.wgsl)
  PREPARE   <e>:cloth:normals      vertex normals after the last substep
  RENDER    <e>:cloth:draw         lit two-sided mesh, indexed; <e>:cloth:wire with wireframe

Wind (force_field kind "wind") and colliders are other entities' components, packed each step
like the emitter's forces; `affected_by` limits them.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx import wgsl
from emberfx.colors import linear_color
from emberfx.frame_graph import Dispatch, Draw, Pass, Phase
from emberfx.layout import struct_dtype
from emberfx.readback import read_array
from emberfx.registry import set_system
from emberfx.system import EntityRef, Priority, StepInfo, System
from emberfx.systems.cloth_component import Cloth
from emberfx.systems.forces import COLLIDER, FORCE, ForceField, pack_colliders, pack_forces

PARAMS = struct_dtype("cloth/types.wgsl", "ClothParams")
GROUP = wgsl.workgroup_size("cloth/step.wgsl")   # also cloth/normals.wgsl's
LOOK = struct_dtype("cloth/draw.wgsl", "ClothLook")
COLLIDER_KEYS = ("collider",)


def stable_substeps(c: Cloth, fixed_dt: float) -> int:
    """Substeps for which the explicit step stays stable: h sqrt(12 k / m) below ~1.8 (12 springs
    act on a vertex at most; semi-implicit Euler diverges past h omega = 2)."""
    omega = math.sqrt(12.0 * c.stiffness / c.mass)
    return max(1, math.ceil(fixed_dt * omega / 1.8))


def rotation_matrix(degrees: tuple[float, float, float]) -> np.ndarray:
    ax, ay, az = (math.radians(d) for d in degrees)
    rx = np.array([[1, 0, 0], [0, math.cos(ax), -math.sin(ax)], [0, math.sin(ax), math.cos(ax)]])
    ry = np.array([[math.cos(ay), 0, math.sin(ay)], [0, 1, 0], [-math.sin(ay), 0, math.cos(ay)]])
    rz = np.array([[math.cos(az), -math.sin(az), 0], [math.sin(az), math.cos(az), 0], [0, 0, 1]])
    return rz @ ry @ rx


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
    buffers: dict
    passes: list
    parity: int = 0
    step_parity: int = 0
    built_with: tuple = ()    # (wireframe, wind, colliders) the passes were built for
    triangle_count: int = 0   # index counts of the triangle and wireframe-edge buffers
    edge_count: int = 0


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
        needed = stable_substeps(component, self.shared.fixed_dt)
        if component.substeps < needed:
            print(f"emberfx: warning: entity '{name}': cloth.substeps = {component.substeps} is "
                  f"too few for stiffness {component.stiffness:g} and mass {component.mass:g} "
                  f"(explicit steps diverge); use at least {needed}", file=sys.stderr)
        self.gpu.check_buffer_size(n * 16, what)
        b = {k: self.storage_buffer(f"{name}/{k}", n * 16, what=what)
             for k in ("pos0", "pos1", "vel0", "vel1", "rest", "normals")}
        b["params"] = self.uniform_buffer(f"{name}/params", PARAMS.itemsize)
        b["look"] = self.uniform_buffer(f"{name}/look", LOOK.itemsize)
        b["forces"] = self.storage_buffer(
            f"{name}/forces", max(1, len(self.query("force_field"))) * FORCE.itemsize)
        b["colliders"] = self.storage_buffer(
            f"{name}/colliders", max(1, len(self.query(*COLLIDER_KEYS))) * COLLIDER.itemsize)
        tris, edges = triangle_indices(nx, ny), edge_indices(nx, ny)
        index_usage = wgpu.BufferUsage.INDEX | wgpu.BufferUsage.COPY_DST
        b["triangles"] = self.device.create_buffer_with_data(data=tris, usage=index_usage)
        b["edges"] = self.device.create_buffer_with_data(data=edges, usage=index_usage)
        positions = initial_positions(component).reshape(-1, 3)
        rest = np.zeros((n, 4), np.float32)
        rest[:, :3] = positions
        for i, j in component.pin_list():
            rest[j * nx + i, 3] = 1.0
        state = np.zeros((n, 4), np.float32)
        state[:, :3] = positions
        state[:, 3] = 1.0
        queue = self.device.queue
        queue.write_buffer(b["rest"], 0, rest.tobytes())
        queue.write_buffer(b["pos0"], 0, state.tobytes())
        queue.write_buffer(b["vel0"], 0, np.zeros((n, 4), np.float32).tobytes())
        patch = _Patch(entity, component, b, [])
        patch.triangle_count, patch.edge_count = len(tris), len(edges)
        self.patches[name] = patch
        patch.passes = self._passes(patch)
        self._write_params(patch, StepInfo(frame=0, dt=self.shared.fixed_dt, seed=self.shared.seed))

    def _passes(self, patch: _Patch) -> list[Pass]:
        gpu, b, c = self.gpu, patch.buffers, patch.component
        name = patch.entity.name
        prefix = f"{name}:cloth"
        patch.built_with = wireframe, wind, colliders = self._variant(patch)
        nx, ny = c.resolution
        grid = (math.ceil(nx / GROUP[0]), math.ceil(ny / GROUP[1]), 1)
        # The wind and collider code is compiled out when nothing of the kind acts on the patch:
        # on CPU backends (lavapipe) a step that merely contains those loops ran several times
        # slower, even with zero iterations (the emitter's HAS_FORCES found the same).
        step = gpu.compute_pipeline("cloth/step.wgsl", {"HAS_WIND": wind,
                                                        "HAS_COLLIDERS": colliders})
        groups = [gpu.bind_group(f"{prefix}:substep", step, 0,
                                 [b["params"], b[f"pos{p}"], b[f"vel{p}"], b[f"pos{1 - p}"],
                                  b[f"vel{1 - p}"], b["rest"], b["forces"], b["colliders"]])
                  for p in (0, 1)]
        state, r = f"{name}/state", (lambda k: f"{name}/{k}")  # noqa: E731
        passes = [Pass(f"{prefix}:substeps", Phase.SIMULATE,
                       Dispatch(step, (lambda k: groups[(patch.step_parity + k) % 2],), grid,
                                repeat=lambda: patch.component.substeps),
                       reads=(r("params"), state, r("rest"), r("forces"), r("colliders")),
                       writes=(state,))]
        normals = gpu.compute_pipeline("cloth/normals.wgsl")
        normal_groups = [gpu.bind_group(f"{prefix}:normals", normals, 0,
                                        [b["params"], b[f"pos{p}"], b["normals"]]) for p in (0, 1)]
        passes.append(Pass(f"{prefix}:normals", Phase.PREPARE,
                           Dispatch(normals, (lambda: normal_groups[patch.parity],), grid),
                           reads=(r("params"), state), writes=(r("normals"),)))
        draw = self._mesh_pipeline()
        draw_groups = [self.device.create_bind_group(
            label=f"{prefix}:draw", layout=draw.get_bind_group_layout(0), entries=[
                {"binding": 0, "resource": {"buffer": self.shared.frame_uniform}},
                {"binding": 1, "resource": {"buffer": b["params"]}},
                {"binding": 2, "resource": {"buffer": b["look"]}},
                {"binding": 3, "resource": {"buffer": b[f"pos{p}"]}},
                {"binding": 4, "resource": {"buffer": b["normals"]}}]) for p in (0, 1)]
        passes.append(Pass(f"{prefix}:draw", Phase.RENDER,
                           Draw(draw, (lambda: draw_groups[patch.parity],), target="scene",
                                index=(b["triangles"], "uint32", patch.triangle_count)),
                           reads=("frame", r("params"), r("look"), state, r("normals")),
                           writes=("scene/color",)))
        if c.wireframe:
            wire = self._wire_pipeline()
            wire_groups = [gpu.bind_group(f"{prefix}:wire", wire, 0,
                                          [self.shared.frame_uniform, b[f"pos{p}"]])
                           for p in (0, 1)]
            passes.append(Pass(f"{prefix}:wire", Phase.RENDER,
                               Draw(wire, (lambda: wire_groups[patch.parity],), target="scene",
                                    index=(b["edges"], "uint32", patch.edge_count)),
                               reads=("frame", state), writes=("scene/color",), order=1))
        return passes

    def _render_pipeline(self, shader: str, topology: str, cull: str = "none"):
        cache = self.__dict__.setdefault("_pipelines", {})
        if shader not in cache:
            from emberfx import wgsl

            module = wgsl.create_module(self.device, shader)
            cache[shader] = self.device.create_render_pipeline(
                label=shader, layout="auto",
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
        patch = self.patches.pop(entity.name)
        for buffer in patch.buffers.values():
            buffer.destroy()

    def passes(self) -> list[Pass]:
        for patch in self.patches.values():
            if patch.built_with != self._variant(patch):
                patch.passes = self._passes(patch)
        return [p for patch in self.patches.values() for p in patch.passes]

    def uploaded(self) -> set[str]:
        return {f"{n}/{k}" for n in self.patches
                for k in ("params", "state", "rest", "forces", "colliders", "look", "normals")}

    def _winds(self, patch: _Patch) -> list:
        return [f for f in self.acting_on(patch, ("force_field",))
                if isinstance(f, ForceField) and f.kind == "wind"]

    def _variant(self, patch: _Patch) -> tuple[bool, bool, bool]:
        """What the passes depend on beyond the buffers: the wireframe pass, and whether wind and
        colliders act (specialisation constants of the step)."""
        return (patch.component.wireframe, bool(self._winds(patch)),
                bool(self.acting_on(patch, COLLIDER_KEYS)))

    def acting_on(self, patch: _Patch, keys: tuple[str, ...]) -> list:
        wanted = patch.component.affected_by
        return [comp for ref, comp in self.query(*keys)
                if wanted is None or ref.name in wanted]

    def before_step(self, step: StepInfo) -> None:
        for patch in self.patches.values():
            self._write_params(patch, step)
            patch.step_parity = patch.parity
            patch.parity = (patch.parity + patch.component.substeps) % 2

    def _write_params(self, patch: _Patch, step: StepInfo) -> None:
        c = patch.component
        nx, ny = c.resolution
        winds = self._winds(patch)
        colliders = self.acting_on(patch, COLLIDER_KEYS)
        dx, dy = c.size[0] / (nx - 1), c.size[1] / (ny - 1)
        rec = np.zeros((), PARAMS)
        rec["gravity"] = (*c.gravity, c.drag)
        rec["pin_offset"] = (*c.pin_offset, 0.0)
        rec["rest"] = (dx, dy, math.hypot(dx, dy), dx * dy)
        rec["nx"], rec["ny"] = nx, ny
        rec["h"] = step.dt / c.substeps
        rec["stiffness"], rec["damping"], rec["mass"] = c.stiffness, c.damping, c.mass
        rec["force_count"], rec["collider_count"] = len(winds), len(colliders)
        queue = self.device.queue
        queue.write_buffer(patch.buffers["params"], 0, rec.tobytes())
        queue.write_buffer(patch.buffers["forces"], 0,
                           pack_forces(winds, step.frame * step.dt).tobytes())
        queue.write_buffer(patch.buffers["colliders"], 0, pack_colliders(colliders).tobytes())
        look = np.zeros((), LOOK)
        look["color"] = linear_color(c.color)
        if c.checker is not None:
            look["checker"] = (*linear_color(c.checker)[:3], 1.0)
        look["checker_cells"] = c.checker_cells
        queue.write_buffer(patch.buffers["look"], 0, look.tobytes())

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
