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

import math

import numpy as np

from emberfx.model.scene_fields import item_path, walk_typed

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
    Paths read like scene-file fields: ``emitter.bursts[0].repeat``."""
    for parent, key, item, hints in walk_typed(cls, table, prefix):
        if float in hints and not isinstance(item, (dict, list, tuple)):
            problem = number_problem(item)
            if problem is not None:
                yield item_path(parent, key), item, problem
