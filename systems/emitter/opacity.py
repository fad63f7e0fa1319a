"""Particle shadows, two emitter features: ``cast_shadows = true`` draws the emitter's sprites
into the light's opacity layers (runtime/core/shadows.py), through which the light reaching
every receiver (colliders, cloth, mesh particles) is exp(-tau) of what it was; and
``receive_shadows = true`` lights its sprites by the scene light at each one's centre, looked up
in the shadow map and the opacity layers (emitter/receive_shadows.wgsl swapped into its draws
for emitter/receive.wgsl).

What the feature adds, and where (emitter/features.py lists the features):
  applies      ``cast_shadows`` is set on a sprite emitter (mesh particles cast into the depth
               map whatever it says, systems/meshes/draw.py)
  batch key    none: such an emitter runs alone (its opacity draw reads its own buffers)
  passes       RENDER <e>:emitter:opacity, each alive particle as a square of its size facing the
               light, adding alpha x alpha over life x sprite coverage to the layer of its depth
               (emitter/opacity.wgsl); the system adds it after the sprite draw
A slab of N particles of edge s and alpha a spread over an area A seen from the light has optical
depth tau = N a c s^2 / A, c the sprite's mean coverage of its square (1 for an opaque texture,
pi / 12 for the default dot's (1 - r^2)^2 falloff).

``caster_sphere`` estimates where an emitter's particles can be (casting sprites and mesh
particles alike), for fitting the light's box.

Receiving (``ReceiveShadowsFeature``): the sprite's colour is scaled by ambient + color x
intensity x visibility of the [light] at its centre (no normal: as a surface facing the light),
plus the point lights there (runtime/core/point_lights.py), each as on a surface facing it;
such an emitter runs alone too, and its draw is made again when the shadow map is new.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from emberfx.blocks.sprites import sprite_indices
from emberfx.blocks.textures import sprite_sampler
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.point_lights import light_bindings
from emberfx.core.shadows import (
    OPACITY_FORMAT,
    OPACITY_MAP,
    OPACITY_TARGET,
    SHADOW_MAP,
    SHADOW_ORDER,
)
from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.looks import DRAW, DRAW_SOFT, textured
from emberfx.systems.emitter.tables import as_range, numeric

if TYPE_CHECKING:
    from emberfx.core.frame_graph import Pass
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

SHADER = "emitter/opacity.wgsl"


def casts(component) -> bool:
    """Whether the emitter's sprites cast into the opacity layers."""
    return bool(component.cast_shadows) and component.mesh is None


class ShadowCastFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "cast_shadows"

    def applies(self, component) -> bool:
        return casts(component)

    def batch_key(self, component, resolve) -> tuple | None:
        return None


def receives(component) -> bool:
    """Whether the emitter's sprites are lit by the shadowed scene light."""
    return bool(component.receive_shadows) and component.mesh is None


class ReceiveShadowsFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "receive_shadows"

    def applies(self, component) -> bool:
        return receives(component)

    def batch_key(self, component, resolve) -> tuple | None:
        return None

    def includes(self, base: str) -> dict[str, str]:
        if base in (DRAW, DRAW_SOFT):
            return {"emitter/receive.wgsl": "emitter/receive_shadows.wgsl"}
        return {}

    def bindings(self, base: str, buffers: dict) -> dict:
        if base in (DRAW, DRAW_SOFT):
            return {"shadow_map": SHADOW_MAP, "shadow_opacity": OPACITY_MAP, **light_bindings()}
        return {}


def opacity_pass(system: EmitterHost, pool: Pool) -> Pass:
    """The draw of a lone casting emitter's particles into the opacity layers."""
    name, b, component = pool.entity.name, pool.buffers, pool.component
    pipeline = render_pipeline(system.device, RenderKey(
        SHADER, OPACITY_FORMAT, blend="sum", constants={"TEXTURED": textured(component)},
        label=f"{SHADER}:{name}"))
    bindings = {"frame": "frame", "emitters": b["params"], "particles": b["particles"],
                "alive_list": b["alive_list"], "looks": b["looks"],
                "sprite_texture": pool.texture, "sprite_sampler": sprite_sampler(system.device)}
    made = system.build.draw(
        f"{name}:emitter:opacity", SHADER, pipeline, bindings, target=OPACITY_TARGET,
        indirect=(b["draw_args"], 0), order=SHADOW_ORDER,
        index=(sprite_indices(system.resources, system.key), "uint32", 6),
        does="each alive particle's opacity into the light's opacity layers")
    return replace(made, writes=(*made.writes, OPACITY_MAP))


def caster_sphere(component) -> tuple[tuple[float, float, float], float]:
    """A sphere around where the emitter's particles can be, for fitting the shadow box. With
    linear drag k over the longest life T, the fastest birth speed v carries a particle
    reach = v (1 - e^-kT) / k (v T without drag) and gravity g a further
    fall = g (T - (1 - e^-kT) / k) / k (g T^2 / 2 without drag) along it: sideways of gravity
    as far as the birth cone leans (reach x sin of its widest angle from the line of gravity),
    against it as high as reach or the ballistic height v^2 / 2g, along it reach + fall, cut
    at the sideways reach when gravity points down (the particles further down are under a
    floor in most scenes; ``[light] shadow_extent`` covers the others). Plus the emission
    shape and half the largest particle. Other entities' forces are not counted; an
    expression's speed or lifetime counts as 1."""
    c = component
    speed = max(as_range(numeric(c.speed)))
    life = max(as_range(numeric(c.lifetime)))
    k = c.drag
    carried = (1.0 - math.exp(-k * life)) / k if k > 0.0 else life   # time-weighted reach
    reach = speed * carried
    g = math.sqrt(sum(v * v for v in c.gravity))
    fall = g * (life - carried) / k if k > 0.0 else 0.5 * g * life * life
    kind = c.shape.kind
    shape = (0.0 if kind == "point"
             else 0.5 * math.sqrt(sum(v * v for v in c.shape.size)) if kind == "box"
             else c.shape.radius + max(c.shape.size) * c.shape.scale if kind == "mesh"
             else c.shape.radius)
    shape += math.sqrt(sum(v * v for v in c.shape.offset))
    size = 0.5 * numeric(c.size) * (1.0 + c.size_variation) * max(c.size_curve, default=1.0)
    if g == 0.0:
        return (c.position[0], c.position[1], c.position[2]), reach + shape + size
    sideways = reach
    if c.velocity == "direction" and c.spread_deg < 90.0:
        # the widest angle of a birth velocity from the line of gravity
        widest = math.radians(c.spread_deg) + math.acos(
            min(1.0, abs(_cosine(c.direction, c.gravity))))
        sideways = reach * math.sin(min(widest, 0.5 * math.pi))
    up = min(reach, speed * speed / (2.0 * g))
    down = reach + fall
    if c.gravity[1] < 0.0:
        down = min(down, max(sideways, up))
    axis = [-v / g for v in c.gravity]   # against gravity
    shift = 0.5 * (up - down)
    x, y, z = (p + a * shift for p, a in zip(c.position, axis))
    return (x, y, z), math.hypot(sideways, 0.5 * (up + down)) + shape + size


def _cosine(a, b) -> float:
    na, nb = math.sqrt(sum(v * v for v in a)), math.sqrt(sum(v * v for v in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return sum(x * y for x, y in zip(a, b)) / (na * nb)
