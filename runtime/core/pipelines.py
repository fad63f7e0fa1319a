"""The two pipeline factories: every compute and render pipeline of emberfx is made here, once
per device and description, with the layout its shader declares (bindings.pipeline_layout).

A compute pipeline is described by its shader and override constants. A render pipeline by a
``RenderKey``: a small frozen value holding the shader, its override constants, entry points,
vertex buffer layout, target formats, blend, colour writes, depth state, primitive topology,
cull mode and sample count. Equal keys give the same pipeline object, so systems that draw
alike share one pipeline (and render bundles recorded with it).

Both caches are ``shader_cache`` caches: pipelines of a generated program are forgotten with the
program (core/shader_cache.py), those of package shaders live as long as the process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from emberfx.core import bindings, wgsl
from emberfx.core.shader_cache import shader_cache

BLEND_STATES: dict[str, dict] = {
    # premultiplied light added to the target; the target's alpha is left as it was
    "additive": {"color": {"src_factor": "one", "dst_factor": "one", "operation": "add"},
                 "alpha": {"src_factor": "zero", "dst_factor": "one", "operation": "add"}},
    # premultiplied colour over the target
    "alpha": {"color": {"src_factor": "one", "dst_factor": "one-minus-src-alpha",
                        "operation": "add"},
              "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha",
                        "operation": "add"}},
    # every channel summed (the shadow's opacity layers: optical depths add)
    "sum": {"color": {"src_factor": "one", "dst_factor": "one", "operation": "add"},
            "alpha": {"src_factor": "one", "dst_factor": "one", "operation": "add"}},
}
"""blend states by name; a RenderKey without ``blend`` replaces the target's texels"""

_COMPUTE: dict[tuple, Any] = shader_cache()   # (device id, shader, constants) -> pipeline
_RENDER: dict[tuple, Any] = shader_cache()    # (device id, shader, RenderKey) -> pipeline


def _constants(values: Mapping[str, Any] | tuple | None) -> tuple[tuple[str, Any], ...]:
    items = values.items() if isinstance(values, Mapping) else (values or ())
    return tuple(sorted(items))


def compute_pipeline(device, shader: str, constants: Mapping[str, Any] | None = None):
    """A compute pipeline for shaders/``shader`` (entry point ``main``) whose layout is made
    from the shader's declarations, cached per device, shader and constants."""
    key = (id(device), shader, _constants(constants))
    pipeline = _COMPUTE.get(key)
    if pipeline is None:
        pipeline = _COMPUTE[key] = device.create_compute_pipeline(
            label=shader, layout=bindings.pipeline_layout(device, shader),
            compute={"module": wgsl.create_module(device, shader), "entry_point": "main",
                     "constants": dict(key[2])})
    return pipeline


@dataclass(frozen=True)
class VertexBuffer:
    """One vertex buffer slot: its stride, step mode and (format, byte offset, location)
    attributes."""
    stride: int
    attributes: tuple[tuple[str, int, int], ...]
    step_mode: str = "vertex"

    def descriptor(self) -> dict:
        return {"array_stride": self.stride, "step_mode": self.step_mode,
                "attributes": [{"format": f, "offset": o, "shader_location": loc}
                               for f, o, loc in self.attributes]}


@dataclass(frozen=True)
class RenderKey:
    """Everything a render pipeline is made from. ``constants`` may be given as a dict (it is
    kept as sorted pairs); ``targets`` as one format or several. ``depth_format`` None: no depth
    attachment. Most emberfx shaders pull their vertices from storage buffers, so
    ``vertex_buffers`` is usually empty."""
    shader: str
    targets: tuple[str, ...] | str
    blend: str | None = None
    depth_format: str | None = None
    depth_write: bool = False
    depth_compare: str = "always"
    topology: str = "triangle-list"
    cull_mode: str = "none"
    front_face: str = "ccw"
    vertex_entry: str = "vs_main"
    fragment_entry: str = "fs_main"
    constants: tuple[tuple[str, Any], ...] | Mapping[str, Any] = ()
    vertex_buffers: tuple[VertexBuffer, ...] = ()
    sample_count: int = 1
    color_writes: bool = True   # False: the colour targets are left as they are (a depth-only draw)
    label: str = field(default="", compare=False)

    def __post_init__(self):
        object.__setattr__(self, "constants", _constants(self.constants))
        if isinstance(self.targets, str):
            object.__setattr__(self, "targets", (self.targets,))
        if self.blend is not None and self.blend not in BLEND_STATES:
            raise ValueError(f"render pipeline of shaders/{self.shader}: expected a blend of "
                             f"{', '.join(BLEND_STATES)} or none, found {self.blend!r}")

    def descriptor(self, device) -> dict:
        """The arguments of device.create_render_pipeline for this key."""
        module = wgsl.create_module(device, self.shader)
        constants = dict(self.constants)
        target: dict[str, Any] = {}
        if self.blend is not None:
            target["blend"] = BLEND_STATES[self.blend]
        if not self.color_writes:
            target["write_mask"] = 0
        descriptor: dict[str, Any] = {
            "label": self.label or f"{self.shader}:{self.fragment_entry}",
            "layout": bindings.pipeline_layout(device, self.shader, bindings.RENDER),
            "vertex": {"module": module, "entry_point": self.vertex_entry,
                       "constants": constants,
                       "buffers": [b.descriptor() for b in self.vertex_buffers]},
            "primitive": {"topology": self.topology, "front_face": self.front_face,
                          "cull_mode": self.cull_mode},
            "multisample": {"count": self.sample_count},
            "fragment": {"module": module, "entry_point": self.fragment_entry,
                         "constants": constants,
                         "targets": [{"format": f, **target} for f in self.targets]},
        }
        if self.depth_format is not None:
            descriptor["depth_stencil"] = {"format": self.depth_format,
                                           "depth_write_enabled": self.depth_write,
                                           "depth_compare": self.depth_compare}
        return descriptor


def render_pipeline(device, key: RenderKey):
    """The render pipeline ``key`` describes on ``device``, made on first use and cached: the
    same key gives the same object. Its layout comes from the shader's declarations."""
    cache_key = (id(device), key.shader, key)
    pipeline = _RENDER.get(cache_key)
    if pipeline is None:
        pipeline = _RENDER[cache_key] = device.create_render_pipeline(**key.descriptor(device))
    return pipeline
