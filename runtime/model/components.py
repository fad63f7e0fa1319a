"""What a component field's change costs, declared once per field, and the tracking that notices
the change.

Each field of a component (and of the dataclasses nested in it: an emitter's ``shape``, its
``bursts``) says what an edit of it makes the Engine do:

- ``live(...)``: nothing more; the system writes the new value into a uniform before the next
  step (an emitter's ``rate``);
- ``passes(...)``: the frame graph is rebuilt, since the passes depend on it (a cloth's
  ``wireframe`` adds one);
- ``rebuild(...)``: the entity's GPU resources are made again (an emitter's ``capacity``).

They wrap ``dataclasses.field`` (same ``default`` / ``default_factory``) and store the class in
the field's metadata; ``change_of(cls, name)`` reads it back.

Components derive from ``Tracked``: once the Engine attaches one (``track``), setting any of its
fields, a field of a nested object, or changing a list in place (``bursts.append(...)``,
``size_curve[0] = 2``) calls the Engine's hook, which marks the entity dirty. live_edits.py then
looks at the dirty components only. Copies (``copy``, ``deepcopy``, ``pickle``,
``dataclasses.replace``, msgspec) never carry the hook: they are plain values again.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
import operator
from collections.abc import Callable, Iterable
from typing import Any, SupportsIndex

from emberfx.core.errors import SceneError
from emberfx.model.scene_fields import suggest

__all__ = ["Change", "Tracked", "TrackedList", "change_of", "changed_between", "live", "passes",
           "rebuild", "track", "untrack"]

# Called with the name of the component's own field that was set, or None when something
# nested in it changed (a nested object's field, a list in place): then any field may differ.
Hook = Callable[[str | None], None]


class Change(enum.IntEnum):
    """What an edit of a field makes the Engine do; a larger value includes the smaller."""
    LIVE = 1      # the system writes it into a uniform before the next step
    PASSES = 2    # and the frame graph is rebuilt
    REBUILD = 3   # and the entity's GPU resources are made again


def _field(change: Change, default: Any, default_factory: Any, doc_metadata: dict | None) -> Any:
    metadata = {**(doc_metadata or {}), "change": change}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def live(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING,
         metadata: dict | None = None) -> Any:
    """A field whose edit only rewrites a uniform before the next step."""
    return _field(Change.LIVE, default, default_factory, metadata)


def passes(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING,
           metadata: dict | None = None) -> Any:
    """A field whose edit changes the entity's passes (the frame graph is rebuilt)."""
    return _field(Change.PASSES, default, default_factory, metadata)


def rebuild(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING,
            metadata: dict | None = None) -> Any:
    """A field whose edit rebuilds the entity's GPU resources."""
    return _field(Change.REBUILD, default, default_factory, metadata)


_CHANGES: dict[type, dict[str, Change]] = {}


def changes_of(cls: type) -> dict[str, Change]:
    """Field name -> declared Change for a dataclass; a field that declares none is missing."""
    found = _CHANGES.get(cls)
    if found is None:
        found = _CHANGES[cls] = {f.name: f.metadata["change"] for f in dataclasses.fields(cls)
                                 if isinstance(f.metadata.get("change"), Change)}
    return found


def change_of(cls: type, name: str) -> Change:
    """The declared Change of field ``name`` of ``cls``; KeyError if it declares none."""
    try:
        return changes_of(cls)[name]
    except KeyError:
        raise KeyError(f"{cls.__qualname__}.{name} declares no change class (use live(), "
                       f"passes() or rebuild() from emberfx.model.components)") from None


def undeclared_fields(cls: type, seen: set[type] | None = None) -> list[str]:
    """``Class.field`` for every field of ``cls`` and of the dataclasses its fields hold (by
    their type hints) that declares no change class; [] when all do."""
    import typing

    seen = set() if seen is None else seen
    if cls in seen:
        return []
    seen.add(cls)
    missing = [f"{cls.__qualname__}.{f.name}" for f in dataclasses.fields(cls)
               if f.name not in changes_of(cls)]
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        for nested in _dataclasses_in(hints.get(f.name)):
            missing += undeclared_fields(nested, seen)
    return missing


