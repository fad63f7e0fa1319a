"""Mesh particles, an emitter feature: ``mesh = "cube" | "sphere" | "tetra" | "rock.obj"`` draws
each alive particle as a lit mesh instance (the meshes family, systems/meshes/draw.py) instead of
a camera-facing sprite.

What the feature adds, and where (emitter/features.py lists the features):
  applies      ``mesh`` is set
  batch key    none: such an emitter runs alone (its draw binds its own views)
  draw         the mesh family's prepare and draw passes, in place of the sprite draw; they make
               the pool's ``mesh_vertices``, ``mesh_args`` and ``mesh_look`` buffers
  upload       the MeshLook again each step, from the emitter's live fields and params record
  shadows      a draw into the light's shadow map (meshes/shadow.wgsl), made again with the lit
               draw when the map is new (``redraw``); opacity.caster_sphere estimates where
               the particles can be, for the light's box
The simulation passes and their shaders are untouched: no WGSL of the emitter changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.meshes.draw import mesh_draws, mesh_particle_passes, write_mesh_look

if TYPE_CHECKING:
    from emberfx.core.frame_graph import Pass
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool


class MeshParticlesFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "mesh_particles"

    def applies(self, component) -> bool:
        return component.mesh is not None

    def batch_key(self, component, resolve) -> tuple | None:
        return None

    # (problem: the component's own check, meshes/shapes.py mesh_problem, reads the file)

    def draw(self, system: EmitterHost, pool: Pool) -> list[Pass] | None:
        return mesh_particle_passes(system, pool.entity, pool.component, pool.buffers)

    def upload(self, system: EmitterHost, pool: Pool, acting: list) -> None:
        if "mesh_look" in pool.buffers:
            write_mesh_look(system, pool.buffers, pool.component, pool.param_record)


def redraw(system: EmitterHost, pool: Pool) -> None:
    """The pool's shadow and lit mesh draws made again over its buffers (a new shadow map)."""
    fresh = {p.name: p for p in mesh_draws(system, pool.entity, pool.component, pool.buffers)}
    pool.passes = [fresh.get(p.name, p) for p in pool.passes]
