"""Recorded device calls (core/device_calls.py) as a trace a browser's WebGPU replays.

A trace is JSON: ``ops``, each ``[result, target, method, args]``: ``target.method(...args)``
in JavaScript's names (``create_buffer`` -> ``createBuffer``), whose result, when ``result`` is
not 0, is kept under that id. Ids are stable: 1 the device, 2 its queue, then positive ids in
the order objects are made; the encoders, passes and command buffers of one step get negative
ids counted from -1 again at each step, so steps that make the same calls write the same ops.
In ``args``, ``{"$": id}`` is an object and ``{"#": i}`` the bytes of blob ``i`` (each distinct
byte string once); descriptor keys are in WebGPU's camelCase, ``None`` left out.

The conversion follows wgpu-py's signatures: a method whose parameters are keyword-only takes
one descriptor in WebGPU (``create_*``, ``begin_*_pass``, ``finish``, ``create_view``); the
others take their parameters in order. A few differ and are written as WebGPU takes them:
``write_buffer``'s data slice, ``set_bind_group``'s dynamic offsets, and
``create_buffer_with_data``, which WebGPU lacks (the page makes it mapped at creation).
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import re
from collections.abc import Iterable

import wgpu.backends.wgpu_native as backend

from emberfx.core.device_calls import Call
from emberfx.core.errors import EmberError

DEVICE, QUEUE = 1, 2
TRANSIENT = (backend.GPUCommandEncoder, backend.GPUComputePassEncoder,
             backend.GPURenderPassEncoder, backend.GPUCommandBuffer)
"""objects that live within one step: their ids count from -1 again at each step"""
DEPTH_ONLY = ("depth16unorm", "depth24plus", "depth32float")
UNREPLAYABLE = ("create_query_set", "resolve_query_set", "write_timestamp")
"""calls a page cannot make: queries need an optional feature the portable device lacks"""
KEEP_KEYS = ("constants",)   # dicts whose keys are names from WGSL, kept as written
SUBGROUP_USE = re.compile(r"\bsubgroup[A-Z]\w*\s*\(|@builtin\(\s*subgroup_")
ENABLE_SUBGROUPS = "enable subgroups;\n"


def browser_wgsl(code: str) -> str:
    """WGSL as a browser takes it: a shader using subgroup built-ins declares
    ``enable subgroups;`` first (browsers require it; wgpu-native's WGSL front end, naga,
    refuses it, so the shipped files leave it out)."""
    if SUBGROUP_USE.search(code) and not code.lstrip().startswith("enable subgroups"):
        return ENABLE_SUBGROUPS + code
    return code


class TraceError(EmberError):
    """A recorded call the page cannot replay."""


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class Trace:
    """Converts recorded calls to ops, keeping the ids of every object seen (see the module's
    doc). ``add`` the calls of setup, then of each step after ``begin_step``."""

    def __init__(self, device) -> None:
        self.ids: dict[int, int] = {id(device): DEVICE, id(device.queue): QUEUE}
        self._alive: list = [device, device.queue]   # ids stay unique while the trace lives
        self._next = 3
        self._transient = 0
        self.blobs: list[str] = []
        self._blob_index: dict[bytes, int] = {}
        self.blob_bytes = 0

    def begin_step(self) -> None:
        self._transient = 0

    def id_of(self, obj, what: str) -> int:
        found = self.ids.get(id(obj))
        if found is None:
            raise TraceError(f"cannot replay {what}: it uses a {type(obj).__name__} made "
                             f"before the recording began")
        return found

    def _new_id(self, obj) -> int:
        if isinstance(obj, TRANSIENT):
            self._transient -= 1
            new = self._transient
        else:
            new, self._next = self._next, self._next + 1
        self.ids[id(obj)] = new
        self._alive.append(obj)
        return new

    def blob(self, data: bytes) -> dict:
        digest = hashlib.sha1(data).digest()
        index = self._blob_index.get(digest)
        if index is None:
            index = self._blob_index[digest] = len(self.blobs)
            self.blobs.append(base64.b64encode(data).decode("ascii"))
            self.blob_bytes += len(data)
        return {"#": index}

    def value(self, value, what: str, key: str = ""):
        if isinstance(value, bytes):
            return self.blob(value)
        if isinstance(value, dict):
            return {(k if key in KEEP_KEYS else camel(k)): self.value(v, what, k)
                    for k, v in value.items() if v is not None and k != "timestamp_writes"}
        if isinstance(value, (list, tuple)):
            return [self.value(v, what) for v in value]
        if isinstance(value, (bool, int, float, str)) or value is None:
            return value
        if isinstance(value, backend.GPUObjectBase):
            return {"$": self.id_of(value, what)}
        if hasattr(value, "__int__"):   # wgpu flags and enums
            return int(value)
        raise TraceError(f"cannot replay {what}: an argument of type {type(value).__name__}")

    def add(self, calls: Iterable[Call]) -> list[list]:
        """The ops of ``calls``, in order (the ids of what they make are kept)."""
        return [self._op(call) for call in calls]

    def _op(self, call: Call) -> list:
        name = call.name
        what = f"{type(call.target).__name__}.{name}"
        if name in UNREPLAYABLE:
            raise TraceError(f"cannot replay {what}: the page's device has no queries")
        target = self.id_of(call.target, what)
        args = self._arguments(call, what)
        result = self._new_id(call.result) if isinstance(call.result, backend.GPUObjectBase) \
            else 0
        method = "createBufferWithData" if name == "create_buffer_with_data" else camel(name)
        return [result, target, method, args]

    def _arguments(self, call: Call, what: str) -> list:
        signature = inspect.signature(call.method)
        bound = signature.bind(call.target, *call.args, **call.kwargs)
        params = list(signature.parameters.values())[1:]
        if params and all(p.kind is p.KEYWORD_ONLY for p in params):
            descriptor = {k: v for k, v in bound.arguments.items() if k != "self"}
            if call.name == "begin_render_pass":
                descriptor = _depth_only_ops(descriptor)
            if call.name == "create_shader_module":
                descriptor["code"] = browser_wgsl(descriptor["code"])
            return [self.value(descriptor, what)]
        bound.apply_defaults()
        values = list(bound.arguments.values())[1:]
        if call.name == "write_buffer":
            buffer, offset, data, data_offset, size = values
            data = memoryview(data).cast("B")
            end = len(data) if size is None else data_offset + size
            return [self.value(buffer, what), offset, self.blob(bytes(data[data_offset:end]))]
        if call.name == "set_bind_group":
            index, group, offsets = values[:3]
            return [index, self.value(group, what)] + ([list(offsets)] if offsets else [])
        while values and values[-1] is None:
            values.pop()
        return [self.value(v, what) for v in values]


def _depth_only_ops(descriptor: dict) -> dict:
    """A render pass's descriptor without stencil operations on a depth-only attachment
    (WebGPU refuses them there; wgpu-native ignores them)."""
    depth = descriptor.get("depth_stencil_attachment")
    if not depth:
        return descriptor
    view = depth.get("view")
    texture = getattr(view, "texture", None)
    if getattr(texture, "format", None) in DEPTH_ONLY:
        depth = {k: v for k, v in depth.items() if not k.startswith("stencil_")}
    return {**descriptor, "depth_stencil_attachment": depth}


def reads_of(trace: Trace, calls: Iterable[Call]) -> list[list[int]]:
    """The buffer ranges a blocking read (core/readback.py) copied out, as
    ``[buffer id, offset, size]``, in order: what ``engine.state`` read."""
    out = []
    for call in calls:
        if call.name == "copy_buffer_to_buffer":
            source, offset, _staging, _at, size = call.args[:5]
            out.append([trace.id_of(source, "a state read"), int(offset), int(size)])
    return out
