"""A Scene written back as TOML (``Scene.to_toml``, ``Scene.save``): every field of every
component, None ones left out, and arrays of plain values on one line as people write them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import msgspec
import tomli_w

from emberfx.model.scene_fields import field_names

if TYPE_CHECKING:
    from emberfx.model.scene import EntitySpec, Scene


def scene_toml(scene: Scene) -> str:
    doc: dict[str, Any] = {"scene": _to_table(scene.settings), "camera": _to_table(scene.camera)}
    if scene.light != type(scene.light)():   # the default is left out: most scenes have none
        doc["light"] = _to_table(scene.light)
    if scene.render != type(scene.render)():
        doc["render"] = _to_table(scene.render)
    if scene.bindings:
        doc["bindings"] = dict(scene.bindings)
    if scene.entities:
        doc["entity"] = [_entity_table(spec) for spec in scene.entities]
    if scene.cpu:
        doc["cpu"] = scene.cpu
    return _compact_arrays(tomli_w.dumps(doc))


def _to_table(obj) -> dict:
    """A component (or settings, camera) as a TOML table: every field, None ones left out (TOML
    has no null), tuples as arrays (msgspec turns them back into tuples on load)."""
    values = msgspec.to_builtins(obj)
    return {name: _drop_none(values[name]) for name in field_names(type(obj))
            if values.get(name) is not None}


def _drop_none(value):
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def _entity_table(spec: EntitySpec) -> dict:
    table: dict[str, Any] = {"name": spec.name}
    if spec.script:
        table["script"] = spec.script
    for key, comp in spec.components.items():
        table[key] = _to_table(comp)
    return table


def _compact_arrays(text: str) -> str:
    """tomli_w writes every array one item per line; put arrays of plain values (vectors, colour
    lists) back on one line as people write them. Items never contain a newline (strings are
    escaped), so joining the lines of an innermost array is safe."""
    innermost = re.compile(r"\[\n((?:[ \t]+[^\[\]\n]+,\n)+)[ \t]*\]")
    return innermost.sub(lambda m: "[" + ", ".join(
        line.strip().rstrip(",") for line in m[1].splitlines()) + "]", text)
