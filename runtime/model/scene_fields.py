"""How scene tables meet the classes they become: field introspection, msgspec's validation
messages rewritten into the one-line "expected ..., found ..." form, and values shown as TOML
writes them. Used by the scene loader (emberfx.model.loader) and the scene summary
(scene_summary)."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import types
import typing
from typing import Annotated, Any, Literal

import msgspec

__all__ = ["explain", "join_path", "fields_with_defaults", "field_names", "type_hints",
           "is_record_class", "check_decodable", "show", "non_defaults", "members",
           "inner_types", "item_path", "unknown_keys", "suggest"]


_MISSING = object()

# ------------------------------------------------------------------------------ class introspection

@functools.cache
def fields_with_defaults(cls: type) -> tuple[tuple[str, Any], ...]:
    """(name, default or _MISSING) for each field set from a scene table: dataclass fields (init
    ones only) or msgspec.Struct fields, so a component may be either."""
    if dataclasses.is_dataclass(cls):
        out = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = _MISSING
            out.append((f.name, default))
        return tuple(out)
    out = []
    for info in msgspec.structs.fields(cls):
        if info.default is not msgspec.NODEFAULT:
            default = info.default
        elif info.default_factory is not msgspec.NODEFAULT:
            default = info.default_factory()
        else:
            default = _MISSING
        out.append((info.name, default))
    return tuple(out)


def field_names(cls: type) -> tuple[str, ...]:
    return tuple(name for name, _ in fields_with_defaults(cls))


@functools.cache
def type_hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "pattern", "min_length", "max_length", "tz")


@functools.cache
def check_decodable(cls: type) -> None:
    """msgspec (0.19 to 0.23 at least) corrupts memory -- a segfault or 'free(): invalid pointer',
    even for values that do not use the union -- when one union mixes a constrained member such as
    Annotated[float, Meta(ge=0)] with a fixed-length tuple. That is a bug in the component class,
    so refuse it with a message that says how to fix it instead of crashing the process."""
    hints = type_hints(cls)
    for name in field_names(cls):
        if _poisoned(hints.get(name)):
            raise TypeError(
                f"{cls.__module__}.{cls.__qualname__}.{name}: msgspec crashes on a union of a "
                f"constrained type (Annotated[..., Meta(ge=...)]) and a fixed-length tuple; "
                f"declare the scalar without Meta (e.g. float | tuple[NonNegative, NonNegative]) "
                f"and check it in __post_init__")


def _poisoned(t) -> bool:
    args = typing.get_args(t)
    if typing.get_origin(t) in (typing.Union, types.UnionType):
        if any(_is_fixed_tuple(a) for a in args) and any(_is_constrained(a) for a in args):
            return True
    return any(_poisoned(a) for a in args if not isinstance(a, msgspec.Meta))


def _is_fixed_tuple(t) -> bool:
    if typing.get_origin(t) is Annotated:
        t = typing.get_args(t)[0]
    args = typing.get_args(t)
    return typing.get_origin(t) is tuple and bool(args) and args[-1] is not Ellipsis


def _is_constrained(t) -> bool:
    return typing.get_origin(t) is Annotated and any(
        isinstance(m, msgspec.Meta) and any(getattr(m, c) is not None for c in _CONSTRAINTS)
        for m in typing.get_args(t)[1:])


# ------------------------------------------------------------------------ walking a table by type

@functools.lru_cache(maxsize=4096)   # live edits check components every step: walk each type once
def members(hint) -> tuple:
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
def inner_types(hints: tuple, step: str | int) -> tuple:
    """The types inside ``hints`` (``members``) at a table key (str) or an array index (int)."""
    out: list = []
    for t in hints:
        origin, args = typing.get_origin(t), typing.get_args(t)
        if isinstance(step, str):
            if isinstance(t, type) and origin is None and is_record_class(t):
                out += members(type_hints(t).get(step))
            elif origin is dict and len(args) == 2:
                out += members(args[1])
        elif origin is list and args:
            out += members(args[0])
        elif origin is tuple and args:
            if len(args) == 2 and args[1] is Ellipsis:
                out += members(args[0])
            elif step < len(args):
                out += members(args[step])
    return tuple(out)


def item_path(parent: str | None, key) -> str:
    """A field's path as a scene file reads it: ``emitter.bursts[0].repeat``."""
    if parent is None:
        return str(key)
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