def _dataclasses_in(hint) -> list[type]:
    import typing

    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return [hint]
    return [c for arg in typing.get_args(hint) for c in _dataclasses_in(arg)]


def changed_between(cls: type, before, after,
                    among: Iterable[str] | None = None) -> Change | None:
    """The largest declared Change among the fields whose values differ between two instances
    of ``cls`` (an edit of a nested object counts as an edit of the field holding it, or of the
    nested field if that declares more; a class's ``VALUE_CHANGES``, field -> f(before, after),
    may name a larger Change for some pairs of values); None when they are equal. ``among``:
    the only fields that can differ, where the caller knows (the others hold the very same
    values)."""
    changes = changes_of(cls)
    declared = changes.items() if among is None else [
        (name, changes[name]) for name in among if name in changes]
    by_value = getattr(cls, "VALUE_CHANGES", {})
    worst: Change | None = None
    for name, change in declared:
        a, b = getattr(before, name), getattr(after, name)
        if a is b or a == b:   # a live edit's valid copy shares the values it did not change
            continue
        nested = _nested_change(a, b)
        change = max(change, nested) if nested is not None else change
        refined = by_value[name](a, b) if name in by_value else None
        change = max(change, refined) if refined is not None else change
        worst = change if worst is None else max(worst, change)
        if worst is Change.REBUILD:
            break
    return worst


def _nested_change(a, b) -> Change | None:
    if type(a) is type(b) and dataclasses.is_dataclass(a):
        return changed_between(type(a), a, b)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) == len(b):
            found = [c for x, y in zip(a, b) if (c := _nested_change(x, y)) is not None]
            return max(found) if found else None
        items = [x for x in (*a, *b) if dataclasses.is_dataclass(x)]   # items came or went
        return max((max(changes_of(type(x)).values(), default=Change.LIVE) for x in items),
                   default=None)
    if (a is None) != (b is None):   # an optional object came or went: as a list item does
        item = b if a is None else a
        if dataclasses.is_dataclass(item):
            return max(changes_of(type(item)).values(), default=Change.LIVE)
    return None


# --------------------------------------------------------------------------------------- tracking

