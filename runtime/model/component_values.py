"""What a component's values hold beyond each field's own type: the files it names, the
entities it names, its values as TOML builtins, and the check of a live edit's fields one by one
(``checked_alone``), which emberfx.model.scene's validated_copy tries before the whole check."""

from __future__ import annotations

import copy
import functools
import operator
import os
from collections.abc import Callable
from typing import Any

import msgspec

from emberfx.model.components import field_names
from emberfx.model.numbers import bad_numbers
from emberfx.model.scene_fields import check_decodable, type_hints


def path_values(component) -> list[tuple[str, str]]:
    """(field, path as written) for every file the component names in its ``PATH_FIELDS``
    (a field may hold one path or a list of them; unset ones are skipped)."""
    out = []
    is_path = getattr(component, "is_path", None)   # a field that holds a path only sometimes
    for name in getattr(type(component), "PATH_FIELDS", ()):
        value = getattr(component, name, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is not None and (is_path is None or is_path(name, item)):
                out.append((name, item))
    return out


def reference_value(component, field: str):
    """A ``REFERENCES`` field's value; a dotted field (``on_death.emitter``) reads a nested
    object, None where one on the way is unset."""
    for part in field.split("."):
        component = None if component is None else getattr(component, part)
    return component


def referenced_names(value) -> list[str]:
    """The entity names a ``REFERENCES`` field holds: one name (a trail's ``source``), a list
    (an emitter's ``affected_by``), or none (None)."""
    return [value] if isinstance(value, str) else list(value or ())


def checked_alone(cls: type, key: str, table: dict, since, fields: frozenset[str]):
    """``since`` (a valid component) with the ``fields`` of ``table`` (its edit, as builtins),
    when every one of them is a field no check of several fields reads (the class's
    ``CHECKED_ALONE``) and passes its own checks: the number check, its type, and what the
    class asks of it alone. None otherwise: the whole component is checked then, so an edit the
    whole check refuses reads as it always did."""
    alone = getattr(cls, "CHECKED_ALONE", None)
    if not fields or alone is None or not fields <= alone.keys():
        return None
    check_decodable(cls)
    if next(bad_numbers(cls, {name: table[name] for name in fields}, key), None) is not None:
        return None
    types = type_hints(cls)
    valid = copy.copy(since)   # the unchanged values are shared: neither is ever edited
    for name in fields:
        try:
            value = msgspec.convert(table[name], type=types[name], strict=True)
        except msgspec.ValidationError:
            return None
        check = alone[name]
        if check is not None and not check(value):
            return None
        object.__setattr__(valid, name, value)
    return valid


@functools.cache
def field_values(cls: type) -> Callable[[Any], tuple]:
    """A function giving a component's field values in field order, read in one C call (a live
    edit compares them with the last valid values' every step)."""
    names = field_names(cls)
    getter = operator.attrgetter(*names)
    return getter if len(names) > 1 else lambda obj: (getter(obj),)


def same_builtin(a, b) -> bool:
    """Whether two values as builtins (msgspec.to_builtins) are equal and of the same types
    throughout: ``True == 1`` and ``[0, 1] == [0.0, 1.0]`` in Python, but the checks tell a
    bool from an int, so an edit from one to the other is an edit."""
    if a is b:   # unchanged values are mostly the very same objects (live_edits.copy_fields)
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(x is y or same_builtin(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_builtin(a[k], b[k]) for k in a)
    return bool(a == b)


def plain_builtin(value):
    """Values a Python user naturally writes that TOML has no type for: numpy numbers and
    arrays, paths."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"a {type(value).__name__}")
