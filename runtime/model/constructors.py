"""Components built in Python (``Emitter(rate=float("nan"))``, ``Shape(raduis=2.0)``) fail as a
scene file's table would: a one-line SceneError with the field's path, what was expected and what
was found, instead of the bare ValueError of the class's ``__post_init__`` or the TypeError of a
misspelt keyword.

``checked_constructors`` wraps the ``__init__`` of a registered component class and of the
classes nested in its fields (the registry calls it). msgspec, which builds the loader's
components, never calls ``__init__``: the loader keeps reading the ``__post_init__``'s
ValueError as before. A TypeError that is not about the call's arguments (a bug) keeps its
traceback.
"""

from __future__ import annotations

import functools
import re
import typing

from emberfx.core.errors import SceneError
from emberfx.model.scene_fields import field_names, is_record_class, members, suggest, type_hints

_UNEXPECTED = re.compile(r"__init__\(\) got an unexpected keyword argument '(\w+)'")
_MISSING = re.compile(r"__init__\(\) missing \d+ required (?:positional|keyword-only) "
                      r"arguments?: (.+)")
_POSITIONAL = re.compile(r"__init__\(\) takes .* positional arguments? but (\d+) "
                         r"(?:was|were) given")
_FIELD = re.compile(r"[A-Za-z_][\w.\[\]]*")


def checked_constructors(cls: type, key: str) -> None:
    """Wrap the ``__init__`` of ``cls`` (the component of ``[entity.<key>]``) and of every
    record class nested in its fields, once each."""
    pending: list[tuple[type, str | None]] = [(cls, key)]
    seen: set[type] = set()
    while pending:
        current, prefix = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        _wrap(current, prefix)
        hints = type_hints(current)
        for name in field_names(current):
            for nested in _record_classes(hints.get(name)):
                pending.append((nested, None))


def _record_classes(hint) -> list[type]:
    found, pending = [], list(members(hint))
    while pending:
        t = pending.pop()
        if isinstance(t, type) and typing.get_origin(t) is None and is_record_class(t):
            found.append(t)
        else:
            pending += [m for arg in typing.get_args(t) if arg is not Ellipsis
                        for m in members(arg)]
    return found


def _wrap(cls: type, key: str | None) -> None:
    original = vars(cls)["__init__"]   # the dataclass's own
    if getattr(original, "__wrapped_component__", None) is cls:
        return

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        try:
            original(self, *args, **kwargs)
        except (ValueError, TypeError) as exc:
            error = construction_error(cls, key, exc)
            if error is None:
                raise
            raise error from None

    __init__.__wrapped_component__ = cls   # type: ignore[attr-defined]
    cls.__init__ = __init__   # type: ignore[misc]


def construction_error(cls: type, key: str | None, exc: Exception) -> SceneError | None:
    """The SceneError for a failed ``cls(...)``; None for a TypeError that is not about the
    call's arguments."""
    label = f"{cls.__name__}(...)"
    prefix = f"{key}." if key else ""
    text = str(exc).replace("\n", " ")
    if isinstance(exc, TypeError):
        if unexpected := _UNEXPECTED.search(text):
            name = unexpected[1]
            return SceneError(label, f"unknown key '{name}', " + suggest(name, field_names(cls)),
                              field=f"{prefix}{name}")
        if missing := _MISSING.search(text):
            names = re.findall(r"'(\w+)'", missing[1])
            return SceneError(label, "expected a value (required), found nothing",
                              field=f"{prefix}{names[0] if names else ''}".rstrip("."))
        if positional := _POSITIONAL.search(text):
            return SceneError(label, f"expected at most {len(field_names(cls))} values in field "
                                     f"order (or fields by keyword), found "
                                     f"{int(positional[1]) - 1}", field=key)
        return None
    # by convention a __post_init__'s ValueError reads "field: expected ..., found ..."
    head, sep, rest = text.partition(": ")
    if sep and _FIELD.fullmatch(head):
        return SceneError(label, rest, field=f"{prefix}{head}")
    return SceneError(label, text, field=key)
