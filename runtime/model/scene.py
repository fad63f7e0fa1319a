"""Scene files: TOML -> validated dataclasses, and back.

A scene file has a ``[scene]`` table (SceneSettings), a ``[camera]`` table
(emberfx.model.camera.Camera) and any number of ``[[entity]]`` tables, each with a ``name``,
an optional ``script`` and one sub-table per component (``[entity.emitter]``, ...). Component
classes are found only through ``emberfx.model.registry``, so adding a system adds a table name
without touching this file.
Loading never touches the GPU: ``emberfx validate`` works on a machine without an adapter.

Every mistake raises a SceneError whose text is one line naming the file, the entity, the field
path, what was expected and what was found:

    scenes/x.toml: entity 'fountain': emitter.capacity: expected int >= 1, found 0

Every number is checked for what it becomes on the GPU (emberfx.model.numbers: nan, inf and floats a
32-bit float cannot hold are refused before a component class sees them), and a component that
names files may check their contents as the engine will (``check_files``: a Life pattern must
parse and fit its grid), so a scene that validates also renders.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec

from emberfx.core.errors import SceneError, read_user_text
from emberfx.model.camera import Camera
from emberfx.model.colors import check_colors
from emberfx.model.component_values import (
    checked_alone,
    field_values,
    path_values,
    plain_builtin,
    reference_value,
    referenced_names,
    same_builtin,
)
from emberfx.model.components import field_names as component_field_names
from emberfx.model.light import Light
from emberfx.model.numbers import bad_numbers
from emberfx.model.registry import component_types, entity_name_problem
from emberfx.model.scene_fields import (
    check_decodable,
    explain,
    field_names,
    join_path,
    show,
)
from emberfx.model.scene_summary import describe

__all__ = ["SceneSettings", "EntitySpec", "Scene", "load_scene", "loads_scene", "describe"]

Pixels = Annotated[int, msgspec.Meta(ge=1, le=16384)]
TOP_LEVEL = ("scene", "camera", "light", "bindings", "entity")
ENTITY_KEYS = ("name", "script")


@dataclass(slots=True)
class SceneSettings:
    """The ``[scene]`` table."""

    name: str = "Untitled"
    seed: Annotated[int, msgspec.Meta(ge=0, lt=2**32)] = 0
    """all randomness derives from it (with entity, slot and frame)"""
    fixed_dt: Annotated[float, msgspec.Meta(
        ge=1e-6, le=1.0,
        description="a step lasts from a microsecond to a second: per-step budgets assume at "
                    "most 1 s")] = 1 / 60
    """seconds per simulation step"""
    size: tuple[Pixels, Pixels] = (1280, 720)
    """default window / render size in pixels: (width, height)"""
    background: str = "#101014"
    """clear colour, '#rrggbb' or '#rrggbbaa'"""
    script: str | None = None
    """a Python file with scene-wide hooks (on_start, on_update, ...), relative to the scene"""

    def __post_init__(self):
        check_colors(self, "background")


@dataclass(slots=True)
class EntitySpec:
    """One ``[[entity]]``: its components in file order, keyed by table name."""

    name: str
    components: dict[str, object]
    script: str | None = None
    """path relative to the scene file, as written"""


@dataclass(slots=True)
class Scene:
    """A whole scene. Built by load_scene from a file, or in Python::

        scene = Scene(SceneSettings(name="demo"), Camera(kind="orthographic"))
        scene.add("jet", emitter={"rate": 500.0, "color": ["#ffd27a", "#ff5a1f"]})
    """

    settings: SceneSettings = field(default_factory=SceneSettings)
    camera: Camera = field(default_factory=Camera)
    entities: list[EntitySpec] = field(default_factory=list)
    path: Path | None = field(default=None, compare=False)
    """the file it came from (absolute); relative paths in the scene resolve against its folder"""
    bindings: dict[str, str] = field(default_factory=dict)
    """the ``[bindings]`` table: key name -> event sent to the scripts' on_event when pressed"""
    light: Light = field(default_factory=Light)
    """the ``[light]`` table (emberfx.model.light)"""

    def add(self, name: str, script: str | None = None, **components) -> EntitySpec:
        """Append an entity; each component is a component object or a dict of scene-file fields
        (validated with the same messages as a file)."""
        if not isinstance(name, str) or not name.strip():
            raise SceneError(self.path, f"expected a non-empty string, found {show(name)}",
                             field="name")
        problem = entity_name_problem(name)
        if problem is not None:
            raise SceneError(self.path, problem, field="name")
        if any(spec.name == name for spec in self.entities):
            raise SceneError(self.path, f"expected a unique name, found '{name}' again",
                             field="name", entity=name)
        types = component_types()
        built = {}
        for key, value in components.items():
            if key not in types:
                raise SceneError(self.path, f"unknown component '{key}', "
                                 + _suggest(key, sorted(types), "components"), entity=name)
            built[key] = validated_copy(value, key, entity=name, path=self.path)
        spec = EntitySpec(name, built, script)
        _Loader(self.path).references([*self.entities, spec])
        self.entities.append(spec)
        return spec

    def entity(self, name: str) -> EntitySpec:
        for spec in self.entities:
            if spec.name == name:
                return spec
        names = [spec.name for spec in self.entities]
        raise KeyError(f"no entity '{name}'; " + _suggest(name, names, "entities"))

    def resolve(self, relative: str | os.PathLike) -> Path:
        """A path written in the scene (script, pattern) as an absolute path."""
        return _resolve(self.path, relative)

    def to_toml(self) -> str:
        from emberfx.model.scene_toml import scene_toml

        return scene_toml(self)

    def save(self, path: str | os.PathLike) -> None:
        """Write atomically: a reader (a hot-reload watcher) never sees a half-written file.
        Relative paths (scripts, patterns) are kept as written, so save next to the original."""
        path = Path(path)
        text = self.to_toml()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