class Tracked:
    """Base of components and their nested dataclasses: setting a field calls the hook the
    Engine attached (``track``). Works with ``@dataclass(slots=True)``; the hook is never
    compared, shown, copied or pickled."""

    __slots__ = ("_on_change",)

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        object.__setattr__(obj, "_on_change", None)   # so __init__'s sets skip the slow path
        return obj

    def __setattr__(self, name: str, value) -> None:
        # msgspec builds instances without __new__: the slot may be unset
        hook = getattr(self, "_on_change", None)
        try:
            if hook is None:
                object.__setattr__(self, name, value)
                return
            object.__setattr__(self, name, _adopt(value, _inner(hook)))
        except AttributeError:   # a name that is no field: as a scene file's unknown key
            raise SceneError(f"{type(self).__name__}(...)", f"unknown field '{name}', "
                             + suggest(name, field_names(type(self))), field=name) from None
        hook(name)

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(type(self))}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "_on_change", None)
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def __copy__(self):
        cls = type(self)
        new = cls.__new__(cls)
        # (a live edit's valid copy is made every step)
        for name, value in zip(field_names(cls), field_values(cls)(self)):
            object.__setattr__(new, name, value)
        return new

    def __deepcopy__(self, memo: dict):
        cls = type(self)
        new = memo[id(self)] = cls.__new__(cls)
        for name in field_names(cls):
            object.__setattr__(new, name, copy.deepcopy(getattr(self, name), memo))
        return new


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """The dataclass's field names, in order (cached: live edits and copies ask every step)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_FIELD_VALUES: dict[type, Callable[[Any], tuple]] = {}


def field_values(cls: type) -> Callable[[Any], tuple]:
    """A function giving an instance's field values in field order, read in one C call (live
    edits compare them with the last valid values, and copy them, every step)."""
    read = _FIELD_VALUES.get(cls)
    if read is None:
        names = field_names(cls)
        if len(names) > 1:
            read = operator.attrgetter(*names)
        else:   # one name: attrgetter gives the value itself; none: it cannot be made
            read = (lambda obj: (getattr(obj, names[0]),)) if names else (lambda obj: ())
        _FIELD_VALUES[cls] = read
    return read


class TrackedList(list):
    """A list field of a tracked component: changing it in place calls the hook. Copies and
    pickles of it are plain lists."""

    __slots__ = ("_on_change",)

    def __init__(self, items: Iterable = (), hook: Hook | None = None):
        super().__init__(items)
        self._on_change = hook

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(None)

    def _adopted(self, value):
        return _adopt(value, self._on_change) if self._on_change is not None else value

    def __setitem__(self, index, value) -> None:
        if isinstance(index, slice):
            value = [self._adopted(v) for v in value]
        else:
            value = self._adopted(value)
        super().__setitem__(index, value)
        self._changed()

    def __delitem__(self, index) -> None:
        super().__delitem__(index)
        self._changed()

    def __iadd__(self, values):  # type: ignore[misc]  # list's returns a list
        super().extend(self._adopted(v) for v in values)
        self._changed()
        return self

    def __imul__(self, count: SupportsIndex):
        super().__imul__(count)
        self._changed()
        return self

    def append(self, value) -> None:
        super().append(self._adopted(value))
        self._changed()

    def extend(self, values) -> None:
        super().extend(self._adopted(v) for v in values)
        self._changed()

    def insert(self, index: SupportsIndex, value) -> None:
        super().insert(index, self._adopted(value))
        self._changed()

    def pop(self, index: SupportsIndex = -1):
        value = super().pop(index)
        self._changed()
        return value

    def remove(self, value) -> None:
        super().remove(value)
        self._changed()

    def clear(self) -> None:
        super().clear()
        self._changed()

    def sort(self, *args, **kwargs) -> None:
        super().sort(*args, **kwargs)
        self._changed()

    def reverse(self) -> None:
        super().reverse()
        self._changed()

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: dict) -> list:
        return copy.deepcopy(list(self), memo)

    def __reduce_ex__(self, protocol: SupportsIndex):
        return (list, (list(self),))


def _adopt(value, hook: Hook | None):
    """``value`` as a tracked field holds it: nested components get the hook, lists become
    TrackedLists (their items adopted too)."""
    if isinstance(value, Tracked):
        track(value, hook)
        return value
    if isinstance(value, list):
        items = [_adopt(v, hook) for v in value]
        if isinstance(value, TrackedList):
            value._on_change = hook
            for index, (old, new) in enumerate(zip(value, items)):
                if old is not new:
                    list.__setitem__(value, index, new)
            return value
        return TrackedList(items, hook)
    return value


class _Inner:
    """The hook of what is nested in a component: any change there is the component's hook
    called with None (which of its fields changed is not known)."""

    __slots__ = ("outer",)

    def __init__(self, outer: Hook):
        self.outer = outer

    def __call__(self, name: str | None = None) -> None:
        self.outer(None)


def _inner(hook: Hook | None) -> Hook | None:
    if hook is None or isinstance(hook, _Inner):
        return hook
    return _Inner(hook)


def track(component: Tracked, hook: Hook | None) -> None:
    """Attach ``hook`` to a component and everything nested in it (None detaches): from now on
    setting one of its fields calls ``hook(field)``, and any other edit of it ``hook(None)``."""
    object.__setattr__(component, "_on_change", hook)
    inner = _inner(hook)
    for name in field_names(type(component)):
        value = getattr(component, name)
        adopted = _adopt(value, inner)
        if adopted is not value:
            object.__setattr__(component, name, adopted)


def untrack(component: Tracked) -> None:
    """The component's edits reach no Engine any more (its entity was deleted)."""
    track(component, None)
