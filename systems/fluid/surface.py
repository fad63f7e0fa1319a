"""Screen-space water: a fluid with ``look = { ... }`` (component.Water) drawn as one smoothed,
refracting surface (Green 2010, "Screen Space Fluid Rendering for Games"; van der Laan, Green and
Sainz 2009) instead of a sprite per particle.

Its passes, all compute work in the RENDER phase, for fluid entity ``<e>``:
  <e>:fluid:surface:clear          zeroes the splat buffer
  <e>:fluid:surface:splat          each particle's sphere: the nearest hit per pixel (atomic max
                                   of 1/t) and the chord through it added to the thickness
  <e>:fluid:surface:resolve        the splats as (t, thickness) floats per pixel
  <e>:fluid:surface:smooth:<k>     the passes of a bilateral filter of the depth (SMOOTHING)
  <e>:fluid:surface:depth          a draw: the smoothed surface's depth into the scene depth
                                   ("less": the nearer of the water and what is drawn), where
                                   the water covers opaquely (fluid/surface_cover.wgsl)
  <e>:fluid:surface:copy           the scene image as drawn so far, for refraction
  <e>:fluid:surface:shade          normals from the smoothed depth, Fresnel sky reflection,
                                   refraction, Beer-Lambert absorption and a highlight, written
                                   into the scene image where the water is in front of what was
                                   drawn

The water takes part in depth like an opaque mesh: it is drawn in the render queue
SURFACE_QUEUE, after the opaque geometry, the resolve of its depth and the opaque sprites, and
before the transparent draws, which are then depth-tested against it (a spark behind the water
is hidden, one in front shows over it); the gas volume and soft particles read the depth with
the water in it, and so do ``--depth`` captures and particles' depth collisions. The depth draw
declares a read of the geometry depth, so it follows every geometry draw (and so does the
multisampled depth's resolve, whose queue is earlier); the copy and the shade read the scene
depth, so they follow every writer of it, the depth draws of all water surfaces included.

The per-pixel resources are sized like the scene image, made under their own family
(SURFACE_FAMILY) so that a new target size replaces them alone (``targets_changed``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.frame_graph import (
    GEOMETRY_TARGET,
    SCENE_TARGET,
    CopyTexture,
    Pass,
    Phase,
    RenderQueue,
)
from emberfx.core.layout import struct_dtype
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.point_lights import light_bindings
from emberfx.core.resources import BufferView, TextureResource
from emberfx.core.system import EntityRef, System
from emberfx.model.colors import linear_color
from emberfx.systems.fluid.component import Water

SURFACE = struct_dtype("fluid/surface_types.wgsl", "SurfaceParams")
SURFACE_FAMILY = "fluid:surface"
SCENE_IMAGE = "scene/color"
SCENE_DEPTH = "scene/depth"
GEOMETRY_DEPTH = f"{GEOMETRY_TARGET}/depth"
SURFACE_QUEUE = RenderQueue.OPAQUE_SPRITES + 1
"""the water's render queue: after what writes depth (geometry, its resolve, opaque sprites),
before the transparent draws and the gas volume, which test or read the depth it writes"""
DEPTH_SHADER = "fluid/surface_depth.wgsl"
PIXEL_GROUP = wgsl.workgroup_size("fluid/surface_shade.wgsl")   # every per-pixel pass's
PARTICLE_GROUP = wgsl.workgroup_size("fluid/surface_splat.wgsl")[0]
SPLAT_RADIUS = 1.5
"""the splatted spheres' radius, in particle radii: neighbours 2 radii apart overlap, so the
surface closes between them"""
PARTICLE_VOLUME = 6.0 / (math.pi * SPLAT_RADIUS ** 3)
"""a particle's share of the fluid's volume, (2 r)^3, over its splatted sphere's: the chords
through the spheres, times this, add up to the thickness of water at rest density"""
SMOOTHING = ((1.0, 16.0), (1.0, 16.0))
"""the bilateral filter's passes: (radius, a fraction of FILTER_RADIUS; samples each way at
most, beyond which they thin out). Thinned samples alias the spheres' bumps into a dither at
the silhouette, so both passes sample every pixel up to MAX_FILTER_PIXELS."""
FILTER_RADIUS = 4.0
"""the smoothing filter's radius, in particle radii (the spheres' bumps are 2 radii apart)"""
FILTER_RANGE = 6.0
"""the filter's sigma for differences in depth, in particle radii: a fold farther apart keeps
its edge"""
MAX_FILTER_PIXELS = 16.0
"""the filter's radius at most, in pixels (a close-up smooths less)"""
MAX_FOOTPRINT = 96
"""a splat's size at most, in pixels across (a nearer sphere is cut to it)"""
THICKNESS_SCALE = 1.0e5
"""the thickness buffer's fixed point: units per metre of water (10 micrometres; 43 km fit in
32 bits)"""
MAX_SHIFT = 0.04
"""the largest refraction offset, as a fraction of the image's height"""
ZENITH, GROUND = 0.55, 0.45   # the reflected sky overhead and below the horizon, x the horizon's


