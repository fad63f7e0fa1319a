"""``--set PATH=VALUES``: which scene field a sweep varies, and the values it takes.

PATH is ``scene.FIELD``, ``camera.FIELD``, ``light.FIELD`` or ``ENTITY.COMPONENT.FIELD[.SUB...]``
(``fountain.emitter.shape.radius``). VALUES is one of:

- a comma list of scalars: ``1000,5000``, ``additive,alpha``, ``"a, b",c`` (each item is a TOML
  value; a bare word is a string);
- a TOML array whose items are the values: ``[[0,0,0],[1,0,0]]`` is two vectors, ``[1,2]`` is
  two numbers (one vector is ``[[0,1,0]]``);
- an inclusive integer range ``a..b``;
- a linspace ``a:b:n`` (n evenly spaced values from a to b; whole numbers when a and b are
  written as integers and every step lands on one);
- ``@FILE``: one TOML value per line (blank lines and ``#`` comments skipped), relative to the
  working folder; a regular file of at most 16 MiB.

Ranges and linspaces are never listed (values.py): their length is known and each value is
computed when a job needs it. A value listed twice is kept once.

Grammar mistakes raise a one-line UsageError naming the ``--set``. Values are checked as the
scene file would check them (``apply``: the value goes into the parsed scene document, which is
validated again by the scene loader), so a bad value reads like a scene error, with the field
path, plus the ``--set`` it came from. Nothing here touches the GPU.
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from emberfx.core.errors import SceneError, UsageError
from emberfx.model.registry import component_types
from emberfx.model.scene_fields import field_names, show
from emberfx.sweeps.values import distinct, linspace, read_values_file

TABLES = ("scene", "camera", "light")
PATH_FORMS = "scene.FIELD, camera.FIELD, light.FIELD or ENTITY.COMPONENT.FIELD[.SUBFIELD...]"
VALUE_FORMS = ("a comma list (1000,5000), a TOML array ([[0,0,0],[1,0,0]]), a range a..b, "
               "a linspace a:b:n or @FILE")

_INT = r"[+-]?[0-9]+"
_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_RANGE = re.compile(rf"^\s*({_INT})\s*\.\.\s*({_INT})\s*$")
_LINSPACE = re.compile(rf"^\s*({_NUMBER})\s*:\s*({_NUMBER})\s*:\s*(\S+)\s*$")
_BARE_WORD = re.compile(r"^[A-Za-z_#][A-Za-z0-9_#.+\-/]*$")


@dataclass(frozen=True)
class SweepSet:
    """One ``--set``: the field's path (as parts) and the values it takes, in order."""

    option: str                  # as written, for messages: "fountain.emitter.rate=1000,5000"
    path: tuple[str, ...]        # ("fountain", "emitter", "rate")
    values: Sequence[Any]        # a tuple, a range or a Linspace: distinct values
    from_array: bool = False     # written as a TOML array: a scalar there may be a lost vector

    @property
    def name(self) -> str:
        return ".".join(self.path)


def parse_set(text: str) -> SweepSet:
    """``PATH=VALUES`` -> SweepSet; UsageError on bad grammar (the path is checked against a
    scene by ``check_path``)."""
    name, equals, values = text.partition("=")
    if not equals:
        raise UsageError(f"--set {text}: expected PATH=VALUES (e.g. fountain.emitter.rate="
                         f"1000,5000), found no '='")
    path = _path(name, f"--set {text}")
    return SweepSet(text, path, parse_values(values, f"--set {text}"),
                    from_array=values.strip().startswith("["))


def from_param(name: str, values: Any) -> SweepSet:
    """One entry of ``emberfx.sweep(params={PATH: VALUES})``: VALUES is a grammar string
    ("1..8"), a list (or tuple, range, numpy array) of values, or one value."""
    if not isinstance(name, str):
        raise UsageError(f"sweep params: expected PATH strings as keys, found {name!r}")
    option = f"params[{name!r}]"
    path = _path(name, option)
    if isinstance(values, str):
        return SweepSet(f"{name}={values}", path, parse_values(values, option),
                        from_array=values.strip().startswith("["))
    items: Sequence[Any]
    if isinstance(values, range):   # never listed: range(10**9) is as cheap as range(3)
        items = values
    elif hasattr(values, "tolist") or isinstance(values, (list, tuple)):
        items = distinct([plain(v) for v in (values.tolist() if hasattr(values, "tolist")
                                             else values)])
    else:
        items = (plain(values),)
    if not items:
        raise UsageError(f"{option}: expected at least one value, found none")
    shown = repr(items) if isinstance(items, range) else show(items)
    return SweepSet(f"{name}={shown}", path, items)


