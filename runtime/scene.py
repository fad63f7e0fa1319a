"""Scene files: TOML -> validated dataclasses, and back.

A scene file has a ``[scene]`` table (SceneSettings), a ``[camera]`` table (emberfx.camera.Camera)
and any number of ``[[entity]]`` tables, each with a ``name``, an optional ``script`` and one
sub-table per component (``[entity.emitter]``, ...). Component classes are found only through
``emberfx.registry``, so adding a system adds a table name without touching this file. Loading never
touches the GPU: ``emberfx validate`` works on a machine without an adapter.

Every mistake raises a SceneError whose text is one line naming the file, the entity, the field
path, what was expected and what was found:

    scenes/x.toml: entity 'fountain': emitter.capacity: expected int >= 1, found 0
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
import re
import tempfile
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import tomli_w

from emberfx.camera import Camera
from emberfx.colors import check_colors
from emberfx.errors import SceneError, read_user_text
from emberfx.registry import component_types

__all__ = ["SceneSettings", "EntitySpec", "Scene", "load_scene", "loads_scene", "describe"]

Pixels = Annotated[int, msgspec.Meta(ge=1, le=16384)]
TOP_LEVEL = ("scene", "camera", "bindings", "entity")
ENTITY_KEYS = ("name", "script")


@dataclass(slots=True)
class SceneSettings:
    """The ``[scene]`` table."""

    name: str = "Untitled"
    seed: Annotated[int, msgspec.Meta(ge=0, lt=2**32)] = 0
    """all randomness derives from it (with entity, slot and frame)"""
    fixed_dt: Annotated[float, msgspec.Meta(gt=0.0, le=1.0)] = 1 / 60
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

    def add(self, name: str, script: str | None = None, **components) -> EntitySpec:
        """Append an entity; each component is a component object or a dict of scene-file fields
        (validated with the same messages as a file)."""
        if any(spec.name == name for spec in self.entities):
            raise SceneError(self.path, f"expected a unique name, found '{name}' again",
                             field="name", entity=name)
        types = component_types()
        built = {}
        for key, value in components.items():
            if key not in types:
                raise SceneError(self.path, f"unknown component '{key}', "
                                 + _suggest(key, sorted(types), "components"), entity=name)
            built[key] = value if isinstance(value, types[key].cls) else validate_component(
                key, value, entity=name, path=self.path)
        spec = EntitySpec(name, built, script)
        self.entities.append(spec)
        _Loader(self.path).references(self.entities)
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
        doc: dict[str, Any] = {"scene": _to_table(self.settings), "camera": _to_table(self.camera)}
        if self.bindings:
            doc["bindings"] = dict(self.bindings)
        if self.entities:
            doc["entity"] = [_entity_table(spec) for spec in self.entities]
        return _compact_arrays(tomli_w.dumps(doc))

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

def load_scene(path: str | os.PathLike) -> Scene:
    """Read and validate a scene file; raises SceneError. Never touches the GPU."""
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
    return _Loader(path).scene(doc)


def path_values(component) -> list[tuple[str, str]]:
    """(field, path as written) for every file the component names in its ``PATH_FIELDS``
    (a field may hold one path or a list of them; unset ones are skipped)."""
    out = []
    for name in getattr(type(component), "PATH_FIELDS", ()):
        value = getattr(component, name, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is not None:
                out.append((name, item))
    return out


def validate_component(key: str, table: dict, *, entity: str, path=None) -> object:
    """A component from a dict of scene-file fields, validated like a scene file's table."""
    loader = _Loader(path)
    return loader.component(key, table, entity)


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
        if settings.script is not None:
            self.path_value(settings.script, "scene.script", None)
        return Scene(settings, camera, entities,
                     Path(os.path.abspath(self.path)) if self.path is not None else None,
                     self.bindings(self.table(doc, "bindings")))

    def bindings(self, table: dict) -> dict[str, str]:
        """``[bindings]``: key name = "event name" (sent to on_event(ctx, name, {"key": key}))."""
        from emberfx.keys import check_binding

        out = {}
        for key, event in table.items():
            problem = check_binding(key)
            if problem:
                raise self.error(problem, field=f"bindings.{key}")
            if not isinstance(event, str) or not event:
                raise self.error(f"expected an event name (a non-empty string), found "
                                 f"{_show(event)}", field=f"bindings.{key}")
            out[key.lower()] = event
        return out

    def references(self, entities: list[EntitySpec]) -> None:
        """Fields that name other entities (a component's ``REFERENCES = {field: (keys...)}``)
        must name an entity that has one of those components."""
        kinds = {e.name: set(e.components) for e in entities}
        for spec in entities:
            for key, comp in spec.components.items():
                for field_name, wanted in getattr(type(comp), "REFERENCES", {}).items():
                    for index, target in enumerate(getattr(comp, field_name) or ()):
                        where = f"{key}.{field_name}[{index}]"
                        if target not in kinds:
                            raise self.error(f"no entity named '{target}'; "
                                             + _suggest(target, kinds, "entity names"),
                                             field=where, entity=spec.name)
                        if not kinds[target] & set(wanted):
                            raise self.error(
                                f"expected an entity with {' or '.join(wanted)}, found "
                                f"'{target}' with {', '.join(sorted(kinds[target])) or 'no components'}",
                                field=where, entity=spec.name)

    def table(self, doc: dict, key: str) -> dict:
        value = doc.get(key, {})
        if not isinstance(value, dict):
            raise self.error(f"expected a table [{key}], found {_show(value)}", field=key)
        return value

    def unknown(self, what: str, key: str, allowed, *, field: str, entity: str | None = None):
        raise self.error(f"unknown {what} '{key}', " + _suggest(key, allowed), field=field,
                         entity=entity)

    def entities(self, value) -> list[EntitySpec]:
        if isinstance(value, dict):  # written [entity] instead of [[entity]]
            raise self.error("expected an array of tables [[entity]], found a single table "
                             "[entity]", field="entity")
        if not isinstance(value, list):
            raise self.error(f"expected an array of tables [[entity]], found {_show(value)}",
                             field="entity")
        seen: dict[str, int] = {}
        return [self.entity(index, raw, seen) for index, raw in enumerate(value)]

    def entity(self, index: int, raw, seen: dict[str, int]) -> EntitySpec:
        where = f"entity[{index}]"  # entities without a usable name are named by position
        if not isinstance(raw, dict):
            raise self.error(f"expected a table, found {_show(raw)}", field=where)
        name = raw.get("name")
        if name is None:
            raise self.error("expected a non-empty string, found nothing (every [[entity]] needs "
                             "a name)", field=f"{where}.name")
        if not isinstance(name, str) or not name.strip():
            raise self.error(f"expected a non-empty string, found {_show(name)}",
                             field=f"{where}.name")
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

    def component(self, key: str, raw, entity: str) -> object:
        if not isinstance(raw, dict):
            raise self.error(f"expected a table [entity.{key}], found {_show(raw)}", field=key,
                             entity=entity)
        cls = self.types[key].cls
        obj = self.convert(cls, raw, key, entity)
        # Fields the class declares as file paths must exist; they stay relative, as written.
        for name, item in path_values(obj):
            self.path_value(item, f"{key}.{name}", entity)
        return obj

    def path_value(self, value, field: str, entity: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.error(f"expected a file path (string), found {_show(value)}", field=field,
                             entity=entity)
        target = _resolve(self.path, value)
        if not target.is_file():
            raise self.error(f"expected an existing file, found '{value}' (resolved to {target})",
                             field=field, entity=entity)
        return value

    def convert(self, cls: type, raw: dict, prefix: str, entity: str | None = None):
        """msgspec validation, with unknown keys caught first (msgspec ignores them for
        dataclasses) and msgspec's messages rewritten into the one-line form."""
        _check_decodable(cls)
        allowed = _field_names(cls)
        for key in raw:
            if key not in allowed:
                self.unknown("key", key, allowed, field=f"{prefix}.{key}", entity=entity)
        try:
            return msgspec.convert(raw, type=cls, strict=True)
        except msgspec.ValidationError as exc:
            where, message = _explain(str(exc), raw, cls)
            raise self.error(message, field=_join(prefix, where), entity=entity) from None


# ------------------------------------------------------------------------ rewriting msgspec errors

_MISSING = object()
_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _explain(text: str, raw: dict, cls: type) -> tuple[str, str]:
    """msgspec's 'Expected `int` >= 1 - at `$.capacity`' -> ('capacity', 'expected int >= 1,
    found 0'), looking the found value up in the raw table along the path."""
    match = _AT.match(text.strip())
    message, where = match["message"], match["path"] or ""
    found = _lookup(raw, where)
    if missing := re.fullmatch(r"Object missing required field `(.+)`", message):
        return _join(where, missing[1]), "expected a value (required), found nothing"
    if enum := re.fullmatch(r"Invalid enum value (.+)", message):
        allowed = _literal_values(cls, where)
        expected = ", ".join(_show(v) for v in allowed) if allowed else "the allowed values"
        return _join(where), f"expected one of {expected}, found {enum[1]}"
    if message.startswith("Expected "):
        expected = re.sub(r", got .*$", "", message[len("Expected "):])
        expected = expected.replace("`object`", "table").replace("`", "")
        suffix = f", found {_show(found)}" if found is not _MISSING else ""
        return _join(where), f"expected {expected}{suffix}"
    # A ValueError from the class's __post_init__; by convention "field: expected ..., found ...".
    head, sep, rest = message.partition(": ")
    if sep and re.fullmatch(r"[A-Za-z_][\w.\[\]]*", head):
        return _join(where, head), rest
    return _join(where), message


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
    hint = _type_hints(cls).get(first[1]) if first and first[1] else None
    found: list = []

    def collect(t):
        if typing.get_origin(t) is Literal:
            found.extend(typing.get_args(t))
        else:
            for arg in typing.get_args(t):
                collect(arg)

    collect(hint)
    return found


def _join(*parts: str) -> str:
    return ".".join(p.strip(".") for p in parts if p and p.strip(".")).replace(".[", "[")


# ------------------------------------------------------------------------------ class introspection

@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
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


def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(name for name, _ in _fields(cls))


@functools.cache
def _type_hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "pattern", "min_length", "max_length", "tz")


