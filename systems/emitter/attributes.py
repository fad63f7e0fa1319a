"""Custom particle attributes: ``attributes = { temperature = "f32", tint = "vec4f" }``.

Each emitter with attributes has one more storage buffer, ``<entity>/attributes``, holding one
generated ``ParticleAttributes`` struct per slot (its layout read from the generated WGSL by
layout.struct_dtype, systems/emitter/modifiers.py). They are fields of ``ParticleState`` in the
modifiers, zero at birth, and arrays of ``Engine.state(name)`` under their names: the
AttributesFeature below adds the buffer, binds it to the passes the program's code runs in and
reads it back.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core.readback import read_array
from emberfx.systems.emitter.feature import EmitterFeature

if TYPE_CHECKING:
    from emberfx.systems.emitter.modifiers import Program
    from emberfx.systems.emitter.pool import Pool

ATTRIBUTE_TYPES = {"f32": "0.0", "i32": "0i", "u32": "0u", "vec2f": "vec2f()",
                   "vec3f": "vec3f()", "vec4f": "vec4f()"}
"""custom attribute types and their zero"""
ATTRIBUTE_BYTES = {"f32": 4, "i32": 4, "u32": 4, "vec2f": 8, "vec3f": 16, "vec4f": 16}
"""bytes each type takes in the struct (vec3f aligned on 16)"""
MAX_ATTRIBUTES = 64
MAX_ATTRIBUTE_BYTES = 1024
"""the most custom attributes of an emitter, and their bytes per particle: every pass of the
emitter copies them all into and out of each invocation, so thousands of them made a program
that took minutes to compile"""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# names an attribute may not take: ParticleState's own fields, what expressions see, Engine.state's
# keys, and WGSL's keywords and reserved words that a user may plausibly type
RESERVED_NAMES = frozenset({
    "position", "velocity", "age", "lifetime", "alive", "color", "t", "time", "p", "ctx", "rand",
    "alias", "break", "case", "const", "const_assert", "continue", "continuing", "default",
    "diagnostic", "discard", "else", "enable", "false", "fn", "for", "if", "let", "loop",
    "override", "requires", "return", "struct", "switch", "true", "var", "while", "bool", "f16",
    "f32", "i32", "u32", "vec2f", "vec3f", "vec4f", "array", "atomic", "ptr", "sampler",
    "texture", "mat", "self", "super", "this", "type", "unsafe", "use", "where", "yield"})


def attributes_problem(attributes: dict) -> str | None:
    """Why ``attributes`` cannot be custom attributes, as "attributes.name: why", or None."""
    if len(attributes) > MAX_ATTRIBUTES:
        return (f"attributes: expected at most {MAX_ATTRIBUTES} custom attributes, found "
                f"{len(attributes):,}")
    for name, kind in attributes.items():
        if not _IDENTIFIER.match(name) or name.startswith("__"):
            return f"attributes.{name}: expected a WGSL identifier as the attribute name"
        if name in RESERVED_NAMES:
            return (f"attributes.{name}: expected a name other than the built-in ones "
                    f"({', '.join(sorted(RESERVED_NAMES)[:10])}, ... WGSL keywords), "
                    f"found '{name}'")
        if kind not in ATTRIBUTE_TYPES:
            return (f"attributes.{name}: expected one of {', '.join(ATTRIBUTE_TYPES)}, "
                    f"found {kind!r}")
    total = sum(ATTRIBUTE_BYTES[kind] for kind in attributes.values())
    if total > MAX_ATTRIBUTE_BYTES:
        return (f"attributes: expected at most {MAX_ATTRIBUTE_BYTES:,} bytes of custom "
                f"attributes per particle (vec3f and vec4f take 16), found {total:,}")
    return None


def attribute_arrays(dtype: np.dtype, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Engine.state's arrays of the custom attributes: (capacity,) or (capacity, n) each."""
    return {name: np.ascontiguousarray(rows[name]) for name in dtype.names or ()}


class AttributesFeature(EmitterFeature):
    name = "attributes"

    def applies(self, component) -> bool:
        return bool(component.attributes)

    def slot_buffers(self, program: Program, capacity: int) -> dict[str, tuple[int, int]]:
        if program.dtype is None:
            return {}
        return {"attributes": (capacity * program.dtype.itemsize, wgpu.BufferUsage.STORAGE)}

    def program_bindings(self, program: Program, base: str, buffers: dict) -> dict:
        return {"attributes": buffers["attributes"]}

    def state(self, device, pool: Pool) -> dict[str, np.ndarray]:
        dtype = pool.program.dtype if pool.program is not None else None
        if dtype is None:
            return {}
        return attribute_arrays(dtype, read_array(device, pool.buffers["attributes"], dtype,
                                                  pool.component.capacity))
