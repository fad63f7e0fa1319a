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
               draw when the map is new (``redraw``); ``caster_sphere`` estimates where the
               particles can be, for the light's box
The simulation passes and their shaders are untouched: no WGSL of the emitter changes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.tables import as_range, numeric
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

    def upload(self, system: EmitterHost, pool: Pool) -> None:
        if "mesh_look" in pool.buffers:
            write_mesh_look(system, pool.buffers, pool.component, pool.param_record)


def redraw(system: EmitterHost, pool: Pool) -> None:
    """The pool's shadow and lit mesh draws made again over its buffers (a new shadow map)."""
    fresh = {p.name: p for p in mesh_draws(system, pool.entity, pool.component, pool.buffers)}
    pool.passes = [fresh.get(p.name, p) for p in pool.passes]


def caster_sphere(component) -> tuple[tuple[float, float, float], float]:
    """A sphere around where the emitter's particles can be, for fitting the shadow box: from
    the shape, the reach of the fastest particle over the longest life sideways of gravity, its
    ballistic height against gravity, and its fall along gravity over its life (drag: at most
    its terminal speed); a fall toward -y is cut at as far as sideways (the particles further
    down are under a floor in most scenes; ``[light] shadow_extent`` covers the others). Other
    entities' forces are not counted. An expression's speed or lifetime counts as 1."""
    c = component
    speed = max(as_range(numeric(c.speed)))
    life = max(as_range(numeric(c.lifetime)))
    if c.drag > 0.0:
        reach = min(speed * life, speed / c.drag)
    else:
        reach = speed * life
    if c.velocity == "direction" and c.spread_deg < 90.0:
        # the widest angle of a birth velocity from the line of gravity
        widest = math.radians(max(c.spread_deg, 1.0)) + math.acos(
            min(1.0, abs(_cosine(c.direction, c.gravity))))
        sideways = reach * math.sin(min(widest, 0.5 * math.pi))
    else:
        sideways = reach
    g = math.sqrt(sum(v * v for v in c.gravity))
    up = min(reach, speed * speed / (2.0 * g)) if g > 0.0 else reach
    down = speed * life + 0.5 * g * life * life
    if c.drag > 0.0:
        down = min(down, (speed + g * life) / c.drag)
    if c.gravity[1] < 0.0:
        down = min(down, max(sideways, up))
    shape = c.shape.radius + max(c.shape.size) + math.sqrt(sum(v * v for v in c.shape.offset))
    size = numeric(c.size) * (1.0 + c.size_variation) * max(c.size_curve, default=1.0)
    if g > 0.0:
        axis = [-v / g for v in c.gravity]   # up
        shift = 0.5 * (up - down)
    else:
        axis, shift = [0.0, 1.0, 0.0], 0.0
    centre = tuple(p + a * shift for p, a in zip(c.position, axis))
    radius = math.hypot(sideways, 0.5 * (up + down)) + shape + size
    return (centre[0], centre[1], centre[2]), radius


def _cosine(a, b) -> float:
    na, nb = math.sqrt(sum(v * v for v in a)), math.sqrt(sum(v * v for v in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return sum(x * y for x, y in zip(a, b)) / (na * nb)
