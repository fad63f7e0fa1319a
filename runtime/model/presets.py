"""Quality presets: a scene's ``[cpu]`` table, what it lowers on a CPU adapter (lavapipe).

A scene heavy enough to fill a GPU (a gas grid, a fluid, tens of thousands of particles) can
name lighter values for a CPU adapter, in the shape of the file itself::

    [cpu]                      # on a CPU adapter: a quarter of the pixels, a coarser gas
    scene = { size = [640, 360] }
    fire = { gas = { resolution = [16, 32, 16], cell = 0.08 } }
    fire.gas.look = { step = 0.08 }   # merged into the gas's look, its other fields kept

Keys are ``scene``, ``camera``, ``light``, ``render`` or an entity's name; below them, tables
merge into the scene's tables (so a preset names only what it lowers) and any other value
replaces the one there. The loader checks the scene with the preset applied as strictly as the
scene itself, naming the ``[cpu]`` entry in any error. ``Scene.cpu_variant`` gives that scene
and the list of what changed; the app applies it on a CPU adapter and says so
(emberfx.app.headless).
"""

from __future__ import annotations

import copy
import difflib

from emberfx.core.errors import SceneError
from emberfx.model.scene_fields import show

__all__ = ["PRESET_TABLE", "SETTINGS_TABLES", "merged_document", "changes", "preset_changes"]

PRESET_TABLE = "cpu"
"""the top-level table a scene file names its CPU preset in"""
SETTINGS_TABLES = ("scene", "camera", "light", "render")
"""the preset's keys that are not entity names"""


def merged_document(doc: dict, preset: dict, path=None) -> dict:
    """A deep copy of the scene document ``doc`` with ``preset`` merged in; SceneError (naming
    the ``[cpu]`` entry) for a key that is no settings table and no entity, or a value that is
    not a table where one is needed."""
    out = copy.deepcopy(doc)
    entities = {e.get("name"): e for e in out.get("entity", []) if isinstance(e, dict)}
    for key, value in preset.items():
        where = f"{PRESET_TABLE}.{key}"
        if not isinstance(value, dict):
            raise SceneError(path, f"expected a table of the fields to change, found {show(value)}",
                             field=where)
        if key in SETTINGS_TABLES:
            target = out.setdefault(key, {})
        elif key in entities:
            target = entities[key]
            for component in value:
                if component not in target:
                    held = ", ".join(k for k in target if k not in ("name", "script"))
                    raise SceneError(path, f"entity '{key}' has no component '{component}' to "
                                     f"lower; its components: {held}",
                                     field=f"{where}.{component}")
        else:
            close = difflib.get_close_matches(key, [*SETTINGS_TABLES, *map(str, entities)], n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise SceneError(path, f"expected one of {', '.join(SETTINGS_TABLES)} or an "
                             f"entity's name, found '{key}'{hint}", field=where)
        _merge(target, value)
    return out


def _merge(target: dict, values: dict) -> None:
    for key, value in values.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


def changes(before: dict, after: dict, prefix: str = "") -> list[str]:
    """'path old -> new' for every value that differs between two documents' tables."""
    out = []
    for key, new in after.items():
        old = before.get(key)
        where = f"{prefix}{key}"
        if isinstance(new, dict) and isinstance(old, dict):
            out += changes(old, new, where + ".")
        elif new != old:
            out.append(f"{where} {show(old) if old is not None else 'default'} -> {show(new)}")
    return out


def preset_changes(doc: dict, lowered: dict, preset: dict) -> list[str]:
    """What merging ``preset`` into ``doc`` (giving ``lowered``) changed, as ``changes`` says it,
    for the tables the preset names."""
    before, after = _by_name(doc), _by_name(lowered)
    return changes({k: before.get(k, {}) for k in preset}, {k: after[k] for k in preset})


def _by_name(doc: dict) -> dict:
    tables = {k: doc.get(k, {}) for k in SETTINGS_TABLES}
    tables.update({e["name"]: e for e in doc.get("entity", []) if isinstance(e, dict)})
    return tables
