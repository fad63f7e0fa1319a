"""The fractal system: Mandelbrot and Julia escape-time sets computed into a texture.

  RENDER  <e>:fractal:escape   counts and colours per texel (only after a parameter changed:
                               otherwise the dispatch is skipped)
          <e>:fractal:draw     the texture covering the view (a background, the excess cropped)
                               or as a world quad
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.blocks.sprites import quad_queue, texture_quad_pipeline
from emberfx.core import wgsl
from emberfx.core.errors import DeviceLimitError
from emberfx.core.frame_graph import GEOMETRY_TARGET, Pass, Phase, RenderQueue
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array
from emberfx.core.system import EntityRef, Priority, StepInfo, System
from emberfx.model.colors import linear_color
from emberfx.model.registry import set_system
from emberfx.systems.fractal.component import MAX_ZOOM, MIN_ZOOM, Fractal

PARAMS = struct_dtype("fractal/escape.wgsl", "FractalParams")
GROUP = wgsl.workgroup_size("fractal/escape.wgsl")
PLACEMENT = struct_dtype("common/texture_quad.wgsl", "QuadPlacement")
VIEW_FIELDS = ("kind", "center", "zoom", "zoom_rate", "max_iterations", "julia_c", "palette",
               "palette_period", "inside_color")


@dataclass
class _Layer:
    entity: EntityRef
    component: Fractal
    buffers: dict   # registry views: params, placement, iterations
    passes_by_display: dict[str, list[Pass]]   # "fill" and "quad", built once in add()
    computed_key: tuple | None = None   # the view last computed; None: compute on the next frame
    placement_key: tuple | None = None  # the placement last uploaded
    time: float = 0.0                    # simulated seconds (for zoom_rate)


class FractalSystem(System):
    key = "fractal"
    priority = Priority.SIMULATION

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.layers: dict[str, _Layer] = {}
        self._sampler = self.device.create_sampler(mag_filter="nearest", min_filter="nearest")

    def add(self, entity: EntityRef, component: Fractal) -> None:
        name = entity.name
        w, h = component.resolution
        limit = self.gpu.limits["max-texture-dimension-2d"]
        if w > limit or h > limit:
            raise DeviceLimitError(f"entity '{name}': fractal.resolution = {w}x{h} exceeds this "
                                   f"device's {limit} texels per side ({self.gpu.label})")
        self._check_iterations(entity, component)
        uniform, storage = wgpu.BufferUsage.UNIFORM, wgpu.BufferUsage.STORAGE
        b = {"params": self.buffer(entity, "params", PARAMS.itemsize, uniform),
             "placement": self.buffer(entity, "placement", PLACEMENT.itemsize, uniform),
             "iterations": self.buffer(entity, "iterations", w * h * 4, storage,
                                       what=f"entity '{name}': fractal.resolution = {w}x{h}")}
        self.resources.texture(name, "image", size=(w, h), format="rgba8unorm",
                               usage=wgpu.TextureUsage.STORAGE_BINDING
                               | wgpu.TextureUsage.TEXTURE_BINDING, family=self.key)
        layer = _Layer(entity, component, b, {})
        self.layers[name] = layer
        # both display modes up front: a live switch between them picks a list, allocates nothing
        escape = self._escape_pass(layer)
        layer.passes_by_display = {display: [escape, self._draw_pass(layer, display)]
                                   for display in ("fill", "quad")}
        self._write_uniforms(layer)

    def _check_iterations(self, entity: EntityRef, component: Fractal) -> None:
        """The escape loop runs up to max_iterations times in one invocation: refuse more than
        the adapter runs (lavapipe's silent cap would colour escaping points as inside)."""
        limit = self.gpu.loop_iteration_limit
        if limit is not None and component.max_iterations > limit:
            raise DeviceLimitError(
                f"entity '{entity.name}': fractal.max_iterations = {component.max_iterations:,} "
                f"exceeds {limit:,}, the most loop iterations a shader invocation runs on "
                f"{self.gpu.label} (longer loops end early there, silently); expected <= {limit:,}")

    def edited(self, entity: EntityRef, component: Fractal) -> None:
        self._check_iterations(entity, component)

    def _view_key(self, layer: _Layer) -> tuple:
        key = tuple(repr(getattr(layer.component, f)) for f in VIEW_FIELDS)
        return key + ((layer.time,) if layer.component.zoom_rate else ())

    @staticmethod
    def zoom_at(layer: _Layer) -> float:
        c = layer.component
        # holds at the zoom bounds; the exponent is clamped so a long run cannot overflow exp
        exponent = min(max(c.zoom_rate * layer.time, -700.0), 700.0)
        return min(max(c.zoom * math.exp(exponent), MIN_ZOOM), MAX_ZOOM)

    def _escape_pass(self, layer: _Layer) -> Pass:
        c = layer.component
        name = layer.entity.name

        def groups():   # work only when the view changed since the last computation
            self._write_placement(layer)   # a moved quad shows even while the view is unchanged
            key = self._view_key(layer)
            if key == layer.computed_key:
                return (0, 0, 0)
            self._write_uniforms(layer)   # queued writes land before this frame's submit
            layer.computed_key = key
            w, h = c.resolution
            return (math.ceil(w / GROUP[0]), math.ceil(h / GROUP[1]), 1)

        return self.build.compute(f"{name}:fractal:escape", Phase.RENDER, "fractal/escape.wgsl",
                                  groups, {"params": f"{name}/params",
                                           "iterations": f"{name}/iterations",
                                           "image": f"{name}/image"},
                                  order=RenderQueue.BACKGROUND,
                                  does="escape-time iterations of every pixel of the fractal "
                                       "image (only when the view changed)")

    def _draw_pass(self, layer: _Layer, display: str) -> Pass:
        name = layer.entity.name
        draw = texture_quad_pipeline(self.device, display, self.shared.scene_format,
                                     self.shared.depth_format, self.shared.sample_count)
        return self.build.draw(f"{name}:fractal:draw", "common/texture_quad.wgsl", draw,
                               {"frame": "frame", "placement": f"{name}/placement",
                                "image": f"{name}/image", "nearest": self._sampler},
                               vertices=6, order=quad_queue(display), target=GEOMETRY_TARGET,
                               does="the fractal image on its quad, coloured by the palette")

    def remove(self, entity: EntityRef) -> None:
        del self.layers[entity.name]   # the registry releases its resources

    def passes(self) -> list[Pass]:
        out = []
        for layer in self.layers.values():   # pure: the display mode picks a prepared list
            out += layer.passes_by_display[layer.component.display]
        return out

    def before_step(self, step: StepInfo) -> None:
        for layer in self.layers.values():
            layer.time = (step.frame + 1) * step.dt   # the state after this step
            self._write_uniforms(layer)

    def _write_uniforms(self, layer: _Layer) -> None:
        c = layer.component
        w, h = c.resolution
        rec = np.zeros((), PARAMS)
        rec["view"] = (c.center[0], c.center[1], 3.0 / (self.zoom_at(layer) * h),
                       float(c.kind == "julia"))
        rec["julia_c"] = (*c.julia_c, 0.0, 0.0)
        rec["inside"] = linear_color(c.inside_color)
        palette = np.zeros((16, 4), np.float32)
        colors = [linear_color(p) for p in c.palette[:16]]
        palette[:len(colors)] = colors
        rec["palette"] = palette
        rec["size"] = (w, h)
        rec["max_iterations"] = c.max_iterations
        rec["palette_count"] = len(colors)
        rec["palette_period"] = c.palette_period
        self.resources.write(layer.buffers["params"], rec.tobytes())
        self._write_placement(layer, force=True)

    def _write_placement(self, layer: _Layer, force: bool = False) -> None:
        c = layer.component
        key = (c.display, tuple(c.quad_center), tuple(c.quad_size), tuple(c.resolution))
        if key == layer.placement_key and not force:
            return
        layer.placement_key = key
        w, h = c.resolution
        placement = np.zeros((), PLACEMENT)
        if c.display == "quad":
            placement["center"] = (*c.quad_center, 1.0)
            placement["size"] = (*c.quad_size, 0.0, 0.0)
        else:
            placement["size"] = (w, h, 0.0, 0.0)
        self.resources.write(layer.buffers["placement"], placement.tobytes())

    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        layer = self.layers[entity.name]
        self._write_uniforms(layer)
        if self._view_key(layer) != layer.computed_key:   # never drawn since the last change
            encoder = self.device.create_command_encoder(label=f"{entity.name}:fractal:state")
            escape = layer.passes_by_display[layer.component.display][0]
            from emberfx.core.frame_graph import FrameGraph

            FrameGraph([escape], uploaded=set(escape.reads)).encode(encoder, {})
            self.device.queue.submit([encoder.finish()])
        w, h = layer.component.resolution
        counts = read_array(self.device, layer.buffers["iterations"], np.uint32, w * h)
        return {"iterations": counts.reshape(h, w).astype(np.int64)}

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        layer = self.layers[entity.name]
        return {"resolution": layer.component.resolution,
                "up_to_date": self._view_key(layer) == layer.computed_key}


set_system("fractal", FractalSystem)