def surface_params(look: Water, particle_radius: float, size: tuple[int, int],
                   count: int) -> bytes:
    """The SurfaceParams record of ``look`` for a fluid of particle radius ``particle_radius``
    drawn into a scene image of ``size`` pixels."""
    rec = np.zeros((), SURFACE)
    tint = linear_color(look.color)
    horizon = np.asarray(linear_color(look.sky)[:3])
    rec["tint"] = (*tint[:3], look.absorption)
    f0 = ((look.ior - 1.0) / (look.ior + 1.0)) ** 2
    rec["optics"] = (look.ior, f0, SPLAT_RADIUS * particle_radius,
                     FILTER_RADIUS * particle_radius)
    rec["smoothing"] = (FILTER_RANGE * particle_radius, THICKNESS_SCALE,
                        max(2.0, MAX_SHIFT * size[1]), MAX_FILTER_PIXELS)
    rec["horizon"] = (*horizon, 1.0)
    rec["zenith"] = (*(horizon * ZENITH), 1.0)
    rec["ground"] = (*(horizon * GROUND), 1.0)
    rec["size"] = size
    rec["count"] = count
    rec["footprint"] = MAX_FOOTPRINT
    rec["volume"] = PARTICLE_VOLUME
    return rec.tobytes()


def _chain_step(p: Pass, images: tuple[str, ...]) -> Pass:
    """``p`` declared as reading and writing every one of ``images``, so that passes alternating
    between two images keep their declaration order (a pure reader would be ordered after every
    later writer of its phase)."""
    return dataclasses.replace(p, reads=tuple(dict.fromkeys((*p.reads, *images))),
                               writes=tuple(dict.fromkeys((*p.writes, *images))))