def _path(name: str, option: str) -> tuple[str, ...]:
    path = tuple(part.strip() for part in name.strip().split("."))
    if len(path) < 2 or not all(path):
        raise UsageError(f"{option}: expected PATH as {PATH_FORMS}, found {name.strip()!r}")
    return path


def parse_values(text: str, option: str) -> Sequence[Any]:
    """VALUES -> a sequence of distinct plain values (int, float, bool, str, lists): a tuple, or
    for a range or linspace a sequence that computes its items; UsageError naming ``option``
    when the text has none of the forms."""
    body = text.strip()
    if not body:
        raise UsageError(f"{option}: expected values ({VALUE_FORMS}), found nothing")
    if body.startswith("@"):
        return _values_from_file(body[1:], option)
    if body.startswith("["):
        try:
            value = _toml_value(body)
        except ValueError:
            value = None
        if not isinstance(value, list) or not value:
            raise UsageError(f"{option}: expected a TOML array of values, e.g. [[0,0,0],[1,0,0]] "
                             f"for two vectors, found {body!r}")
        return distinct(value)
    if ".." in body:
        match = _RANGE.match(body)
        if match is None:
            raise UsageError(f"{option}: expected an integer range a..b (e.g. 1..8), "
                             f"found {body!r}")
        low, high = int(match[1]), int(match[2])
        if low > high:
            raise UsageError(f"{option}: expected a range a..b with a <= b, found {body!r}")
        return range(low, high + 1)
    match = _LINSPACE.match(body)
    if match is not None:
        return _linspace(match[1], match[2], match[3], option, body)
    return distinct([_scalar(item, option) for item in _split_commas(body, option)])


def _linspace(low_text: str, high_text: str, count_text: str, option: str,
              body: str) -> Sequence[Any]:
    if not re.fullmatch(r"\+?[0-9]+", count_text) or int(count_text) < 1:
        raise UsageError(f"{option}: expected a linspace a:b:n with n a whole number >= 1, "
                         f"found n = {count_text!r}")
    return linspace(low_text, high_text, int(count_text), option, body)


def _values_from_file(name: str, option: str) -> tuple[Any, ...]:
    path, text = read_values_file(name, option)
    lines = text.splitlines()
    values = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            values.append(_toml_value(line))
        except ValueError:
            raise UsageError(f"{option}: {path} line {number}: expected one TOML value "
                             f"(a number, \"string\", true/false or [array]), found {line!r}"
                             ) from None
    if not values:
        raise UsageError(f"{option}: expected one TOML value per line in {path}, found none")
    return distinct(values)


