"""What a scene's numbers become on the GPU, and the one check every number of a scene gets.

Every float a scene file or a Python scene gives reaches a shader as a 32-bit float, and many ints
as 32-bit unsigned words (budgets, counts, indices). The scene loader checks every number that
sits where a class declares a float (``bad_numbers``) before the class sees it, so nan, inf and
values that overflow or vanish in 32 bits are refused with the field's path, instead of becoming
NaN pictures or tracebacks at render time. Bounds that depend on what a field means (a birth
rate whose per-step budget is a u32, a zoom beyond 32-bit precision) are declared on the field
itself, with ``msgspec.Meta`` and these constants.
"""

from __future__ import annotations

import functools
import math
import types
import typing
from typing import Annotated

import numpy as np

from emberfx.model.scene_fields import is_record_class, type_hints

__all__ = ["F32_MAX", "F32_TINY", "U32_MAX", "number_problem", "bad_numbers"]

F32_MAX = float(np.finfo(np.float32).max)     # 3.4e38: larger floats become inf on the GPU
F32_TINY = float(np.finfo(np.float32).tiny)   # 1.2e-38: smaller non-zero floats flush towards 0
U32_MAX = 2**32 - 1                           # the largest count, budget or index a shader holds


def number_problem(value) -> str | None:
    """Why a number meant for a float field cannot go to the GPU, as "expected ..." (None: it
    can). Booleans and non-numbers are left to the field's own type check."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return "expected a finite number"
    magnitude = abs(value)
    if magnitude > F32_MAX:
        return f"expected a number within the 32-bit float range (|x| <= {F32_MAX:.4g})"
    if isinstance(value, float) and 0.0 < magnitude < F32_TINY:
        return (f"expected 0 or a magnitude of at least {F32_TINY:.4g} (32-bit floats round "
                f"smaller numbers towards 0)")
    return None


def bad_numbers(cls: type, table: dict, prefix: str):
    """(path, value, problem) for each number in ``table`` (a scene table for ``cls``) that sits
    where the class declares a float, at any depth (nested classes, arrays, unions). Numbers
    where only an int or no number fits are left to the type check, which says "expected int".
    Walked without recursion, so deep nesting cannot overflow the stack. Paths read like
    scene-file fields: ``emitter.bursts[0].repeat``."""
    # (the path of the item's container, its key or index, the item, its types); a path is
    # written out only for a container's items and a number found wrong, not for every number
    pending: list = [(None, prefix, table, _members(cls))]
    while pending:
        parent, key, item, hints = pending.pop()
        if not hints:
            continue
        if isinstance(item, dict):
            where = _path(parent, key)
            pending.extend((where, k, value, _inner(hints, k))
                           for k, value in reversed(item.items()))
        elif isinstance(item, (list, tuple)):
            where = _path(parent, key)
            pending.extend((where, index, value, _inner(hints, index))
                           for index, value in reversed(list(enumerate(item))))
        elif float in hints:
            problem = number_problem(item)
            if problem is not None:
                yield _path(parent, key), item, problem


def _path(parent: str | None, key) -> str:
    """A field's path as a scene file reads it: ``emitter.bursts[0].repeat``."""
    if parent is None:
        return str(key)
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


@functools.lru_cache(maxsize=4096)   # live edits check components every step: walk each type once
def _members(hint) -> tuple:
    """The plain types a value of this declared type may be: Annotated unwrapped, unions
    expanded, None dropped."""
    out: list = []
    pending = [hint]
    while pending:
        t = pending.pop()
        if typing.get_origin(t) is Annotated:
            pending.append(typing.get_args(t)[0])
        elif typing.get_origin(t) in (typing.Union, types.UnionType):
            pending.extend(typing.get_args(t))
        elif t is not None and t is not type(None):
            out.append(t)
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _inner(hints: tuple, step: str | int) -> tuple:
    """The types inside ``hints`` at a table key (str) or an array index (int)."""
    out: list = []
    for t in hints:
        origin, args = typing.get_origin(t), typing.get_args(t)
        if isinstance(step, str):
            if isinstance(t, type) and origin is None and is_record_class(t):
                out += _members(type_hints(t).get(step))
            elif origin is dict and len(args) == 2:
                out += _members(args[1])
        elif origin is list and args:
            out += _members(args[0])
        elif origin is tuple and args:
            if len(args) == 2 and args[1] is Ellipsis:
                out += _members(args[0])
            elif step < len(args):
                out += _members(args[step])
    return tuple(out)