# ----------------------------------------------------------------------------------------- loading

def bundled_scenes() -> dict[str, Path]:
    """The scenes shipped inside emberfx, by name ('fountain' -> .../scenes/fountain.toml)."""
    from importlib import resources

    folder = resources.files("emberfx.scenes")
    return {entry.name[:-len(".toml")]: Path(str(entry)) for entry in folder.iterdir()
            if entry.name.endswith(".toml") and entry.is_file()}


def resolve_scene_path(text: str) -> Path:
    """A scene argument: a file path; where no such file exists, a bare name with or without
    .toml ('fountain', 'fountain.toml') names a scene bundled with emberfx, from any folder."""
    path = Path(text)
    if path.is_file():
        return path
    if path.is_dir():
        raise SceneError(path, "expected a scene file, found a directory")
    if path.exists():   # a FIFO or a device would block or never end
        raise SceneError(path, "expected a regular scene file, found a special file")
    if path.parent != Path(".") or path.suffix not in ("", ".toml"):
        return path   # never a bundled name: reading it says what is missing
    bundled = bundled_scenes()
    name = path.name[:-len(".toml")] if path.suffix == ".toml" else path.name
    if name in bundled:
        return bundled[name]
    close = difflib.get_close_matches(name, bundled, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise SceneError(path, f"no such scene file (bundled scenes, named without a folder: "
                           f"{', '.join(sorted(bundled))}){hint}")


def load_scene(path: str | os.PathLike) -> Scene:
    """Read and validate a scene file (or a bundled scene by name, see resolve_scene_path);
    raises SceneError. Never touches the GPU."""
    path = resolve_scene_path(os.fspath(path))
    label = os.fspath(path)
    text = read_user_text(path, "scene", lambda message, line, _column: SceneError(
        label, message, field=None if line is None else f"line {line}"))
    return loads_scene(text, path=path)


def loads_scene(text: str, path: str | os.PathLike | None = None) -> Scene:
    """Validate a scene from a string; ``path`` names it in messages and anchors relative paths."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(path, exc) from None
    except RecursionError:   # tomllib parses nested arrays and inline tables recursively
        raise SceneError(path, "invalid TOML: expected arrays and inline tables nested at most a "
                               "few hundred levels deep, found deeper nesting") from None
    return _Loader(path).scene(doc)


def validate_component(key: str, table: dict, *, entity: str, path=None) -> object:
    """A component from a dict of scene-file fields, validated like a scene file's table."""
    loader = _Loader(path)
    return loader.component(key, table, entity)


def validated_copy(value, key: str, *, entity: str | None = None, path=None,
                   since=None, touched: list[str] | None = None) -> Any:
    """A validated copy of ``value``, an object built or edited in Python (a dataclass's
    __init__ checks only what its __post_init__ does) or a dict of scene-file fields, checked
    like the file's table ``key`` ("scene", "camera" or a component key), nested objects
    included, with the loader's messages. ``since``: a component of the same class that passed
    this check (a live edit's last valid values): the checks of a field alone (32-bit numbers,
    file paths) then look only at the fields whose values differ from it; types and the class's
    own checks still see every field. ``touched``: a list that gets, when the edit's fields were
    checked alone (the class's ``CHECKED_ALONE``), the fields of ``value`` that do not hold
    ``since``'s very objects; the copy and ``value`` hold those objects in every other field
    (it stays empty when the whole component was checked)."""
    valid, differing = _validated(value, key, entity, path, since)
    if touched is not None and differing is not None:
        touched.extend(differing)
    return valid


def _validated(value, key: str, entity: str | None, path,
               since) -> tuple[Any, list[str] | None]:
    """validated_copy's copy, and the fields that may differ from ``since`` when they were
    checked alone (None otherwise)."""
    loader = _Loader(path)
    settings_tables = {"scene": SceneSettings, "camera": Camera, "light": Light}
    cls = settings_tables.get(key) or loader.types[key].cls
    fields = None
    if isinstance(value, cls):
        if isinstance(since, cls) and dataclasses.is_dataclass(since):
            # A field holding the very object ``since`` holds is unchanged (a live component
            # shares its valid values' immutable ones): only the others are converted
            names, values_of = component_field_names(cls), field_values(cls)
            differing = [name for name, new, held in zip(names, values_of(value), values_of(since))
                         if new is not held]
            edited = _builtins(loader, key, entity, {n: getattr(value, n) for n in differing})
            old = msgspec.to_builtins({n: getattr(since, n) for n in differing},
                                      enc_hook=plain_builtin)
            fields = frozenset(n for n in differing if not same_builtin(old[n], edited[n]))
            alone = checked_alone(cls, key, edited, since, fields)
            if alone is not None:
                return alone, differing
        value = _builtins(loader, key, entity, value)
    elif dataclasses.is_dataclass(value) or isinstance(value, msgspec.Struct):
        raise loader.error(f"expected {cls.__name__}(...) or a table of its fields, found "
                           f"{type(value).__name__}(...)", field=key, entity=entity)
    if cls in (SceneSettings, Camera, Light):
        return loader.convert(cls, loader.table({key: value}, key), key), None
    return loader.component(key, value, entity, fields), None


def _builtins(loader: _Loader, key: str, entity: str | None, value):
    """``value`` (an object built or edited in Python, or a dict of its fields) as TOML
    builtins, or the loader's error for what has no TOML type."""
    try:
        return msgspec.to_builtins(value, enc_hook=plain_builtin)
    except TypeError as exc:
        raise loader.error(f"expected numbers, strings, lists and tables, found {exc}",
                           field=key, entity=entity) from None


def check_references(entities: list[EntitySpec], among: list[EntitySpec] | None = None,
                     path=None) -> None:
    """The fields of ``entities`` that name other entities (``REFERENCES``) must name one of
    ``among`` (default: ``entities`` themselves) that has a wanted component."""
    _Loader(path).references(entities, among)


def _syntax_error(path, exc: tomllib.TOMLDecodeError) -> SceneError:
    # Python 3.11's TOMLDecodeError has no lineno attribute: the position is in the message.
    message = str(exc)
    where = re.search(r"\s*\(at (line \d+, column \d+|end of document)\)$", message)
    position = None
    if where:
        message = message[:where.start()]
        position = where[1].replace("end of document", "end of file")
    return SceneError(path, f"invalid TOML: {message[:1].lower()}{message[1:]}", field=position)


class _Loader:
    """Validates one parsed document; remembers the file for messages and relative paths."""

    def __init__(self, path):
        self.path = path
        self.types = component_types()

    def error(self, message: str, *, field: str | None = None, entity: str | None = None):
        return SceneError(self.path, message.replace("\n", " "), entity=entity, field=field)

    def scene(self, doc: dict) -> Scene:
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
        return Scene(settings, camera, entities,
                     Path(os.path.abspath(self.path)) if self.path is not None else None,
                     self.bindings(self.table(doc, "bindings")),
                     self.convert(Light, self.table(doc, "light"), "light"))

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
        from emberfx.app.keys import check_binding

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
                                             + _suggest(target, kinds, "entity names"),
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
        raise self.error(f"unknown {what} '{key}', " + _suggest(key, allowed), field=field,
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
            if fields is None or name in fields:
                self.path_value(item, f"{key}.{name}", entity)
        # A class that reads its files (a Life pattern) checks their contents as the engine
        # will; by convention its ValueError reads "field: expected ..., found ...".
        if hasattr(obj, "check_files"):
            try:
                obj.check_files(lambda relative: _resolve(self.path, relative))
            except ValueError as exc:
                head, _, rest = str(exc).partition(": ")
                raise self.error(rest, field=f"{key}.{head}", entity=entity) from None
        return obj

    def path_value(self, value, field: str, entity: str | None) -> str:
        if not isinstance(value, str) or not value:
            raise self.error(f"expected a file path (string), found {show(value)}", field=field,
                             entity=entity)
        target = _resolve(self.path, value)
        if not target.is_file():
            raise self.error(f"expected an existing file, found '{value}' (resolved to {target})",
                             field=field, entity=entity)
        return value

    def convert(self, cls: type, raw: dict, prefix: str, entity: str | None = None,
                fields: frozenset[str] | None = None):
        """msgspec validation, with unknown keys caught first (msgspec ignores them for
        dataclasses) and msgspec's messages rewritten into the one-line form; the numbers of
        ``fields`` only, where given (see validated_copy)."""
        check_decodable(cls)
        allowed = field_names(cls)
        for key in raw:
            if key not in allowed:
                self.unknown("key", key, allowed, field=f"{prefix}.{key}", entity=entity)
        # Every number a field can hold goes to the GPU in 32 bits: refuse nan, inf and what
        # overflows or vanishes there before the class (or its __post_init__) sees it.
        numbers = raw if fields is None else {k: v for k, v in raw.items() if k in fields}
        bad = next(bad_numbers(cls, numbers, prefix), None)
        if bad is not None:
            where, found, problem = bad
            raise self.error(f"{problem}, found {show(found)}", field=where, entity=entity)
        try:
            return msgspec.convert(raw, type=cls, strict=True)
        except msgspec.ValidationError as exc:
            where, message = explain(str(exc), raw, cls)
            raise self.error(message, field=join_path(prefix, where), entity=entity) from None


def _suggest(key: str, allowed, what: str = "keys") -> str:
    close = difflib.get_close_matches(str(key), [str(a) for a in allowed], n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    return f"expected one of: {', '.join(allowed)}" if allowed else f"there are no {what}"


def _resolve(scene_path, relative) -> Path:
    """Relative to the scene file's folder (the working directory for a scene without a file);
    normalised but not symlink-resolved, so messages show the path the user would expect."""
    base = Path(os.path.abspath(scene_path)).parent if scene_path is not None else Path.cwd()
    return Path(os.path.normpath(base / relative))
