"""The collider system: visible colliders drawn as lit meshes (colliders act on cloth and
particles through those families, which read the components themselves).

Per drawn collider (``Collider.drawn``: sphere, box and plane unless ``visible = false``):
  RENDER  <e>:collider:shadow the solid into the light's shadow map, spheres and boxes only
                              (colliders/shadow.wgsl; core/shadows.py)
  RENDER  <e>:collider:draw   the lit solid, indexed triangles, shadowed (colliders/draw.wgsl)
  RENDER  <e>:collider:wire   instead, with wireframe = true: its edges (colliders/wire.wgsl)

A plane receives shadows but casts none: it is a floor or a wall, bounded by nothing the light
box could fit, and what lies behind it is not drawn lit by the light anyway.

Both are opaque and write depth, and are ordered before the particles' draws (order
DRAW_ORDER), so particles behind a solid are hidden and depth-buffer collision sees it.

A drawable shape's unit mesh (meshes.py) is uploaded once, when the entity is added or its
``shape`` changes (a rebuild-class field); the live fields (center, radius, half_size,
rotation_deg, point, normal, extent, color) only rewrite the entity's ColliderLook uniform (the
model matrix and colour) before the next step. Shapes sdf and depth have no mesh: the system
keeps them without resources or passes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.core.frame_graph import GEOMETRY_TARGET, Pass, RenderQueue
from emberfx.core.layout import struct_dtype
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.shadows import caster_draw, receiver_bindings
from emberfx.core.system import EntityRef, Priority, System
from emberfx.model.colors import linear_color
from emberfx.model.registry import set_system
from emberfx.systems.colliders.component import Collider
from emberfx.systems.colliders.meshes import MESHES, model_matrix

VERTEX = struct_dtype("colliders/types.wgsl", "MeshVertex")
LOOK = struct_dtype("colliders/types.wgsl", "ColliderLook")
DRAW_ORDER = RenderQueue.OPAQUE
"""render order of the solids: after full-view backgrounds (-100), before particles (0)"""
FLOOR_CELL = 0.5
"""edge of one floor checker cell, world units"""
FLOOR_CONTRAST = 0.22
"""share of the floor colour the checker's darker cells lose"""
MOTTLE_CONTRAST = 0.45
"""pattern = "noise": the share of the colour the mottling adds or takes away"""
MOTTLE_CELL = 0.35
"""pattern = "noise": the size of the noise's coarsest cells, world units"""
RIM = 0.25
"""rim light on spheres and boxes (a floor has none: its grazing far side would glow)"""


def look_record(collider: Collider) -> np.ndarray:
    """The ColliderLook uniform of a drawable collider: model and normal matrices, colour, style."""
    model = model_matrix(collider)
    normal_matrix = np.eye(4)
    normal_matrix[:3, :3] = np.linalg.inv(model[:3, :3]).T
    record = np.zeros((), LOOK)
    record["model"] = model.T                   # WGSL matrices are column-major
    record["normal_matrix"] = normal_matrix.T
    record["color"] = (*linear_color(collider.color)[:3], 1.0)
    pattern = collider.pattern or ("checker" if collider.shape == "plane" else "plain")
    contrast = FLOOR_CONTRAST if pattern == "checker" else 0.0
    cells = collider.extent / FLOOR_CELL if collider.shape == "plane" else 0.0
    record["style"] = (contrast, cells, cells, 0.0 if collider.shape == "plane" else RIM)
    if pattern == "noise":
        record["mottle"] = (MOTTLE_CONTRAST, 1.0 / MOTTLE_CELL, 0.0, 0.0)
    return record


@dataclass
class _Shown:
    entity: EntityRef
    component: Collider
    buffers: dict           # registry views: vertices, triangles, edges, look
    triangle_count: int     # indices in the triangle and edge buffers
    edge_count: int
    passes: list
    built_with: tuple | None = None   # (drawn, wireframe) the passes were built for
    look_current: bool = False        # the look uniform holds the component's values


