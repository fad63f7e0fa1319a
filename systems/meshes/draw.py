"""Mesh particles: an emitter with ``mesh`` set draws each alive particle as a lit mesh instead of
a sprite. The emitter system asks ``mesh_particle_passes`` for its draw; everything else of the
emitter (pool, update, alive list, draw arguments) is unchanged, and this module binds it only by
registry name, ``<entity>/particles``, ``alive_list``, ``draw_args``, ``params``, ``looks``:

  PREPARE  <e>:mesh:prepare   drawIndirect args: the mesh's vertex count x the emitter's instance
                              count (word 1 of <e>/draw_args, the alive count)
  RENDER   <e>:mesh:shadow    the mesh per alive particle into the light's shadow map
                              (core/shadows.py): back faces of the built-in solids, both faces
                              of an OBJ file (it may be open)
  RENDER   <e>:mesh:draw      the mesh per alive particle, opaque, lit by the scene light and
                              shadowed

Resources of its own, owned by the emitter entity: ``<e>/mesh_vertices`` (the triangle list),
``<e>/mesh_args`` (4 words, INDIRECT) and ``<e>/mesh_look`` (MeshLook; ``pack_mesh_look`` is
rewritten with the emitter's live uniforms, so ``align``, ``axis``, ``rotation_deg`` and
``angular_velocity_deg`` edits show on the next frame).
"""

from __future__ import annotations

import math

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.errors import SceneError
from emberfx.core.frame_graph import GEOMETRY_TARGET, Pass, Phase, RenderQueue
from emberfx.core.layout import struct_dtype
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.shadows import caster_draw, receiver_bindings
from emberfx.systems.emitter.looks import step_identity
from emberfx.systems.meshes.obj import ObjError, read_obj
from emberfx.systems.meshes.shapes import BUILT_IN, TriangleMesh, built_in_mesh, vertex_records

MESH_LOOK = struct_dtype("meshes/types.wgsl", "MeshLook")
MESH_VERTEX = struct_dtype("meshes/types.wgsl", "MeshVertex")
ALIGN = {"camera": wgsl.int_constant("meshes/types.wgsl", "MESH_ALIGN_SPIN"),
         "velocity": wgsl.int_constant("meshes/types.wgsl", "MESH_ALIGN_VELOCITY"),
         "axis": wgsl.int_constant("meshes/types.wgsl", "MESH_ALIGN_AXIS"),
         "plane": wgsl.int_constant("meshes/types.wgsl", "MESH_ALIGN_AXIS")}   # +y the normal
DRAW_ORDER = RenderQueue.OPAQUE   # before the transparent sprites that test against its depth


def load_mesh(name: str, resolve) -> TriangleMesh:
    """A built-in mesh by name, or an OBJ file relative to the scene (systems/meshes/obj.py)."""
    if name in BUILT_IN:
        return built_in_mesh(name)
    return read_obj(resolve(name))


def pack_mesh_look(component, vertex_count: int, params=None) -> bytes:
    """The MeshLook uniform: ``align = "camera"`` (the emitter's default, which means nothing
    for a solid) turns meshes about a per-particle random axis by ``rotation_deg`` and
    ``angular_velocity_deg``."""
    c = component
    record = np.zeros((), MESH_LOOK)
    step_identity(record, params)   # birth keys: this step's frame, timestep, seed, entity
    axis = np.asarray(c.axis, np.float64)
    record["axis"] = (*(axis / np.linalg.norm(axis)), 0.0)
    rot, spin = (tuple(math.radians(v) for v in pair)
                 for pair in (c.rotation_deg, c.angular_velocity_deg))
    record["rotation"] = (*rot, *spin)
    record["align"] = ALIGN[c.align]
    record["vertices"] = vertex_count
    return record.tobytes()


def mesh_pipeline(device, color_format: str, depth_format: str,
                  sample_count: int = 1) -> wgpu.GPURenderPipeline:
    """The mesh draw's pipeline for the geometry target of ``sample_count`` samples."""
    return render_pipeline(device, RenderKey(
        "meshes/draw.wgsl", color_format, depth_format=depth_format, depth_write=True,
        depth_compare="less", sample_count=sample_count,
        # closed meshes wind counter-clockwise seen from outside
        front_face="ccw", cull_mode="back"))


def mesh_particle_passes(system, entity, component, buffers: dict) -> list[Pass]:
    """The prepare and draw passes of emitter ``entity`` drawn as ``component.mesh``; its own
    buffers are made through ``system`` (the emitter system: they go with the entity) and
    added to ``buffers`` as ``mesh_vertices``, ``mesh_args`` and ``mesh_look``."""
    name = entity.name
    try:
        mesh = load_mesh(component.mesh, system.shared.resolve)
    except ObjError as exc:   # the file changed since the scene was loaded
        raise SceneError(system.shared.scene_path, str(exc), entity=name,
                         field="emitter.mesh") from None
    records = vertex_records(mesh, MESH_VERTEX)
    usage = wgpu.BufferUsage
    own = {"mesh_vertices": system.buffer(entity, "mesh_vertices", records.nbytes, usage.STORAGE),
           "mesh_args": system.buffer(entity, "mesh_args", 16, usage.STORAGE | usage.INDIRECT),
           "mesh_look": system.buffer(entity, "mesh_look", MESH_LOOK.itemsize, usage.STORAGE)}
    buffers.update(own)
    system.resources.write(own["mesh_vertices"], records.tobytes())
    system.resources.write(own["mesh_look"], pack_mesh_look(component, mesh.vertex_count))
    return [
        system.build.compute(f"{name}:mesh:prepare", Phase.PREPARE, "meshes/prepare.wgsl",
                             (1, 1, 1), {"look": own["mesh_look"],
                                         "source_args": f"{name}/draw_args",
                                         "mesh_args": own["mesh_args"]},
                             does="the meshes' drawIndirect arguments from the alive count"),
        *mesh_draws(system, entity, component, own)]


def mesh_draws(system, entity, component, own: dict) -> list[Pass]:
    """The shadow and lit draws of the meshes over ``own`` buffers (mesh_particle_passes made
    them); made again when the shadow map is new (the emitter system's targets_changed)."""
    name = entity.name
    shared = system.shared
    pipeline = mesh_pipeline(system.device, shared.scene_format, shared.depth_format,
                             shared.sample_count)
    placing = {"frame": "frame", "params": f"{name}/params", "particles": f"{name}/particles",
               "alive_list": f"{name}/alive_list", "looks": f"{name}/looks",
               "look": own["mesh_look"], "vertices": own["mesh_vertices"]}
    return [
        caster_draw(system.build, f"{name}:mesh:shadow", "meshes/shadow.wgsl", placing,
                    closed=component.mesh in BUILT_IN, indirect=(own["mesh_args"], 0),
                    does="a mesh instance per alive particle into the shadow map"),
        system.build.draw(f"{name}:mesh:draw", "meshes/draw.wgsl", pipeline,
                          {**placing, **receiver_bindings(system.device)},
                          indirect=(own["mesh_args"], 0), order=DRAW_ORDER,
                          target=GEOMETRY_TARGET,
                          does="a lit mesh instance per alive particle (drawIndirect)"),
    ]


def write_mesh_look(system, buffers: dict, component, params=None) -> None:
    """Rewrite the MeshLook with the component's live fields (called with the emitter's own
    uniforms each step)."""
    view = buffers["mesh_vertices"]
    system.resources.write(buffers["mesh_look"],
                           pack_mesh_look(component, view.size // MESH_VERTEX.itemsize, params))
