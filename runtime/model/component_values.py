"""What a component's values hold beyond each field's own type: the files it names, the
entities it names, its values as TOML builtins, and the check of a live edit's fields one by one
(``checked_alone``), which emberfx.model.scene's validated_copy tries before the whole check."""

from __future__ import annotations

import copy
import functools
import operator
import os
import typing
from collections.abc import Callable
from typing import Any

import msgspec

from emberfx.model.numbers import bad_numbers, number_problem
from emberfx.model.scene_fields import check_decodable, type_hints


def path_values(component) -> list[tuple[str, str]]:
    """(field, path as written) for every file the component names in its ``PATH_FIELDS``
    (a field may hold one path or a list of them; unset ones are skipped)."""
    out = []
    is_path = getattr(component, "is_path", None)   # a field that holds a path only sometimes
    for name in getattr(type(component), "PATH_FIELDS", ()):   # a dotted one: a nested field
        value = reference_value(component, name)
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


# What a plain number field's bounds may be (msgspec.Meta's): any other constraint, and any other
# declared type, takes the checks above.
_BOUNDS = {"ge": operator.ge, "gt": operator.gt, "le": operator.le, "lt": operator.lt}
_NOT_PLAIN = object()


def plain_edit(cls: type, value, since, differing: list[str]):
    """A live edit's valid values without converting them, for the edit a script makes every
    step: fields of the class's ``CHECKED_ALONE`` that hold a Python float or int (bool aside)
    where a float is declared, bounds included, or a list or tuple of them where a fixed tuple
    of floats is. ``since``: the last valid values; ``differing``: the fields of ``value``
    that may differ from them. Returns ``since`` itself when the values are equal to its own,
    else a copy with the fields' new values, converted as the loader converts them; None when
    any of them is not plain or is refused (the number check, the bounds, the class's check):
    the general checks then decide, with their messages. So it accepts only what they accept,
    and the same values come out."""
    alone = getattr(cls, "CHECKED_ALONE", None)
    if alone is None:
        return None
    changed = {}
    for name in differing:
        convert = _plain_converter(cls, name) if name in alone else None
        if convert is None:
            return None
        new = convert(getattr(value, name))
        if new is _NOT_PLAIN:
            return None
        old = getattr(since, name)
        if type(old) is type(new) and old == new:
            continue
        check = alone[name]
        if check is not None and not check(new):
            return None
        changed[name] = new
    if not changed:
        return since
    check_decodable(cls)
    valid = copy.copy(since)   # the unchanged values are shared: neither is ever edited
    for name, new in changed.items():
        object.__setattr__(valid, name, new)
    return valid


def _plain_number(value) -> bool:
    return (type(value) is float or type(value) is int) and number_problem(value) is None


@functools.cache
def _plain_converter(cls: type, name: str) -> Callable[[Any], Any] | None:
    """For a field declared as a float (with bounds at most) or as a fixed tuple of floats:
    the value as the loader would convert it, or _NOT_PLAIN; None for any other field."""
    hint = type_hints(cls)[name]
    if typing.get_origin(hint) is tuple:
        items = typing.get_args(hint)
        if not items or any(item is not float for item in items):
            return None
        count = len(items)

        def vector(value):
            # (a list set on a live component is its tracked subclass of list)
            if not isinstance(value, (tuple, list)) or len(value) != count:
                return _NOT_PLAIN
            if not all(_plain_number(item) for item in value):
                return _NOT_PLAIN
            if type(value) is tuple and all(type(item) is float for item in value):
                return value   # a tuple is never changed in place: shared as it is
            return tuple(float(item) for item in value)
        return vector
    bounds: list = []
    if typing.get_origin(hint) is typing.Annotated:
        hint, *metas = typing.get_args(hint)
        for meta in metas:
            if not isinstance(meta, msgspec.Meta):
                return None
            for attribute in ("multiple_of", "pattern", "min_length", "max_length", "tz"):
                if getattr(meta, attribute, None) is not None:
                    return None
            bounds += [(_BOUNDS[k], getattr(meta, k)) for k in _BOUNDS
                       if getattr(meta, k, None) is not None]
    if hint is not float:
        return None

    def number(value):
        if not _plain_number(value) or not all(holds(value, bound) for holds, bound in bounds):
            return _NOT_PLAIN
        return float(value)
    return number


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