class WaterSurface:
    """The screen-space surface of one fluid entity: its per-pixel resources and passes."""

    def __init__(self, system: System, entity: EntityRef, position: BufferView, slots: int):
        self.system = system
        self.entity = entity
        self.position = position
        self.slots = slots
        self.written = b""
        self.size: tuple[int, int] = (0, 0)
        self.resources: dict[str, BufferView] = {}
        self.background: TextureResource | None = None
        self.passes: list[Pass] = []
        self.sampler = system.device.create_sampler(mag_filter="linear", min_filter="linear")

    def make(self, look: Water, particle_radius: float) -> None:
        """Resources and passes for the current scene image (again after new targets)."""
        self.release()
        resources = self.system.resources
        if SCENE_IMAGE not in resources:   # the renderer makes its targets before any entity
            return
        scene = resources[SCENE_IMAGE]
        assert isinstance(scene, TextureResource)
        w, h = scene.texture.size[:2]
        self.size = (w, h)
        name = self.entity.name
        storage, uniform = wgpu.BufferUsage.STORAGE, wgpu.BufferUsage.UNIFORM
        copy = wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        what = f"entity '{name}': water surface of {w} x {h} pixels"

        def buffer(key: str, size: int, usage: int) -> BufferView:
            return resources.buffer(name, f"surface:{key}", size, usage | copy, what=what,
                                    family=SURFACE_FAMILY)

        r = self.resources
        try:   # a size beyond the device's limits: what was made goes, the error stays
            r["params"] = buffer("params", SURFACE.itemsize, uniform)
            r["splat"] = buffer("splat", 8 * w * h, storage)
            r["a"] = buffer("a", 8 * w * h, storage)
            r["b"] = buffer("b", 8 * w * h, storage)
            r["normals"] = buffer("normals", 16 * w * h, storage)
            self.background = resources.texture(
                name, "surface:background", size=(w, h), format=scene.texture.format,
                usage=wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_DST,
                family=SURFACE_FAMILY)
            self.write(look, particle_radius)
            self.passes = self._passes(scene)
        except Exception:
            self.release()
            raise

    def release(self) -> None:
        self.system.resources.release(self.entity.name, SURFACE_FAMILY)
        self.resources = {}
        self.background = None
        self.passes = []
        self.written = b""

    def write(self, look: Water, particle_radius: float) -> None:
        """The params uniform, rewritten when a live edit changed it."""
        if not self.resources:
            return
        record = surface_params(look, particle_radius, self.size, self.slots)
        if record != self.written:
            self.system.resources.write(self.resources["params"], record)
            self.written = record

    def _passes(self, scene: TextureResource) -> list[Pass]:
        r, e = self.resources, self.entity.name
        build = self.system.build
        w, h = self.size
        pixels = (math.ceil(w / PIXEL_GROUP[0]), math.ceil(h / PIXEL_GROUP[1]), 1)
        particles = self.system.gpu.grid(math.ceil(self.slots / PARTICLE_GROUP))
        frame, params = "frame", r["params"]
        passes = [
            build.clear(f"{e}:fluid:surface:clear", Phase.RENDER, r["splat"],
                        does="zeroes the water's splat buffer"),
            build.compute(f"{e}:fluid:surface:splat", Phase.RENDER, "fluid/surface_splat.wgsl",
                          particles, {"frame": frame, "params": params,
                                      "position": self.position, "splat": r["splat"]},
                          does="each particle's sphere: nearest hit and chord per pixel"),
            build.compute(f"{e}:fluid:surface:resolve", Phase.RENDER,
                          "fluid/surface_resolve.wgsl", pixels,
                          {"params": params, "splat": r["splat"], "surface": r["a"]},
                          does="the splats as depth and thickness per pixel")]
        chain = (r["a"].name, r["b"].name)
        for k, (scale, taps) in enumerate(SMOOTHING):
            source, target = (r["a"], r["b"]) if k % 2 == 0 else (r["b"], r["a"])
            passes.append(_chain_step(build.compute(
                f"{e}:fluid:surface:smooth:{k}", Phase.RENDER, "fluid/surface_smooth.wgsl",
                pixels, {"frame": frame, "params": params, "source": source,
                         "smoothed": target}, constants={"SCALE": scale, "TAPS": taps},
                does="bilateral smoothing of the water's depth"), chain))
        final = r["a"] if len(SMOOTHING) % 2 == 0 else r["b"]
        shared = self.system.shared
        pipeline = render_pipeline(self.system.device, RenderKey(
            DEPTH_SHADER, shared.scene_format, depth_format=shared.depth_format,
            depth_write=True, depth_compare="less", color_writes=False,
            label=f"{e}:fluid:surface:depth"))
        depth = build.draw(f"{e}:fluid:surface:depth", DEPTH_SHADER, pipeline,
                           {"frame": frame, "params": params, "surface": final},
                           target=SCENE_TARGET, vertices=3,
                           does="the water surface's depth into the scene depth")
        # after every geometry draw (the renderer counts their depth as present where none
        # draws), and before every reader of the scene depth
        passes.append(dataclasses.replace(depth, reads=(*depth.reads, GEOMETRY_DEPTH),
                                          writes=(*depth.writes, SCENE_DEPTH)))
        background = self.background
        assert background is not None
        # declared as reading the scene depth, not the image: it then follows every writer of
        # the depth (the geometry's resolve, the water's depth draws), but not the transparent
        # draws into the image, which come after the water
        passes.append(Pass(f"{e}:fluid:surface:copy", Phase.RENDER,
                           CopyTexture(scene.texture, background.texture),
                           reads=(SCENE_DEPTH,), writes=(background.name,),
                           does="the scene image drawn so far, for the water's refraction"))
        passes.append(build.compute(
            f"{e}:fluid:surface:shade", Phase.RENDER, "fluid/surface_shade.wgsl", pixels,
            {"frame": frame, "params": params, "surface": final, "background": background,
             "scene_depth": SCENE_DEPTH, "normals": r["normals"], "output_image": scene,
             "linear_sampler": self.sampler, **light_bindings()},
            does="the water surface shaded and composited into the scene image"))
        # all in the water's queue, so that none waits behind the transparent draws
        return [dataclasses.replace(p, order=SURFACE_QUEUE) for p in passes]
