"""Fit a trace's pipelines to a browser's storage-buffer limit by reading some read-only
storage buffers as uniform buffers.

Browsers allow at most 10 storage buffers per shader stage (Chrome, 2026), where wgpu-native
allows the adapter's own limit (32 on lavapipe). A pipeline layout of the trace whose bind
groups declare more in one stage is fitted: read-only storage bindings of its shader become
``var<uniform>`` bindings, fixed structs first, then runtime-sized arrays as fixed arrays of as
many elements as every bind group of that layout binds. A binding qualifies when its type is
16-byte aligned in size (so WGSL's uniform layout gives it the same bytes), it fits a uniform
binding (64 KiB) and the shader never asks its length (``arrayLength``). The layout entry, the
shader's declaration and the usage of the buffers bound there change in the trace; what the
shader reads does not. A pipeline that still needs too many is refused (TraceError, one line).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from emberfx.core.layout import struct_dtype
from emberfx.web.trace import TraceError

UNIFORM_USAGE = 0x40         # GPUBufferUsage.UNIFORM
UNIFORM_BINDING_MAX = 65536  # WebGPU's default maxUniformBufferBindingSize
STAGES = {1: "vertex", 2: "fragment", 4: "compute"}
_READ_ONLY = re.compile(r"@group\((\d+)\)\s*@binding\((\d+)\)\s*var<storage,\s*read>\s*"
                        r"(\w+)\s*:\s*([^;]+);")
_ARRAY = re.compile(r"array<\s*(\w+)\s*>$")
_VECTOR_BYTES = {"vec4f": 16, "vec4u": 16, "vec4i": 16, "vec4<f32>": 16, "mat4x4f": 64}


@dataclass
class Candidate:
    binding: int
    name: str
    declaration: str
    element: str
    stride: int
    array: bool


def _storage_counts(descriptors: list[dict]) -> int:
    """The most storage buffers that one stage sees in these bind group layouts."""
    entries = [e for d in descriptors for e in d.get("entries", [])
               if "buffer" in e and e["buffer"].get("type", "uniform") != "uniform"]
    return max((sum(1 for e in entries if e.get("visibility", 0) & bit) for bit in STAGES),
               default=0)


def _stride(shader: str, type_name: str) -> int | None:
    """Bytes of ``type_name`` where WGSL's storage and uniform layouts agree on it, else None."""
    if type_name in _VECTOR_BYTES:
        return _VECTOR_BYTES[type_name]
    try:
        dtype = struct_dtype(shader, type_name)
    except Exception:   # not a struct this shader declares: not fitted
        return None
    return None if dtype.itemsize % 16 else dtype.itemsize


def candidates(shader: str, code: str, group: int) -> list[Candidate]:
    """The read-only storage bindings of ``group`` that may be read as uniforms: structs first."""
    found = []
    for m in _READ_ONLY.finditer(code):
        if int(m.group(1)) != group:
            continue
        name, type_text = m.group(3), m.group(4).strip()
        if re.search(rf"arrayLength\s*\(\s*&\s*{name}\b", code):
            continue
        array = _ARRAY.match(type_text)
        element = array.group(1) if array else type_text
        stride = _stride(shader, element)
        if stride is not None:
            found.append(Candidate(int(m.group(2)), name, m.group(0), element, stride,
                                   array is not None))
    return sorted(found, key=lambda c: c.array)


def fit_storage_buffers(recorded: dict, limit: int) -> list[str]:
    """Fit every pipeline layout of ``recorded``'s ops to ``limit`` storage buffers per stage
    (all its bind groups together; see the module's doc), in place; returns one note per
    binding read as a uniform."""
    ops = recorded["setup"] + [op for part in ("steps", "draws") for step in recorded[part]
                               for op in step]
    made = {op[0]: op for op in ops if op[0] > 0}
    notes: list[str] = []
    for op in ops:
        if op[2] != "createPipelineLayout":
            continue
        layouts = [made[ref["$"]] for ref in op[3][0]["bindGroupLayouts"]]
        descriptors = [layout[3][0] for layout in layouts]
        if _storage_counts(descriptors) <= limit:
            continue
        shader = op[3][0].get("label", "")
        modules = [m for m in ops if m[2] == "createShaderModule"
                   and m[3][0].get("label") == shader]
        if not modules:
            raise TraceError(f"{shader}: more than {limit} storage buffers in a stage, and no "
                             f"shader of that name to fit")
        for group, layout in enumerate(layouts):
            groups = [g for g in ops if g[2] == "createBindGroup"
                      and g[3][0]["layout"] == {"$": layout[0]}]
            for candidate in candidates(shader, modules[0][3][0]["code"], group):
                if _storage_counts(descriptors) <= limit:
                    break
                note = _read_as_uniform(candidate, group, modules, layout[3][0], groups, made,
                                        recorded["blobs"])
                if note:
                    notes.append(f"{shader}: {note}")
        if _storage_counts(descriptors) > limit:
            raise TraceError(f"{shader} binds {_storage_counts(descriptors)} storage buffers "
                             f"in one stage; browsers allow {limit}, and no more of its "
                             f"read-only ones can be read as uniforms")
    return notes


def _read_as_uniform(candidate: Candidate, group: int, modules: list, descriptor: dict,
                     groups: list, made: dict, blobs: list[str]) -> str | None:
    """Rewrite one binding as a uniform in the shader, its layout and its buffers; the note,
    or None where the bound buffers do not allow it."""
    bound = _bound(groups, candidate.binding, made, blobs)
    if bound is None:
        return None
    count = min(size for _, size in bound) // candidate.stride
    if count < 1 or (count if candidate.array else 1) * candidate.stride > UNIFORM_BINDING_MAX:
        return None
    new_type = f"array<{candidate.element}, {count}>" if candidate.array else candidate.element
    declaration = (f"@group({group}) @binding({candidate.binding}) var<uniform> "
                   f"{candidate.name}: {new_type};")
    for module in modules:
        module[3][0]["code"] = module[3][0]["code"].replace(candidate.declaration, declaration)
    for entry in descriptor["entries"]:
        if entry["binding"] == candidate.binding:
            entry["buffer"] = {**entry["buffer"], "type": "uniform"}
    for buffer_id, _ in bound:
        made[buffer_id][3][0]["usage"] |= UNIFORM_USAGE
    return (f"{candidate.name} read as a uniform buffer"
            + (f" ({count} elements)" if candidate.array else ""))


def _bound(groups: list, binding: int, made: dict,
           blobs: list[str]) -> list[tuple[int, int]] | None:
    """(buffer id, bytes bound) of ``binding`` in every bind group of ``groups``; None where
    one binds something else, at an offset a uniform may not take, or nothing at all."""
    out = []
    for group in groups:
        entry = next((e for e in group[3][0]["entries"] if e["binding"] == binding), None)
        resource = entry and entry.get("resource")
        if not isinstance(resource, dict) or "buffer" not in resource:
            return None
        buffer_id = resource["buffer"]["$"]
        creation = made.get(buffer_id)
        if creation is None or creation[2] not in ("createBuffer", "createBufferWithData"):
            return None
        size = resource.get("size")
        if size is None:
            made_with = creation[3][0]
            full = (made_with["size"] if "size" in made_with
                    else len(base64.b64decode(blobs[made_with["data"]["#"]])))
            size = full - resource.get("offset", 0)
        out.append((buffer_id, int(size)))
    return out or None
