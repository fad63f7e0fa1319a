"""A frame's repeated pass commands recorded through wgpu-native's C functions, not wgpu-py's.

A compiled compute run (frame_plan.py) makes the same three kinds of call every frame: set a
pipeline, set a bind group, dispatch. Through wgpu-py each goes through a Python method and its
error-capturing proxy, and ``set_bind_group`` also allocates a C array for its (empty) dynamic
offsets: about 2.4 us of Python for the three on a small CPU, against 1.1 us for the C calls
themselves, and a frame makes 80-130 of them. A render pass whose draws are replayed from
render bundles is begun, given its bundles and ended: wgpu-py builds its descriptor's C structs
anew from dicts each time, 30 us on the same CPU against 2 us for the three C calls with a
descriptor built once per render target (``RenderDescriptor``).

So a real wgpu-native pass gets these commands through the C functions directly. What this
gives up is nothing the engine relied on: wgpu-core reports an invalid command recorded in a
pass when the command encoder is finished, where wgpu-py raises it as a GPUValidationError
either way (the tests check both kinds of pass), and the objects a command names stay alive
because the compiled run, the render target or the bundle cache holds them.

This reads wgpu-py's private names (``wgpu.backends.wgpu_native._api``'s ``lib`` and ``ffi``,
the objects' ``_internal`` handles), which only this module does, for the version range
pyproject.toml pins. Where they are missing (another backend, a changed wgpu-py), or with
``EMBERFX_WGPU_WRAPPERS=1``, every command goes through wgpu-py's methods as before; ``enabled``
switches at run time (the frame bench measures both in one run).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

try:
    from wgpu.backends.wgpu_native import _api as _native
    _lib, _NULL = _native.lib, _native.ffi.NULL
    NATIVE_PASS = _native.GPUComputePassEncoder
    _SET_PIPELINE = _lib.wgpuComputePassEncoderSetPipeline
    _SET_BIND_GROUP = _lib.wgpuComputePassEncoderSetBindGroup
    _DISPATCH = _lib.wgpuComputePassEncoderDispatchWorkgroups
    _DISPATCH_INDIRECT = _lib.wgpuComputePassEncoderDispatchWorkgroupsIndirect
    NATIVE_ENCODER = _native.GPUCommandEncoder
    _BEGIN_RENDER = _lib.wgpuCommandEncoderBeginRenderPass
    _EXECUTE_BUNDLES = _lib.wgpuRenderPassEncoderExecuteBundles
    _END_RENDER = _lib.wgpuRenderPassEncoderEnd
    _RELEASE_RENDER = _lib.wgpuRenderPassEncoderRelease
    AVAILABLE = True
except (ImportError, AttributeError):   # another wgpu-py: its methods are used
    NATIVE_PASS = NATIVE_ENCODER = None
    AVAILABLE = False

# switched off for the process by EMBERFX_WGPU_WRAPPERS=1; at run time by assigning it
enabled = AVAILABLE and os.environ.get("EMBERFX_WGPU_WRAPPERS") != "1"


def native_target(compute) -> Any:
    """The C handle to record ``compute``'s commands through, or None when they go through
    its methods (native calls off, or not a wgpu-native compute pass: a test's recorder)."""
    if enabled and type(compute) is NATIVE_PASS:
        return compute._internal
    return None


# Each kind of command in two forms taking the same arguments after the target: the target is
# the pass object (``Wrapped``) or its C handle (``Native``).

class Wrapped:
    @staticmethod
    def set_pipeline(compute, pipeline) -> None:
        compute.set_pipeline(pipeline)

    @staticmethod
    def set_bind_group(compute, index: int, group) -> None:
        compute.set_bind_group(index, group)

    @staticmethod
    def dispatch(compute, x: int, y: int, z: int) -> None:
        compute.dispatch_workgroups(x, y, z)

    @staticmethod
    def dispatch_indirect(compute, buffer, offset: int) -> None:
        compute.dispatch_workgroups_indirect(buffer, offset)


class Native:
    @staticmethod
    def set_pipeline(handle, pipeline) -> None:
        _SET_PIPELINE(handle, pipeline._internal)

    @staticmethod
    def set_bind_group(handle, index: int, group) -> None:
        _SET_BIND_GROUP(handle, index, group._internal, 0, _NULL)

    @staticmethod
    def dispatch(handle, x: int, y: int, z: int) -> None:
        _DISPATCH(handle, x, y, z)

    @staticmethod
    def dispatch_indirect(handle, buffer, offset: int) -> None:
        _DISPATCH_INDIRECT(handle, buffer._internal, offset)


def resolved(kind: str, args: tuple) -> tuple[Callable, tuple]:
    """A fixed command as (C function, arguments with the objects' handles), for a handle
    target: the caller keeps the objects named in ``args`` alive as long as it replays it."""
    if kind == "set_pipeline":
        return _SET_PIPELINE, (args[0]._internal,)
    if kind == "set_bind_group":
        return _SET_BIND_GROUP, (args[0], args[1]._internal, 0, _NULL)
    if kind == "dispatch":
        return _DISPATCH, args
    if kind == "dispatch_indirect":
        return _DISPATCH_INDIRECT, (args[0]._internal, args[1])
    raise ValueError(f"native_calls.resolved: no command {kind!r}")


# ------------------------------------------------------------------------ render passes of bundles

def native_encoder(encoder) -> bool:
    """Whether render passes of ``encoder`` may be begun through the C functions."""
    return enabled and type(encoder) is NATIVE_ENCODER


class RenderDescriptor:
    """A WGPURenderPassDescriptor for one render target, built once: one colour attachment
    (cleared to ``clear_color`` or loaded, then stored, and resolved into ``resolve_view`` when
    given) and an optional depth attachment
    (cleared to 1.0 or loaded, then stored; or read-only). ``usable``: False for what it does
    not describe (a depth format with stencil), which then goes through wgpu-py. The views
    are the caller's to keep alive (a RenderTarget holds both and this descriptor)."""

    def __init__(self, label: str, color_view, clear_color, depth_view=None,
                 depth_read_only: bool = False, resolve_view=None):
        self.usable = depth_view is None or "stencil" not in depth_view.texture.format
        ffi = _native.ffi
        self._label = ffi.new("char[]", label.encode())
        color = self._color = ffi.new("WGPURenderPassColorAttachment[1]")
        color[0].view = color_view._internal
        color[0].depthSlice = _lib.WGPU_DEPTH_SLICE_UNDEFINED
        color[0].storeOp = _lib.WGPUStoreOp_Store
        if resolve_view is not None:   # a multisampled target resolved into it at the end
            color[0].resolveTarget = resolve_view._internal
        if clear_color is None:
            color[0].loadOp = _lib.WGPULoadOp_Load
        else:
            color[0].loadOp = _lib.WGPULoadOp_Clear
            value = color[0].clearValue
            value.r, value.g, value.b, value.a = (float(c) for c in clear_color)
        descriptor = self.pointer = ffi.new("WGPURenderPassDescriptor *")
        descriptor.label.data, descriptor.label.length = self._label, len(label.encode())
        descriptor.colorAttachmentCount, descriptor.colorAttachments = 1, color
        self._depth = _NULL
        if depth_view is not None:
            depth = self._depth = ffi.new("WGPURenderPassDepthStencilAttachment *")
            depth.view = depth_view._internal
            if depth_read_only:
                depth.depthReadOnly = True
            else:
                clearing = clear_color is not None
                depth.depthLoadOp = _lib.WGPULoadOp_Clear if clearing else _lib.WGPULoadOp_Load
                depth.depthStoreOp = _lib.WGPUStoreOp_Store
                depth.depthClearValue = 1.0 if clearing else 0.0
            descriptor.depthStencilAttachment = depth


class NativeRenderPass:
    """A render pass begun through the C functions that takes render bundles and ends: what
    frame_graph's encoding calls on a pass whose draws are all replayed from bundles."""

    __slots__ = ("handle",)

    def __init__(self, encoder, descriptor: RenderDescriptor):
        self.handle = _BEGIN_RENDER(encoder._internal, descriptor.pointer)

    def execute_bundles(self, bundles) -> None:
        handles = _native.ffi.new("WGPURenderBundle[]", [b._internal for b in bundles])
        _EXECUTE_BUNDLES(self.handle, len(bundles), handles)

    def end(self) -> None:
        handle, self.handle = self.handle, None
        _END_RENDER(handle)
        _RELEASE_RENDER(handle)

    def __del__(self) -> None:   # never ended (an exception while encoding): released all the same
        if self.handle is not None:
            _RELEASE_RENDER(self.handle)
            self.handle = None


# ------------------------------------------------------------------- a recorded frame, replayed

def descriptor_for(begin_render_pass_kwargs: dict) -> RenderDescriptor | None:
    """The descriptor of a render pass that wgpu-py's ``begin_render_pass(**kwargs)`` began,
    when the engine would begin that pass through the C functions: one colour attachment that
    resolves nothing, no timestamps; None otherwise (or with native calls off). For the frame
    bench, which records a frame's calls at wgpu-py's methods and replays them as the engine
    makes them."""
    kwargs = begin_render_pass_kwargs
    colors = kwargs.get("color_attachments", ())
    if (not enabled or len(colors) != 1 or colors[0].get("resolve_target") is not None
            or kwargs.get("timestamp_writes") is not None
            or kwargs.get("occlusion_query_set") is not None):
        return None
    color, depth = colors[0], kwargs.get("depth_stencil_attachment")
    descriptor = RenderDescriptor(
        kwargs.get("label", ""), color["view"],
        color.get("clear_value", (0.0, 0.0, 0.0, 0.0)) if color["load_op"] == "clear" else None,
        None if depth is None else depth["view"],
        bool(depth is not None and depth.get("depth_read_only")))
    return descriptor if descriptor.usable else None


def method_forms() -> dict[Callable, Callable]:
    """wgpu-py's pass methods that the engine's frame makes through the C functions, each with
    a function taking the same arguments that makes the command that way (the pass being a
    wgpu-native pass or a NativeRenderPass); {} with native calls off. For replaying a frame
    recorded at wgpu-py's methods."""
    if not enabled:
        return {}
    compute, render = _native.GPUComputePassEncoder, _native.GPURenderPassEncoder

    def on_either(method: Callable, name: str) -> Callable:
        def call(target, *args):
            if type(target) is NativeRenderPass:
                return getattr(target, name)(*args)
            return method(target, *args)
        return call

    return {
        compute.set_pipeline: lambda p, pipeline: Native.set_pipeline(p._internal, pipeline),
        compute.set_bind_group: lambda p, index, group, *_: Native.set_bind_group(
            p._internal, index, group),
        compute.dispatch_workgroups: lambda p, x, y=1, z=1: Native.dispatch(p._internal, x, y, z),
        compute.dispatch_workgroups_indirect: lambda p, buffer, offset: Native.dispatch_indirect(
            p._internal, buffer, offset),
        render.execute_bundles: on_either(render.execute_bundles, "execute_bundles"),
        render.end: on_either(render.end, "end")}