@functools.lru_cache(maxsize=4096)
def _table_keys(hints: tuple) -> tuple[str, ...] | None:
    """The keys a table may hold where a value of types ``hints`` sits: the fields of the
    classes among them; None where any key goes (a ``dict`` member, or no class at all)."""
    if any(typing.get_origin(t) is dict or t is dict or t is Any for t in hints):
        return None
    classes = [t for t in hints if isinstance(t, type) and typing.get_origin(t) is None
               and is_record_class(t)]
    if not classes:
        return None
    return tuple(dict.fromkeys(name for cls in classes for name in field_names(cls)))


def walk_typed(cls: type, table: dict, prefix: str):
    """(path of the container, key or index, item, the types declared there) for ``table`` (a
    scene table for ``cls``) and every item in it at any depth, each container before its items,
    in file order. An item where no declared type fits is not entered (the type check names
    it). Walked without recursion, so deep nesting cannot overflow the stack; paths read like
    scene-file fields: ``emitter.bursts[0].repeat``."""
    pending: list = [(None, prefix, table, members(cls))]
    while pending:
        parent, key, item, hints = pending.pop()
        if not hints:
            continue
        yield parent, key, item, hints
        if isinstance(item, dict):
            where = item_path(parent, key)
            pending.extend((where, k, value, inner_types(hints, k))
                           for k, value in reversed(item.items()))
        elif isinstance(item, (list, tuple)):
            where = item_path(parent, key)
            pending.extend((where, index, value, inner_types(hints, index))
                           for index, value in reversed(list(enumerate(item))))


def unknown_keys(cls: type, table: dict, prefix: str):
    """(path, key, allowed keys) for each key of ``table`` (a scene table for ``cls``), and of
    every table nested in it at any depth (a component's ``shape``, its ``bursts[0]``, a colour
    stop), that no field of the class declared there has. msgspec drops such keys without a
    word for dataclasses, so a typo would silently become the default. Paths read like
    scene-file fields: ``emitter.on_death.cuont``."""
    for parent, key, item, hints in walk_typed(cls, table, prefix):
        allowed = _table_keys(hints) if isinstance(item, dict) else None
        if allowed is not None:
            where = item_path(parent, key)
            yield from ((item_path(where, name), name, allowed)
                        for name in item if name not in allowed)


# ------------------------------------------------------------------------ rewriting msgspec errors

_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def explain(text: str, raw: dict, cls: type) -> tuple[str, str]:
    """msgspec's 'Expected `int` >= 1 - at `$.capacity`' -> ('capacity', 'expected int >= 1,
    found 0'), looking the found value up in the raw table along the path."""
    match = _AT.match(text.strip())
    assert match is not None   # every part of the pattern is optional or matches anything
    message, where = match["message"], match["path"] or ""
    found = _lookup(raw, where)
    if missing := re.fullmatch(r"Object missing required field `(.+)`", message):
        return join_path(where, missing[1]), "expected a value (required), found nothing"
    if enum := re.fullmatch(r"Invalid enum value (.+)", message):
        allowed = _literal_values(cls, where)
        expected = ", ".join(show(v) for v in allowed) if allowed else "the allowed values"
        return join_path(where), f"expected one of {expected}, found {enum[1]}"
    if message.startswith("Expected "):
        expected = re.sub(r", got .*$", "", message[len("Expected "):])
        expected = expected.replace("`object`", "table").replace("`", "")
        bound = re.search(r"[<>]=? (\S+)$", expected)
        reasons = _descriptions(_field_hint(cls, where))
        if reasons and bound and float(bound[1]) != 0.0:   # a bound beyond the sign: say why
            expected += f" ({'; '.join(reasons)})"
        suffix = f", found {show(found)}" if found is not _MISSING else ""
        return join_path(where), f"expected {expected}{suffix}"
    # A ValueError from the class's __post_init__; by convention "field: expected ..., found ...".
    head, sep, rest = message.partition(": ")
    if sep and re.fullmatch(r"[A-Za-z_][\w.\[\]]*", head):
        return join_path(where, head), rest
    return join_path(where), message


def _lookup(raw, where: str):
    value = raw
    for step in _STEP.finditer(where):
        key, index = step[1], step[2]
        try:
            value = value[key] if key is not None else value[int(index)]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return value


