"""The one recorder of what the engine asks of the GPU device: wgpu-py calls, in order.

``recording(methods)`` wraps the named public methods of wgpu-py's classes for the duration of
a ``with`` block and restores them after; each call made in the block is appended to the list
it yields as a ``Call`` (target, the original method, arguments, result). A call made from
inside another recorded call (wgpu-py's own helpers call its public methods) is left out: the
outer call says it all. Native calls (native_calls.py) are switched off meanwhile, so the
passes' commands go through the methods and are seen.

Two users: ``emberfx bench frame`` records the frame's encoder, pass and queue calls
(``FRAME_METHODS``) and replays them alone (bench/frame_calls.py); ``emberfx web`` records
everything (``DEVICE_METHODS``: creations, uploads, commands) and writes it as a trace a web
page replays with the browser's WebGPU (web/trace.py).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import wgpu.backends.wgpu_native as backend

from emberfx.core import native_calls

_PASS_COMMANDS = ("set_pipeline", "set_bind_group", "push_debug_group", "pop_debug_group",
                  "insert_debug_marker", "end")
_DRAWS = ("set_vertex_buffer", "set_index_buffer", "draw", "draw_indexed", "draw_indirect",
          "draw_indexed_indirect")

FRAME_METHODS: dict[type, tuple[str, ...]] = {
    backend.GPUDevice: ("create_command_encoder",),
    backend.GPUCommandEncoder: (
        "begin_compute_pass", "begin_render_pass", "clear_buffer", "copy_buffer_to_buffer",
        "copy_buffer_to_texture", "copy_texture_to_buffer", "copy_texture_to_texture",
        "finish", "push_debug_group", "pop_debug_group", "insert_debug_marker",
        "resolve_query_set", "write_timestamp"),
    backend.GPUComputePassEncoder: (
        *_PASS_COMMANDS, "dispatch_workgroups", "dispatch_workgroups_indirect"),
    backend.GPURenderPassEncoder: (
        *_PASS_COMMANDS, *_DRAWS, "execute_bundles", "set_viewport", "set_scissor_rect",
        "set_blend_constant", "set_stencil_reference"),
    backend.GPUQueue: ("submit", "write_buffer", "write_texture"),
}
"""what a frame calls, by class: the calls that record, upload and submit (mapping is left out:
a recorded frame never reads back)"""

DEVICE_METHODS: dict[type, tuple[str, ...]] = {
    **FRAME_METHODS,
    backend.GPUDevice: (
        "create_buffer", "create_buffer_with_data", "create_texture", "create_sampler",
        "create_bind_group_layout", "create_pipeline_layout", "create_bind_group",
        "create_shader_module", "create_compute_pipeline", "create_render_pipeline",
        "create_command_encoder", "create_render_bundle_encoder", "create_query_set"),
    backend.GPUTexture: ("create_view", "destroy"),
    backend.GPUBuffer: ("destroy",),
    backend.GPUComputePipeline: ("get_bind_group_layout",),
    backend.GPURenderPipeline: ("get_bind_group_layout",),
    backend.GPURenderBundleEncoder: (*_PASS_COMMANDS[:-1], *_DRAWS, "finish"),
}
"""everything the engine asks of the device: creations, uploads, commands, releases"""


@dataclass(frozen=True)
class Call:
    """One recorded call: ``method(target, *args, **kwargs)`` returned ``result``."""
    target: object
    method: Callable
    args: tuple
    kwargs: dict
    result: object

    @property
    def name(self) -> str:
        return self.method.__name__


def kept(value):
    """An argument as a replay needs it: written bytes copied (the caller reuses its array)."""
    if isinstance(value, (memoryview, bytearray)) or hasattr(value, "__array_interface__"):
        return memoryview(value).tobytes()
    return value


_LOCK = threading.Lock()   # one recording at a time: the methods are patched per class


@contextlib.contextmanager
def recording(methods: dict[type, tuple[str, ...]] = FRAME_METHODS) -> Iterator[list[Call]]:
    """Within the block, every call of ``methods`` is appended to the yielded list (see the
    module's doc); the classes are restored on leaving, also on an error."""
    calls: list[Call] = []
    originals = {(cls, name): cls.__dict__.get(name, getattr(cls, name))
                 for cls, names in methods.items() for name in names if hasattr(cls, name)}
    own = {(cls, name) for cls, name in originals if name in cls.__dict__}
    depth = threading.local()

    def recorder(method):
        def call(self, *args, **kwargs):
            outer = getattr(depth, "n", 0) == 0
            depth.n = getattr(depth, "n", 0) + 1
            try:
                result = method(self, *args, **kwargs)
            finally:
                depth.n -= 1
            if outer:
                calls.append(Call(self, method, tuple(kept(a) for a in args),
                                  {k: kept(v) for k, v in kwargs.items()}, result))
            return result
        call.__name__ = method.__name__
        return call

    with _LOCK:
        native = native_calls.enabled
        try:
            for (cls, name), method in originals.items():
                setattr(cls, name, recorder(method))
            native_calls.enabled = False   # the passes' commands go through the methods
            yield calls
        finally:
            native_calls.enabled = native
            for (cls, name), method in originals.items():
                if (cls, name) in own:
                    setattr(cls, name, method)
                else:   # inherited from a mixin: remove the class's own wrapper
                    delattr(cls, name)
