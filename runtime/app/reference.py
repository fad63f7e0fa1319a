"""The scene reference page (docs/reference/scene.md), generated from the classes scene tables
become: ``[scene]``, ``[camera]``, ``[light]``, ``[render]``, every component family in the
registry, and the dataclasses nested in them (an emitter's ``shape``, ``bursts``,
``collision`` ...).

Each field is listed with its type (bounds included), its default, its unit, what an edit of it
costs (live, passes, rebuild) and its docstring: the string literal written under the field in
the class body, read from the source with ``ast`` (Python keeps no such string at run time).

    python -m emberfx.app.docs_pages docs/      # writes it, with the other generated pages

tests/test_docs_reference.py regenerates the page in memory and fails when the committed one
differs.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import math
import re
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any, Literal

import msgspec

from emberfx.model.camera import Camera
from emberfx.model.components import changes_of
from emberfx.model.light import Light
from emberfx.model.registry import component_types
from emberfx.model.render import RenderSettings
from emberfx.model.scene import SceneSettings
from emberfx.model.scene_fields import (
    fields_with_defaults,
    is_record_class,
    non_defaults,
    type_hints,
)

__all__ = ["scene_reference", "field_docs", "unit_of", "type_text"]

PAGE = Path("reference") / "scene.md"
"""where the page goes, relative to the docs folder"""

_BOUNDS = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
_NAMES = {str: "string", int: "integer", float: "float", bool: "boolean", type(None): "unset"}
_UNITS = [   # (pattern in the docstring, unit)
    (r"^seconds\b|\bin seconds\b|, seconds\b|^seconds per\b|: seconds\b", "s"),
    (r"\bm/s\^2\b", "m/s²"),
    (r"\bm/s\b(?!\^)", "m/s"),
    (r"\b1/s\b(?!\^)", "1/s"),
    (r"\b1/s\^2\b", "1/s²"),
    (r"\bdegrees per second\b", "°/s"),
    (r"\bdegrees\b(?! per second)", "°"),
    (r"^world units\b|: world units\b|, world units\b|\bin world units\b", "world units"),
    (r"^pixels\b|\bin pixels\b|\bhalf-resolution pixels\b|\bor pixels\b", "pixels"),
    (r"^cells\b", "cells"),
    (r"^kg\b", "kg"),
    (r"^N/m\b", "N/m"),
    (r"\bN s/m\b", "N s/m"),
]
_MISSING_DEFAULT = "required"


# ----------------------------------------------------------------------------- reading the source

def field_docs(cls: type) -> dict[str, str]:
    """Field name -> the docstring written under it in ``cls``'s body ('' where none is)."""
    node = _class_node(cls)
    docs: dict[str, str] = {}
    if node is None:
        return docs
    body = node.body
    for index, stmt in enumerate(body):
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        after = body[index + 1] if index + 1 < len(body) else None
        if (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def class_doc(cls: type) -> str:
    """The docstring written in ``cls``'s body ('' where none is: a dataclass's generated
    signature is not a description)."""
    node = _class_node(cls)
    text = ast.get_docstring(node) if node is not None else None
    return text or ""


def _class_node(cls: type) -> ast.ClassDef | None:
    module = sys.modules[cls.__module__]
    source = inspect.getsource(module)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return node
    return None


# ------------------------------------------------------------------------------- describing types

def type_text(hint: Any, links: dict[type, str]) -> str:
    """A field's type as a scene file writer reads it: 'float >= 0', '[float, float]',
    '"point" or "sphere"', 'list of [Burst](#emitter-bursts)'."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        base = type_text(args[0], links)
        bounds = [f"{_BOUNDS[name]} {_number(getattr(meta, name))}"
                  for meta in args[1:] if isinstance(meta, msgspec.Meta)
                  for name in _BOUNDS if getattr(meta, name) is not None]
        return f"{base} {', '.join(bounds)}" if bounds else base
    if origin in (typing.Union, types.UnionType):
        parts = [type_text(a, links) for a in args if a is not type(None)]
        return " or ".join(parts)
    if origin is Literal:
        return " or ".join(toml_value(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list of {type_text(args[0], links)}"
        return "[" + ", ".join(type_text(a, links) for a in args) + "]"
    if origin is list:
        return f"list of {type_text(args[0], links)}" if args else "list"
    if origin is dict:
        return "table"
    if isinstance(hint, type) and hint in links:
        return f"[{hint.__name__}]({links[hint]})"
    if isinstance(hint, type) and hint in _NAMES:
        return _NAMES[hint]
    if hint is Any:
        return "any"
    return getattr(hint, "__name__", str(hint))


def _number(value) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1 << 20:
        value = int(value)
    if isinstance(value, int) and abs(value) >= 1 << 20:
        exponent = value.bit_length() - 1
        if value == 1 << exponent:
            return f"2^{exponent}"
        if value == (1 << (exponent + 1)) - 1:
            return f"2^{exponent + 1} - 1"
    return toml_value(value)


def unit_of(name: str, doc: str) -> str:
    """The unit a field is written in, where its name or docstring says it plainly and says
    only one ('' where not: the description then says what the number is). Parentheticals are
    left out: they speak of other fields ("its speed is `strength`, m/s")."""
    if name.endswith("_deg"):
        return "°/s" if "per second" in doc else "°"
    first = doc.split("\n\n")[0].replace("\n", " ")
    while re.search(r"\([^()]*\)", first):
        first = re.sub(r"\([^()]*\)", "", first)
    found = {unit for pattern, unit in _UNITS if re.search(pattern, first)}
    return found.pop() if len(found) == 1 else ""


def nested_classes(hint: Any) -> list[type]:
    """The record classes (dataclasses, msgspec Structs) a field's type holds."""
    if isinstance(hint, type) and is_record_class(hint):
        return [hint]
    return [c for arg in typing.get_args(hint) if not isinstance(arg, msgspec.Meta)
            for c in nested_classes(arg)]


# ----------------------------------------------------------------------------------------- the page

@dataclasses.dataclass
class _Table:
    path: str          # "emitter", "emitter.shape"
    title: str         # the heading: "[entity.emitter]", "emitter.shape"
    cls: type
    anchor: str


def _tables() -> list[_Table]:
    top = [("scene", "[scene]", SceneSettings), ("camera", "[camera]", Camera),
           ("light", "[light]", Light), ("render", "[render]", RenderSettings)]
    top += [(key, f"[entity.{key}]", ct.cls) for key, ct in sorted(component_types().items())]
    tables: list[_Table] = []
    seen: set[type] = set()
    for key, title, cls in top:
        tables.append(_Table(key, title, cls, _anchor(key)))
        seen.add(cls)
        tables += _nested_tables(key, cls, seen)
    return tables


def _nested_tables(path: str, cls: type, seen: set[type]) -> list[_Table]:
    found: list[_Table] = []
    hints = type_hints(cls)
    for name, _ in fields_with_defaults(cls):
        for nested in nested_classes(hints.get(name)):
            if nested in seen:
                continue
            seen.add(nested)
            where = f"{path}.{name}"
            found.append(_Table(where, where, nested, _anchor(where)))
            found += _nested_tables(where, nested, seen)
    return found


def _anchor(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


def _cell(text: str) -> str:
    """Text for a table cell: one line, '|' escaped, and '<' '>' '&' outside code spans kept
    as text rather than read as HTML."""
    text = re.sub(r"``([^`]+)``", r"`\1`", " ".join(text.split()))
    parts = text.split("`")
    for i in range(0, len(parts), 2):   # outside code spans
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;")
    return "`".join(parts).replace("|", "\\|")


def _default_text(default: Any) -> str:
    if default is None:
        return "unset"
    if is_record_class(type(default)):
        return "see below"
    return f"`{toml_value(default)}`"


def toml_value(value: Any) -> str:
    """A default as a scene file writes it (floats to 6 significant digits)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = f"{value:.6g}"
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    if is_record_class(type(value)):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in non_defaults(value)) + "}"
    return str(value)


def _table_text(table: _Table, links: dict[type, str]) -> list[str]:
    cls = table.cls
    lines = [f"### `{table.title}` {{#{table.anchor}}}", ""]
    about = class_doc(cls)
    if about:
        lines += [re.sub(r"``([^`]+)``", r"`\1`", textwrap.dedent(about).strip()), ""]
    docs = field_docs(cls)
    hints = type_hints(cls)
    changes = changes_of(cls) if dataclasses.is_dataclass(cls) else {}
    with_change = bool(changes)
    header = "| Field | Type | Default | Unit |" + (" On edit |" if with_change else "") \
        + " Description |"
    lines += [header, "|" + " --- |" * (header.count("|") - 1)]
    for name, default in fields_with_defaults(cls):
        doc = docs.get(name, "")
        default_text = _MISSING_DEFAULT if _is_missing(default) else _default_text(default)
        kind = type_text(hints.get(name), links)
        unit = unit_of(name, doc) if re.search(r"\b(float|integer)\b", kind) else ""
        row = [f"`{name}`", _cell(kind), _cell(default_text), unit]
        if with_change:
            change = changes.get(name)
            row.append(change.name.lower() if change is not None else "")
        row.append(_cell(doc))
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    return lines


def _is_missing(default: Any) -> bool:
    return type(default) is object   # scene_fields' marker for a field without a default


INTRO = """\
# Scene reference

A scene file is TOML: one `[scene]` table, one `[camera]`, an optional `[light]`, `[render]`
and `[bindings]`, and any number of `[[entity]]` tables. Each entity has a `name`, an optional
`script` and one sub-table per component (`[entity.emitter]`, `[entity.trail]`, ...). A table
nested in a component is written inline (`shape = {{ kind = "sphere", radius = 0.5 }}`) or as a
sub-table (`[entity.emitter.shape]`); a list of tables (`bursts`) as an array of inline tables
or `[[entity.emitter.bursts]]`.

Every field below is checked when the scene loads (`emberfx validate` needs no GPU): a wrong
value is refused with one line naming the file, the entity, the field, what was expected and
what was found. *On edit* says what changing the field on a running engine costs: **live**
rewrites a uniform before the next step, **passes** rebuilds the frame graph, **rebuild**
remakes the entity's GPU resources. Colours are hex strings (`"#ff8800"`, with an optional
alpha byte). Units not listed are in the description.

This page is generated from the component classes by `python -m emberfx.app.docs_pages docs/`;
do not edit it by hand.

Each `[[entity]]` table has:

| Field | Type | Default | Description |
| --- | --- | --- | --- |
| `name` | string | required | unique in the scene; no `/` or `:`, not starting with `~` \
(entity names also name GPU resources and passes) |
| `script` | string | unset | a Python file with the entity's hooks, relative to the scene file |

The `[bindings]` table maps a key name to an event sent to the scripts' `on_event` when the key
is pressed in the window: `space = "burst"`.

"""


def scene_reference() -> str:
    """The whole page, as Markdown."""
    tables = _tables()
    links = {t.cls: f"#{t.anchor}" for t in tables}
    lines = [INTRO.format(), "## Scene tables", ""]
    families = False
    for table in tables:
        if not families and table.path not in ("scene", "camera", "light", "render") \
                and "." not in table.path:
            lines += ["## Components", ""]
            families = True
        lines += _table_text(table, links)
    return "\n".join(lines).rstrip("\n") + "\n"
