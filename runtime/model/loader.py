"""The scene loader: a parsed scene document (TOML as dicts and lists) checked table by table
and built into emberfx.model.scene's classes, with every mistake raised as a one-line SceneError.

``SceneLoader`` refuses unknown tables and keys (suggesting the closest name), converts each
table with msgspec into its class (SceneSettings, Camera, Light, RenderSettings, or the
component class the registry names) and refuses numbers a 32-bit float cannot hold. It checks
that file paths exist and that the files a component reads parse (``check_files``), that
fields naming other entities name one with a wanted component (``REFERENCES``,
``REFERENCE_LIMITS``, ``references_problem``), and what a component can check only with the
scene's timestep (``timestep_problem``).

It builds the tables of emberfx.model.scene_parts and returns a scene's parts
(``scene_fields``); emberfx.model.scene makes the Scene of them and imports this module, never
the other way round. Key names of ``[bindings]`` are checked with emberfx.model.keys.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from emberfx.core.errors import SceneError
from emberfx.model.camera import Camera
from emberfx.model.component_values import path_values, reference_value, referenced_names
from emberfx.model.keys import check_binding
from emberfx.model.light import Light
from emberfx.model.numbers import bad_numbers
from emberfx.model.presets import PRESET_TABLE, merged_document
from emberfx.model.registry import component_types, entity_name_problem
from emberfx.model.render import RenderSettings
from emberfx.model.scene_fields import (
    check_decodable,
    explain,
    join_path,
    show,
    suggest,
    unknown_keys,
)
from emberfx.model.scene_parts import EntitySpec, SceneSettings, resolve_path

__all__ = ["SceneLoader", "TOP_LEVEL", "ENTITY_KEYS"]

TOP_LEVEL = ("scene", "camera", "light", "render", "bindings", "entity", PRESET_TABLE)
ENTITY_KEYS = ("name", "script")


class SceneLoader:
    """Validates one parsed document; remembers the file for messages and relative paths."""

    def __init__(self, path):
        self.path = path
        self.types = component_types()

    def error(self, message: str, *, field: str | None = None, entity: str | None = None):
        return SceneError(self.path, message.replace("\n", " "), entity=entity, field=field)

    def scene_fields(self, doc: dict) -> dict[str, Any]:
        """The keyword arguments of emberfx.model.scene.Scene for the document ``doc``."""
        for key in doc:
            if key not in TOP_LEVEL:
                what = "table" if isinstance(doc[key], dict) else "key"
                self.unknown(what, key, TOP_LEVEL, field=key)
        settings = self.convert(SceneSettings, self.table(doc, "scene"), "scene")
        camera = self.convert(Camera, self.table(doc, "camera"), "camera")
        entities = self.entities(doc.get("entity", []))
        self.references(entities)
        self.timestep_problems(entities, settings.fixed_dt)
        if settings.script is not None:
            self.path_value(settings.script, "scene.script", None)
        return {"settings": settings, "camera": camera, "entities": entities,
                "path": Path(os.path.abspath(self.path)) if self.path is not None else None,
                "bindings": self.bindings(self.table(doc, "bindings")),
                "light": self.convert(Light, self.table(doc, "light"), "light"),
                "render": self.convert(RenderSettings, self.table(doc, "render"), "render"),
                "cpu": self.preset(doc)}

    def preset(self, doc: dict) -> dict:
        """The ``[cpu]`` table, checked by loading the scene with it merged in: a mistake there
        is named as the preset's (``cpu.fire.gas.cell``), with what the loader found."""
        preset = self.table(doc, PRESET_TABLE)
        if not preset:
            return {}
        lowered = merged_document({k: v for k, v in doc.items() if k != PRESET_TABLE}, preset,
                                  self.path)
        try:
            SceneLoader(self.path).scene_fields(lowered)
        except SceneError as exc:
            where = ".".join(p for p in (exc.entity, exc.field) if p)
            raise self.error(f"{exc.detail} (with the [{PRESET_TABLE}] preset applied)",
                             field=f"{PRESET_TABLE}.{where}" if where else PRESET_TABLE
                             ) from None
        return preset

    def timestep_problems(self, entities: list[EntitySpec], fixed_dt: float) -> None:
        """Checks a component cannot make alone because they need the scene's timestep
        (e.g. an emitter's prewarm work); a component offers them as ``timestep_problem``."""
        for spec in entities:
            for key, component in spec.components.items():
                check = getattr(component, "timestep_problem", None)
                problem = check(fixed_dt) if check is not None else None
                if problem is not None:
                    field, message = problem
                    raise self.error(message, field=f"{key}.{field}", entity=spec.name)

    def bindings(self, table: dict) -> dict[str, str]:
        """``[bindings]``: key name = "event name" (sent to on_event(ctx, name, {"key": key}))."""
        out = {}
        for key, event in table.items():
            problem = check_binding(key)
            if problem:
                raise self.error(problem, field=f"bindings.{key}")
            if not isinstance(event, str) or not event:
                raise self.error(f"expected an event name (a non-empty string), found "
                                 f"{show(event)}", field=f"bindings.{key}")
            out[key.lower()] = event
        return out

    def references(self, entities: list[EntitySpec], among: list[EntitySpec] | None = None):
        """Fields that name other entities (a component's ``REFERENCES = {field: (keys...)}``)
        must name an entity (of ``among``, default ``entities``) with one of those components."""
        kinds = {e.name: set(e.components) for e in (entities if among is None else among)}
        for spec in entities:
            for key, comp in spec.components.items():
                for field_name, wanted in getattr(type(comp), "REFERENCES", {}).items():
                    value = reference_value(comp, field_name)
                    for index, target in enumerate(referenced_names(value)):
                        where = (f"{key}.{field_name}" if isinstance(value, str)
                                 else f"{key}.{field_name}[{index}]")
                        if target not in kinds:
                            raise self.error(f"no entity named '{target}'; "
                                             + suggest(target, kinds, "entity names"),
                                             field=where, entity=spec.name)
                        if not kinds[target] & set(wanted):
                            raise self.error(
                                f"expected an entity with {' or '.join(wanted)}, found "
                                f"'{target}' with "
                                f"{', '.join(sorted(kinds[target])) or 'no components'}",
                                field=where, entity=spec.name)
                self.reference_limits(spec, key, comp, kinds)
        # links among components of one class (sub-emitter cycles): a class's
        # references_problem([(entity, component), ...]) -> (entity, field, why) or None
        for cls in dict.fromkeys(type(c) for spec in entities for c in spec.components.values()):
            check = getattr(cls, "references_problem", None)
            problem = check([(e.name, c) for e in (entities if among is None else among)
                             for c in e.components.values() if type(c) is cls]) if check else None
            if problem is not None:
                raise self.error(problem[2], field=problem[1], entity=problem[0])

    def reference_limits(self, spec: EntitySpec, key: str, comp, kinds: dict[str, set]) -> None:
        """``REFERENCE_LIMITS = {field: n}``: at most n components of the field's REFERENCES
        kinds may act on the component: those on the entities it names, or every one in the
        scene while the field is unset (a GPU buffer sized for n records takes them). The limit
        may be ``{(kind, ...): n, ...}`` instead, one per group of kinds (separate buffers)."""
        for field_name, limits in getattr(type(comp), "REFERENCE_LIMITS", {}).items():
            if not isinstance(limits, dict):
                limits = {tuple(type(comp).REFERENCES[field_name]): limits}
            for group, limit in limits.items():
                wanted = set(group)
                named = getattr(comp, field_name)
                acting = sum(len(wanted & components) for name, components in kinds.items()
                             if named is None or name in named)
                if acting > limit:
                    scope = ("every one in the scene acts while it is unset; name the ones that "
                             "should" if named is None else "on the entities it names")
                    raise self.error(f"expected at most {limit} {' / '.join(sorted(wanted))} "
                                     f"components acting on this {key}, found {acting} ({scope})",
                                     field=f"{key}.{field_name}", entity=spec.name)

    def table(self, doc: dict, key: str) -> dict:
        value = doc.get(key, {})
        if not isinstance(value, dict):
            raise self.error(f"expected a table [{key}], found {show(value)}", field=key)
        return value

    def unknown(self, what: str, key: str, allowed, *, field: str, entity: str | None = None):
        raise self.error(f"unknown {what} '{key}', " + suggest(key, allowed), field=field,
                         entity=entity)

    def entities(self, value) -> list[EntitySpec]:
        if isinstance(value, dict):  # written [entity] instead of [[entity]]
            raise self.error("expected an array of tables [[entity]], found a single table "
                             "[entity]", field="entity")
        if not isinstance(value, list):
            raise self.error(f"expected an array of tables [[entity]], found {show(value)}",
                             field="entity")
        seen: dict[str, int] = {}
        return [self.entity(index, raw, seen) for index, raw in enumerate(value)]

    def entity(self, index: int, raw, seen: dict[str, int]) -> EntitySpec:
        where = f"entity[{index}]"  # entities without a usable name are named by position
        if not isinstance(raw, dict):
            raise self.error(f"expected a table, found {show(raw)}", field=where)
        name = raw.get("name")
        if name is None:
            raise self.error("expected a non-empty string, found nothing (every [[entity]] needs "
                             "a name)", field=f"{where}.name")
        if not isinstance(name, str) or not name.strip():
            raise self.error(f"expected a non-empty string, found {show(name)}",
                             field=f"{where}.name")
        problem = entity_name_problem(name)
        if problem is not None:
            raise self.error(problem, field=f"{where}.name")
        if name in seen:
            raise self.error(f"expected a unique name, found '{name}' again (entity[{seen[name]}] "
                             f"and entity[{index}])", field=f"{where}.name")
        seen[name] = index
        script = None
        components: dict[str, object] = {}
        for key, value in raw.items():
            if key == "name":
                continue
            if key == "script":
                script = self.path_value(value, "script", name)
            elif key in self.types:
                components[key] = self.component(key, value, name)
            elif isinstance(value, dict):
                self.unknown("component", key, sorted(self.types), field=key, entity=name)
            else:
                self.unknown("key", key, [*ENTITY_KEYS, *sorted(self.types)], field=key,
                             entity=name)
        return EntitySpec(name, components, script)

    def component(self, key: str, raw, entity: str | None,
                  fields: frozenset[str] | None = None) -> object:
        if not isinstance(raw, dict):
            raise self.error(f"expected a table [entity.{key}], found {show(raw)}", field=key,
                             entity=entity)
        cls = self.types[key].cls
        obj = self.convert(cls, raw, key, entity, fields)
        # Fields the class declares as file paths must exist; they stay relative, as written.
        for name, item in path_values(obj):
            if fields is None or name.split(".")[0] in fields:   # (a nested path: its table)
                self.path_value(item, f"{key}.{name}", entity)
        # A class that reads its files (a Life pattern) checks their contents as the engine
        # will; by convention its ValueError reads "field: expected ..., found ...".
        if hasattr(obj, "check_files"):
            try:
                obj.check_files(lambda relative: resolve_path(self.path, relative))
            except ValueError as exc:
                head, _, rest = str(exc).partition(": ")
                raise self.error(rest, field=f"{key}.{head}", entity=entity) from None
        return obj

    def path_value(self, value, field: str, entity: str | None) -> str:
        if not isinstance(value, str) or not value:
            raise self.error(f"expected a file path (string), found {show(value)}", field=field,
                             entity=entity)
        target = resolve_path(self.path, value)
        if not target.is_file():
            raise self.error(f"expected an existing file, found '{value}' (resolved to {target})",
                             field=field, entity=entity)
        return value

    def convert(self, cls: type, raw: dict, prefix: str, entity: str | None = None,
                fields: frozenset[str] | None = None):
        """msgspec validation, with unknown keys caught first, in nested tables too (msgspec
        ignores them for dataclasses), and msgspec's messages rewritten into the one-line form;
        the numbers of ``fields`` only, where given (see validated_copy)."""
        check_decodable(cls)
        # (a live edit's table holds every field; only those of ``fields`` can be new)
        looked_at = raw if fields is None else {k: v for k, v in raw.items() if k in fields}
        # Unknown keys at any depth (a nested table's typo would silently become its default)
        unknown = next(unknown_keys(cls, looked_at, prefix), None)
        if unknown is not None:
            where, key, allowed = unknown
            self.unknown("key", key, allowed, field=where, entity=entity)
        # Every number a field can hold goes to the GPU in 32 bits: refuse nan, inf and what
        # overflows or vanishes there before the class (or its __post_init__) sees it.
        bad = next(bad_numbers(cls, looked_at, prefix), None)
        if bad is not None:
            where, found, problem = bad
            raise self.error(f"{problem}, found {show(found)}", field=where, entity=entity)
        try:
            return msgspec.convert(raw, type=cls, strict=True)
        except msgspec.ValidationError as exc:
            where, message = explain(str(exc), raw, cls)
            raise self.error(message, field=join_path(prefix, where), entity=entity) from None
