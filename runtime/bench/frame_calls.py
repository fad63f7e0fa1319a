"""The wgpu calls of one frame, recorded and replayed alone: the floor under a frame's CPU time.

``emberfx bench frame`` times the engine's frame: its own Python (scripts, component sync, the
systems' packing, the frame graph) and the calls it makes into wgpu-py (each a Python wrapper
round a wgpu-native call: validation, the driver's recording, ``finish``). To tell the two apart
the bench records the calls of one frame and replays them with nothing else around them. The
replay costs what the frame would cost if the engine's own Python took no time at all, with this
frame's passes, on this host; the difference is the engine's share.

Recording (core/device_calls.py) wraps the methods of wgpu-py's encoder, pass and queue classes
(their public names) for the duration of one call of ``fn`` and restores them after. Objects
made during the frame (encoders, passes, command buffers) are made again by the replay;
everything else (pipelines, bind groups, bundles, buffers, views) is the engine's own, so the
replay records the same commands on the same resources. A buffer write keeps a copy of the
bytes written.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

import wgpu.backends.wgpu_native as backend

from emberfx.core import native_calls
from emberfx.core.device_calls import FRAME_METHODS, Call, recording

RECORDED = FRAME_METHODS   # what a frame calls, by class (core/device_calls.py)
SUBMIT = backend.GPUQueue.submit
BEGIN_RENDER_PASS = backend.GPUCommandEncoder.begin_render_pass


def record_calls(fn: Callable[[], object]) -> list[Call]:
    """The wgpu calls ``fn()`` makes, in order (see the module's doc)."""
    with recording(FRAME_METHODS) as calls:
        fn()
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