@functools.cache
def _check_decodable(cls: type) -> None:
    """msgspec (0.19 to 0.23 at least) corrupts memory -- a segfault or 'free(): invalid pointer',
    even for values that do not use the union -- when one union mixes a constrained member such as
    Annotated[float, Meta(ge=0)] with a fixed-length tuple. That is a bug in the component class,
    so refuse it with a message that says how to fix it instead of crashing the process."""
    hints = _type_hints(cls)
    for name in _field_names(cls):
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


# ------------------------------------------------------------------------------ saving, describing

def _to_table(obj) -> dict:
    """A component (or settings, camera) as a TOML table: every field, None ones left out (TOML
    has no null), tuples as arrays (msgspec turns them back into tuples on load)."""
    values = msgspec.to_builtins(obj)
    return {name: _drop_none(values[name]) for name in _field_names(type(obj))
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


def _show(value, limit: int = 80) -> str:
    """A value as TOML writes it, shortened for one-line messages."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(_show(v, limit) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k} = {_show(v, limit)}" for k, v in value.items()) + "}"
    else:
        text = str(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _suggest(key: str, allowed, what: str = "keys") -> str:
    close = difflib.get_close_matches(key, list(allowed), n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    return f"expected one of: {', '.join(allowed)}" if allowed else f"there are no {what}"


def _resolve(scene_path, relative) -> Path:
    """Relative to the scene file's folder (the working directory for a scene without a file);
    normalised but not symlink-resolved, so messages show the path the user would expect."""
    base = Path(os.path.abspath(scene_path)).parent if scene_path is not None else Path.cwd()
    return Path(os.path.normpath(base / relative))


def _non_defaults(obj) -> list[tuple[str, Any]]:
    return [(name, getattr(obj, name)) for name, default in _fields(type(obj))
            if getattr(obj, name) != default]


_CAMERA_FIELDS = {"perspective": ("position", "target", "fov_deg"),
                  "orthographic": ("center", "height")}


def describe(scene: Scene) -> str:
    """What `emberfx validate SCENE` prints: settings, camera, then each entity with its
    components and the fields that differ from their defaults."""
    s, cam = scene.settings, scene.camera
    lines = [f"scene '{s.name}'" + (f" ({scene.path})" if scene.path else ""),
             f"  size {s.size[0]}x{s.size[1]}, seed {s.seed}, fixed_dt {s.fixed_dt:g} s "
             f"({1.0 / s.fixed_dt:g} steps/s), background {s.background}"]
    shown = list(_CAMERA_FIELDS.get(cam.kind, ()))
    shown += [n for n, _ in _non_defaults(cam) if n in ("up", "near", "far")]
    lines.append(f"  camera {cam.kind}: "
                 + ", ".join(f"{n}={_show(getattr(cam, n))}" for n in shown))
    count = len(scene.entities)
    lines.append(f"  {count} {'entity' if count == 1 else 'entities'}")
    for spec in scene.entities:
        lines.append(f"    {spec.name}" + (f" (script {spec.script})" if spec.script else ""))
        for key, comp in spec.components.items():
            changed = ", ".join(f"{n}={_show(v)}" for n, v in _non_defaults(comp))
            lines.append(f"      {key}: {changed or 'all defaults'}")
    return "\n".join(lines)