def _literal_values(cls: type, where: str) -> list:
    first = _STEP.match(where)
    hint = type_hints(cls).get(first[1]) if first and first[1] else None
    found: list = []

    def collect(t):
        if typing.get_origin(t) is Literal:
            found.extend(typing.get_args(t))
        else:
            for arg in typing.get_args(t):
                collect(arg)

    collect(hint)
    return found


def _field_hint(cls: type, where: str):
    """The declared type of the field at a msgspec path ('shape.radius', 'bursts[0].count')."""
    hint: Any = cls
    for step in _STEP.finditer(where):
        if step[1] is None:
            continue   # an index: its item type is inside the field's own type
        owner = _owning_class(hint)
        if owner is None:
            return None
        hint = type_hints(owner).get(step[1])
    return hint


def _owning_class(hint):
    pending = [hint]
    while pending:
        t = pending.pop(0)
        if isinstance(t, type) and is_record_class(t):
            return t
        pending.extend(a for a in typing.get_args(t) if not isinstance(a, msgspec.Meta))
    return None


def _descriptions(hint) -> list[str]:
    """The ``msgspec.Meta(description=...)`` texts inside a field's type (not inside the
    classes it holds): why its bounds are what they are."""
    found: list[str] = []
    pending = [hint]
    while pending:
        t = pending.pop()
        for arg in typing.get_args(t):
            if isinstance(arg, msgspec.Meta):
                if arg.description and arg.description not in found:
                    found.append(arg.description)
            elif not isinstance(arg, type) or not is_record_class(arg):
                pending.append(arg)
    return found


def is_record_class(t: type) -> bool:
    """A dataclass or msgspec.Struct: a class whose fields a scene table sets."""
    return dataclasses.is_dataclass(t) or issubclass(t, msgspec.Struct)


def join_path(*parts: str) -> str:
    return ".".join(p.strip(".") for p in parts if p and p.strip(".")).replace(".[", "[")


# --------------------------------------------------------------------------------- showing values

SHOW_DEPTH = 4   # arrays and tables nested deeper are shown as [...] and {...}


def show(value, limit: int = 80) -> str:
    """A value as TOML writes it, for one-line messages and summaries: arrays and tables are cut
    after a whole item ("... 3 more"), an object (a nested component class) shows the fields that
    differ from its defaults, and deep nesting stays shallow."""
    return _show(value, max(limit, 16), 0)


def _show(value, limit: int, depth: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= limit else text[:limit - 4] + "...'"
    if isinstance(value, int) and value.bit_length() > 64:   # str() refuses > 4300 digits
        return f"{'-' if value < 0 else ''}~10^{int(value.bit_length() * math.log10(2))}"
    if is_record_class(type(value)):
        value = dict(non_defaults(value))
    if isinstance(value, dict):
        items, open_, close = [f"{k} = " for k in value], "{", "}"
        values = list(value.values())
    elif isinstance(value, (list, tuple)):
        items, open_, close = [""] * len(value), "[", "]"
        values = list(value)
    else:
        text = str(value)
        return text if len(text) <= limit else text[:limit - 3] + "..."
    if depth >= SHOW_DEPTH and values:
        return f"{open_}...{close}"
    parts: list[str] = []
    used = 2
    for index, (key, item) in enumerate(zip(items, values)):
        rest = len(values) - index
        text = key + _show(item, max(limit - used, 16), depth + 1)
        if parts and used + len(text) + 2 > limit - (12 if rest > 1 else 0):
            parts.append(f"... {rest} more")
            break
        parts.append(text)
        used += len(text) + 2
    return open_ + ", ".join(parts) + close


def non_defaults(obj) -> list[tuple[str, Any]]:
    """(field, value) for each field of a component (or settings, camera) that differs from its
    default, in declaration order."""
    return [(name, getattr(obj, name)) for name, default in fields_with_defaults(obj.__class__)
            if getattr(obj, name) != default]


def suggest(key: str, allowed, what: str = "keys") -> str:
    """The end of an "unknown ..." message: the closest of ``allowed`` to ``key``, else all of
    them (or that there are no ``what``)."""
    close = difflib.get_close_matches(str(key), [str(a) for a in allowed], n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    return f"expected one of: {', '.join(allowed)}" if allowed else f"there are no {what}"