class ColliderSystem(System):
    key = "collider"
    priority = Priority.SIMULATION

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.shown: dict[str, _Shown] = {}

    def add(self, entity: EntityRef, component: Collider) -> None:
        make = MESHES.get(component.shape)
        if make is None:   # sdf, depth: nothing to draw
            return
        mesh = make()
        vertices = np.zeros(len(mesh.positions), VERTEX)
        vertices["position"] = np.column_stack([mesh.positions, np.ones(len(mesh.positions))])
        vertices["normal"] = np.column_stack([mesh.normals, np.zeros(len(mesh.normals))])
        usage = wgpu.BufferUsage
        b = {"vertices": self.buffer(entity, "vertices", vertices.nbytes, usage.STORAGE),
             "triangles": self.buffer(entity, "triangles", mesh.triangles.nbytes, usage.INDEX),
             "edges": self.buffer(entity, "edges", mesh.edges.nbytes, usage.INDEX),
             "look": self.buffer(entity, "look", LOOK.itemsize, usage.UNIFORM)}
        write = self.resources.write
        write(b["vertices"], vertices.tobytes())
        write(b["triangles"], mesh.triangles.tobytes())
        write(b["edges"], mesh.edges.tobytes())
        shown = _Shown(entity, component, b, len(mesh.triangles), len(mesh.edges), [])
        self.shown[entity.name] = shown
        self._write_look(shown)

    def remove(self, entity: EntityRef) -> None:
        self.shown.pop(entity.name, None)   # the registry releases the buffers

    def edited(self, entity: EntityRef, component: Collider) -> None:
        shown = self.shown.get(entity.name)
        if shown is not None:
            shown.look_current = False

    def passes(self) -> list[Pass]:
        found = []
        for shown in self.shown.values():
            variant = (shown.component.drawn, shown.component.wireframe)
            if variant != shown.built_with:
                shown.passes = self._passes(shown, *variant)
                shown.built_with = variant
            found += shown.passes
        return found

    def _passes(self, shown: _Shown, drawn: bool, wireframe: bool) -> list[Pass]:
        if not drawn:
            return []
        name = shown.entity.name
        shader = "colliders/wire.wgsl" if wireframe else "colliders/draw.wgsl"
        index = (f"{name}/edges", "uint32", shown.edge_count) if wireframe else (
            f"{name}/triangles", "uint32", shown.triangle_count)
        bindings = {"frame": "frame", "look": f"{name}/look", "vertices": f"{name}/vertices"}
        if wireframe:
            return [self.build.draw(f"{name}:collider:wire", shader, self._pipeline(shader),
                                    bindings, index=index, order=DRAW_ORDER,
                                    target=GEOMETRY_TARGET,
                                    does="the collider's edges as lines")]
        found = []
        if shown.component.shape != "plane":
            found.append(caster_draw(self.build, f"{name}:collider:shadow",
                                     "colliders/shadow.wgsl", bindings, closed=True,
                                     index=index, does="the collider into the shadow map"))
        found.append(self.build.draw(f"{name}:collider:draw", shader, self._pipeline(shader),
                                     {**bindings, **receiver_bindings(self.device)}, index=index,
                                     order=DRAW_ORDER, target=GEOMETRY_TARGET,
                                     does="the collider's surface, lit"))
        return found

    def _pipeline(self, shader: str):
        return render_pipeline(self.device, RenderKey(
            shader, self.shared.scene_format, depth_format=self.shared.depth_format,
            depth_write=True, depth_compare="less", sample_count=self.shared.sample_count,
            topology="line-list" if shader.endswith("wire.wgsl") else "triangle-list",
            # both faces: a floor may be seen from below; the fragment shader flips the normal
            cull_mode="none"))

    def targets_changed(self) -> None:
        """A new shadow map: the draws bind it again."""
        for shown in self.shown.values():
            shown.built_with = None

    def shadow_casters(self) -> list[tuple[tuple[float, float, float], float]]:
        """Bounding spheres of the solid spheres and boxes drawn."""
        found = []
        for shown in self.shown.values():
            c = shown.component
            if c.drawn and not c.wireframe and c.shape != "plane":
                radius = c.radius if c.shape == "sphere" else math.hypot(*c.half_size)
                x, y, z = c.center
                found.append(((x, y, z), float(radius)))
        return found

    def before_draw(self) -> None:
        for shown in self.shown.values():
            self._write_look(shown)

    def _write_look(self, shown: _Shown) -> None:
        """Rewrite the look uniform after the component changed: every change reaches the
        system through ``edited`` before the next frame (most frames: none)."""
        if not shown.look_current:
            shown.look_current = True
            self.resources.write(shown.buffers["look"], look_record(shown.component).tobytes())


set_system("collider", ColliderSystem)