def _toml_value(text: str) -> Any:
    """One TOML value; ValueError when ``text`` is not one."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        raise ValueError(text) from None


def _split_commas(body: str, option: str) -> list[str]:
    """Split on commas outside quotes and brackets (so a stray array stays one item, and its
    error says what to write instead)."""
    items: list[str] = []
    current: list[str] = []
    quote, depth = "", 0
    for char in body:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[]":
            depth += 1 if char == "[" else -1
        elif char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    if quote:
        raise UsageError(f"{option}: expected a closing {quote} in {body!r}")
    items.append("".join(current).strip())
    if not all(items):
        raise UsageError(f"{option}: expected a comma list of values, found an empty item "
                         f"in {body!r}")
    return items


def _scalar(item: str, option: str) -> Any:
    try:
        value = _toml_value(item)
    except ValueError:
        value = None
        if re.fullmatch(_NUMBER, item):     # numbers TOML spells differently: .5, 5., +.5
            value = float(item)
        elif _BARE_WORD.match(item):        # additive, #ff8800: a string without quotes
            value = item
    if value is None:
        raise UsageError(f"{option}: expected a number, true/false, a word or a \"quoted "
                         f"string\" in the comma list, found {item!r}")
    if isinstance(value, (list, dict)):
        raise UsageError(f"{option}: a comma list holds single values; write vectors as a TOML "
                         f"array of them (e.g. [[0,0,0],[1,0,0]]), found {item!r}")
    return value


# ------------------------------------------------------------------- paths against one scene

def document_path(doc: dict, sweep: SweepSet, where: str) -> tuple[str, ...]:
    """Where ``sweep``'s value goes in a parsed scene document: ("scene", FIELD...), or
    ("entity", INDEX, COMPONENT, FIELD...). UsageError when the scene has no such entity or
    component, or the component no such field (checked once, before any job)."""
    entities = doc.get("entity", [])
    names = [e.get("name") for e in entities if isinstance(e, dict)]
    head = sweep.path[0]
    if head in names and len(sweep.path) >= 3 and sweep.path[1] in entities[names.index(head)]:
        index = names.index(head)
        component, fields = sweep.path[1], sweep.path[2:]
        types = component_types()
        if component not in types:   # "script" or "name": not something a sweep varies
            raise UsageError(f"--set {sweep.option}: '{component}' is not a component of "
                             f"entity '{head}'; expected {PATH_FORMS}")
        _check_field(sweep, fields[0], field_names(types[component].cls),
                     f"entity '{head}' {component}")
        return ("entity", str(index), component, *fields)
    if head in TABLES:
        from emberfx.model.camera import Camera
        from emberfx.model.light import Light
        from emberfx.model.scene import SceneSettings

        cls = {"scene": SceneSettings, "camera": Camera, "light": Light}[head]
        _check_field(sweep, sweep.path[1], field_names(cls), f"[{head}]")
        return sweep.path
    if head in names:
        components = [k for k in entities[names.index(head)] if k in component_types()]
        wanted = sweep.path[1] if len(sweep.path) >= 3 else None
        found = f"no component '{wanted}'" if wanted else "no FIELD after the component"
        raise UsageError(f"--set {sweep.option}: entity '{head}' in {where} has {found}; "
                         f"its components: {', '.join(components) or 'none'} "
                         f"(PATH is ENTITY.COMPONENT.FIELD)")
    close = difflib.get_close_matches(head, [*TABLES, *map(str, names)], n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    raise UsageError(f"--set {sweep.option}: {where} has no entity '{head}'; {hint}"
                     f"expected {PATH_FORMS}")


def _check_field(sweep: SweepSet, field: str, allowed: tuple[str, ...], owner: str) -> None:
    if field not in allowed:
        close = difflib.get_close_matches(field, allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"expected one of: {', '.join(allowed)}"
        raise UsageError(f"--set {sweep.option}: {owner} has no field '{field}'; {hint}")


def apply(doc: dict, place: tuple[str, ...], value: Any, sweep: SweepSet) -> dict:
    """A deep copy of ``doc`` with ``value`` at ``place`` (from ``document_path``); tables on
    the way that the file leaves out are created."""
    out = copy.deepcopy(doc)
    if place[0] == "entity":
        table, keys = out["entity"][int(place[1])], place[2:]
    else:
        table, keys = out, place
    for depth, key in enumerate(keys[:-1]):
        table = table.setdefault(key, {})
        if not isinstance(table, dict):
            raise SceneError(None, f"expected a table to set '{keys[-1]}' in, found "
                             f"{show(table)} (--set {sweep.name}={show(value)})",
                             field=".".join(keys[:depth + 1]))
    table[keys[-1]] = value
    return out


def validate(doc: dict, scene_path, sets: list[tuple[SweepSet, Any]]):
    """The Scene the document describes, checked by the scene loader; a SceneError names the
    field, and the ``--set`` values of this job."""
    import tomli_w

    from emberfx.model.scene import loads_scene

    try:
        return loads_scene(tomli_w.dumps(doc), path=scene_path)
    except SceneError as exc:
        given = ", ".join(f"{s.name}={show(v)}" for s, v in sets)
        hint = ""
        if any(s.from_array and not isinstance(v, list) for s, v in sets):
            hint = "; a TOML array lists values: one vector is written [[x,y,z]]"
        raise SceneError(exc.path, f"{exc.detail} (--set {given}){hint}", entity=exc.entity,
                         field=exc.field) from None
    except (TypeError, ValueError) as exc:   # tomli_w: a value TOML cannot hold (None, nan keys)
        raise SceneError(scene_path, f"expected values TOML can hold, found {exc}") from None


def plain(value: Any) -> Any:
    """A value given in Python as TOML holds it: tuples and numpy arrays as lists, numpy
    numbers as Python numbers."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
