"""Struct layouts derived from WGSL, so Python never mirrors a struct by hand.

``struct_dtype("emitter/particle.wgsl", "Particle")`` parses the struct declaration in that shader
file (includes expanded) and returns a numpy structured dtype with the offsets, alignment and size
WGSL's host-shareable layout rules give (vec3 aligned to 16 bytes, struct size rounded to its
alignment). Uniform parameters are packed through the same dtype.
"""

from __future__ import annotations

import functools
import re
import struct
from typing import Any

import numpy as np

from emberfx.core import wgsl

_STRUCT = re.compile(r"struct\s+(\w+)\s*\{(.*?)\}", re.S)
_MEMBER = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*$")
_SCALARS = {"f32": np.float32, "u32": np.uint32, "i32": np.int32}
_SHORT = {"f": "f32", "u": "u32", "i": "i32"}


class Layout:
    """Alignment, size and numpy format of one WGSL type."""

    def __init__(self, align: int, size: int, fmt):
        self.align, self.size, self.fmt = align, size, fmt


def _strip_comments(code: str) -> str:
    return re.sub(r"//[^\n]*", "", code)


def _split_members(body: str) -> list[str]:
    """Split a struct body on commas that are not inside <...>."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in body:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _round_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


def _type_layout(t: str, structs: dict[str, str], file: str) -> Layout:
    t = t.replace(" ", "")
    if t in _SCALARS:
        return Layout(4, 4, _SCALARS[t])
    m = re.fullmatch(r"atomic<(u32|i32)>", t)
    if m:
        return Layout(4, 4, _SCALARS[m.group(1)])
    m = re.fullmatch(r"vec([234])(?:<(f32|u32|i32)>|([fui]))", t)
    if m:
        n = int(m.group(1))
        scalar = _SCALARS[m.group(2) or _SHORT[m.group(3)]]
        align = {2: 8, 3: 16, 4: 16}[n]
        return Layout(align, 4 * n, (scalar, (n,)))
    m = re.fullmatch(r"mat([234])x([234])(?:<f32>|f)", t)
    if m:
        cols, rows = int(m.group(1)), int(m.group(2))
        col_align = {2: 8, 3: 16, 4: 16}[rows]
        if rows == 3:
            raise ValueError(f"shaders/{file}: mat{cols}x3 has padded columns; use mat{cols}x4f")
        return Layout(col_align, col_align * cols, (np.float32, (cols, rows)))
    m = re.fullmatch(r"array<(.+),(\d+)u?>", t)
    if m:
        inner = _type_layout(m.group(1), structs, file)
        stride = _round_up(inner.size, inner.align)
        if stride != inner.size:
            raise ValueError(f"shaders/{file}: array<{m.group(1)}> has padding between elements; "
                             "use a 16-byte element type")
        return Layout(inner.align, stride * int(m.group(2)), (inner.fmt, (int(m.group(2)),)))
    if t in structs:
        dtype = _struct_from_body(t, structs, file)
        assert dtype.metadata is not None   # struct dtypes carry their WGSL alignment
        return Layout(dtype.metadata["align"], dtype.itemsize, dtype)
    raise ValueError(f"shaders/{file}: struct member type {t!r} is not supported by "
                     "emberfx.core.layout")


def _struct_from_body(name: str, structs: dict[str, str], file: str) -> np.dtype:
    names, formats, offsets = [], [], []
    offset, align = 0, 1
    for member in _split_members(structs[name]):
        m = _MEMBER.match(member)
        if not m or "@" in member:
            raise ValueError(f"shaders/{file}: cannot read struct {name} member {member!r}")
        layout = _type_layout(m.group(2), structs, file)
        offset = _round_up(offset, layout.align)
        names.append(m.group(1))
        formats.append(layout.fmt)
        offsets.append(offset)
        offset += layout.size
        align = max(align, layout.align)
    size = _round_up(offset, align)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size},
                    metadata={"align": align, "wgsl": name})


@functools.cache
def struct_dtype(shader: str, name: str) -> np.dtype:
    """The numpy dtype of WGSL struct ``name`` as declared in shaders/``shader``."""
    code = _strip_comments(wgsl.load(shader).code)
    structs = {m.group(1): m.group(2) for m in _STRUCT.finditer(code)}
    if name not in structs:
        raise ValueError(f"shaders/{shader} declares no struct {name}")
    return _struct_from_body(name, structs, shader)



def record_view(records: np.ndarray, k: int) -> np.ndarray:
    """Record ``k`` of a structured array as a 0-d array sharing its memory: fields assign
    through it one by one (``view["h"] = dt``) or all at once (``assign_fields``)."""
    return records[k:k + 1].reshape(())


def assign_fields(record: np.ndarray, values: dict) -> None:
    """Set the named fields of a 0-d structured record in one numpy assignment, the others
    kept. Field by field, each assignment costs about a microsecond of numpy's indexing; a
    record of 30 fields packed every step is then mostly that."""
    names = record.dtype.names or ()
    record[()] = tuple(values.get(name, old) for name, old in zip(names, record.item()))


_STRUCT_CODES = {"<u4": "I", "<i4": "i", "<f4": "f"}


class FieldPacker:
    """Writes the named fields of records of a WGSL struct's dtype through struct.pack_into,
    one call per run of adjacent fields: a record packed every step then costs a few
    microseconds rather than numpy's microsecond per field. The bytes are numpy's: a float
    past float32's range (struct refuses it, numpy makes it infinite) or an integer out of
    range falls back to ``assign_fields``."""

    def __init__(self, dtype: np.dtype, names: tuple[str, ...] | list[str]):
        fields: dict = dict(dtype.fields or {})
        self.runs: list[tuple[int, struct.Struct, list[tuple[str, int]]]] = []
        end = None
        codes: list[str] = []
        for offset, name in sorted((fields[name][1], name) for name in names):
            kind = fields[name][0]
            count = int(np.prod(kind.shape)) if kind.shape else 1
            if offset != end:
                if codes:
                    self.runs[-1] = (self.runs[-1][0], struct.Struct("<" + "".join(codes)),
                                     self.runs[-1][2])
                self.runs.append((offset, struct.Struct("<"), []))
                codes = []
            codes.append(f"{count}{_STRUCT_CODES[kind.base.str]}")
            self.runs[-1][2].append((name, count))
            end = offset + kind.itemsize
        if codes:
            self.runs[-1] = (self.runs[-1][0], struct.Struct("<" + "".join(codes)),
                             self.runs[-1][2])

    def pack(self, record: np.ndarray, values: dict) -> None:
        """Set ``values`` (every named field) in the 0-d record ``record``."""
        data: Any = record.reshape(1).view(np.uint8)   # a writable buffer of its bytes
        try:
            for offset, packer, names in self.runs:
                flat: list = []
                for name, count in names:
                    if count == 1:
                        flat.append(values[name])
                    else:
                        flat.extend(values[name])
                packer.pack_into(data, offset, *flat)
        except (OverflowError, struct.error):
            assign_fields(record, values)
