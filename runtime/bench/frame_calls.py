"""The wgpu calls of one frame, recorded and replayed alone: the floor under a frame's CPU time.

``emberfx bench frame`` times the engine's frame: its own Python (scripts, component sync, the
systems' packing, the frame graph) and the calls it makes into wgpu-py (each a Python wrapper
round a wgpu-native call: validation, the driver's recording, ``finish``). To tell the two apart
the bench records the calls of one frame and replays them with nothing else around them. The
replay costs what the frame would cost if the engine's own Python took no time at all, with this
frame's passes, on this host; the difference is the engine's share.

Recording wraps the methods of wgpu-py's encoder, pass and queue classes (their public names)
for the duration of one call of ``fn`` and restores them after. Objects made during the frame
(encoders, passes, command buffers) are made again by the replay; everything else (pipelines,
bind groups, bundles, buffers, views) is the engine's own, so the replay records the same
commands on the same resources. A buffer write keeps a copy of the bytes written.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import wgpu.backends.wgpu_native as backend

from emberfx.core import native_calls

# what a frame calls, by class: the calls that record, upload and submit (mapping is left out:
# a recorded frame never reads back)
RECORDED = {
    backend.GPUDevice: ("create_command_encoder",),
    backend.GPUCommandEncoder: (
        "begin_compute_pass", "begin_render_pass", "clear_buffer", "copy_buffer_to_buffer",
        "copy_buffer_to_texture", "copy_texture_to_buffer", "copy_texture_to_texture",
        "finish", "push_debug_group", "pop_debug_group", "insert_debug_marker",
        "resolve_query_set", "write_timestamp"),
    backend.GPUComputePassEncoder: (
        "set_pipeline", "set_bind_group", "dispatch_workgroups", "dispatch_workgroups_indirect",
        "push_debug_group", "pop_debug_group", "insert_debug_marker", "end"),
    backend.GPURenderPassEncoder: (
        "set_pipeline", "set_bind_group", "set_vertex_buffer", "set_index_buffer", "draw",
        "draw_indexed", "draw_indirect", "draw_indexed_indirect", "execute_bundles",
        "set_viewport", "set_scissor_rect", "set_blend_constant", "set_stencil_reference",
        "push_debug_group", "pop_debug_group", "insert_debug_marker", "end"),
    backend.GPUQueue: ("submit", "write_buffer", "write_texture"),
}
SUBMIT = backend.GPUQueue.submit
BEGIN_RENDER_PASS = backend.GPUCommandEncoder.begin_render_pass


@dataclass(frozen=True)
class Call:
    """One recorded call: ``method(target, *args, **kwargs)`` returned ``result``."""
    target: object
    method: Callable
    args: tuple
    kwargs: dict
    result: object


def _kept(value):
    """An argument as the replay needs it: written bytes copied (the caller reuses its array)."""
    if isinstance(value, (memoryview, bytearray)) or hasattr(value, "__array_interface__"):
        return memoryview(value).tobytes()
    return value


def record_calls(fn: Callable[[], object]) -> list[Call]:
    """The wgpu calls ``fn()`` makes, in order (see the module's doc)."""
    calls: list[Call] = []
    originals = {(cls, name): getattr(cls, name) for cls, names in RECORDED.items()
                 for name in names if hasattr(cls, name)}

    def recording(method):
        def call(self, *args, **kwargs):
            result = method(self, *args, **kwargs)
            calls.append(Call(self, method, tuple(_kept(a) for a in args), kwargs, result))
            return result
        return call

    native = native_calls.enabled
    try:
        for (cls, name), method in originals.items():
            setattr(cls, name, recording(method))
        native_calls.enabled = False   # the compute runs' commands through the methods above
        fn()
    finally:
        native_calls.enabled = native
        for (cls, name), method in originals.items():
            setattr(cls, name, method)
    return calls


def _mapped(value, made: dict):
    if isinstance(value, (list, tuple)):
        return type(value)(_mapped(v, made) for v in value)
    return made.get(id(value), value)


def _native_render_passes(calls: list[Call]) -> dict[int, native_calls.RenderDescriptor]:
    """id of each recorded begin_render_pass call that the engine makes through the C functions
    -> its descriptor (native_calls.py), made before a replay is timed, as the engine makes it
    once per render target."""
    found: dict[int, native_calls.RenderDescriptor] = {}
    for call in calls:
        if call.method is BEGIN_RENDER_PASS:
            descriptor = native_calls.descriptor_for(call.kwargs)
            if descriptor is not None:
                found[id(call)] = descriptor
    return found


def _made(call: Call, target, args, native: dict, passes: dict):
    """The replay of one call: through the C functions where the engine makes it that way."""
    descriptor = passes.get(id(call))
    if descriptor is not None:
        return native_calls.NativeRenderPass(target, descriptor)
    return native.get(call.method, call.method)(target, *args, **call.kwargs)


def replay(calls: list[Call]) -> float:
    """Make ``calls`` again (objects made during the recording are made anew); seconds taken,
    ``queue.submit`` left out as the bench leaves it out of the engine's frame. The passes'
    commands that the engine makes through the C functions are replayed that way
    (native_calls.py)."""
    made: dict[int, object] = {}   # id of a recorded result -> the replay's
    native, passes = native_calls.method_forms(), _native_render_passes(calls)
    submits = 0.0
    start = time.perf_counter()
    for call in calls:
        target, args = made.get(id(call.target), call.target), _mapped(call.args, made)
        if call.method is SUBMIT:
            t0 = time.perf_counter()
            call.method(target, *args, **call.kwargs)
            submits += time.perf_counter() - t0
            continue
        result = _made(call, target, args, native, passes)
        if call.result is not None:
            made[id(call.result)] = result
    return time.perf_counter() - start - submits


def replay_by_kind(calls: list[Call]) -> dict[str, float]:
    """``replay``, timing each call: seconds by method name (``finish``: 0.0003, ...), the
    submit included. Which calls a frame's floor is made of: some cost far more than others
    (wgpu-native does its recording work in ``finish``). Timing every call adds a little to
    each, so the sum runs slightly over ``replay``'s figure."""
    made: dict[int, object] = {}
    seconds: dict[str, float] = {}
    native, passes = native_calls.method_forms(), _native_render_passes(calls)
    for call in calls:
        target, args = made.get(id(call.target), call.target), _mapped(call.args, made)
        t0 = time.perf_counter()
        result = _made(call, target, args, native, passes)
        took = time.perf_counter() - t0
        name = call.method.__name__
        seconds[name] = seconds.get(name, 0.0) + took
        if call.result is not None:
            made[id(call.result)] = result
    return seconds


def call_counts(calls: list[Call]) -> Counter:
    """How many calls of each method (``set_bind_group``: 41, ...)."""
    return Counter(call.method.__name__ for call in calls)
