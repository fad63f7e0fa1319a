"""Scene files: TOML -> validated dataclasses, and back.

This module holds the Scene a scene file becomes (with SceneSettings and EntitySpec, the tables
it holds, from emberfx.model.scene_parts) and the functions that read, validate and locate
scenes (load_scene, loads_scene, validated_copy, check_references, resolve_scene_path); the
table-by-table checks they run are emberfx.model.loader's SceneLoader, which builds the tables
and leaves the Scene to this module, so the imports point one way (scene -> loader).

A scene file has a ``[scene]`` table (SceneSettings), a ``[camera]`` table
(emberfx.model.camera.Camera) and any number of ``[[entity]]`` tables, each with a ``name``,
an optional ``script`` and one sub-table per component (``[entity.emitter]``, ...). Component
classes are found only through ``emberfx.model.registry``, so adding a system adds a table name
without touching the scene modules.
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
from typing import Any

import msgspec

from emberfx.core.errors import SceneError, read_user_text
from emberfx.model.camera import Camera
from emberfx.model.component_values import checked_alone, plain_builtin, plain_edit, same_builtin
from emberfx.model.components import field_names as component_field_names
from emberfx.model.components import field_values
from emberfx.model.light import Light
from emberfx.model.loader import SceneLoader
from emberfx.model.presets import PRESET_TABLE, merged_document, preset_changes
from emberfx.model.registry import component_types, entity_name_problem
from emberfx.model.render import RenderSettings
from emberfx.model.scene_fields import show, suggest
from emberfx.model.scene_parts import EntitySpec, SceneSettings, resolve_path
from emberfx.model.scene_summary import describe
from emberfx.model.scene_toml import scene_toml

__all__ = ["SceneSettings", "EntitySpec", "Scene", "load_scene", "loads_scene", "describe",
           "resolve_path"]

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
    render: RenderSettings = field(default_factory=RenderSettings)
    """the ``[render]`` table (emberfx.model.render): anti-aliasing"""
    cpu: dict[str, Any] = field(default_factory=dict)
    """the ``[cpu]`` table: what a CPU adapter lowers (emberfx.model.presets)"""

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
                                 + suggest(key, sorted(types), "components"), entity=name)
            built[key] = validated_copy(value, key, entity=name, path=self.path)
        spec = EntitySpec(name, built, script)
        SceneLoader(self.path).references([*self.entities, spec])
        self.entities.append(spec)
        return spec

    def entity(self, name: str) -> EntitySpec:
        for spec in self.entities:
            if spec.name == name:
                return spec
        names = [spec.name for spec in self.entities]
        raise KeyError(f"no entity '{name}'; " + suggest(name, names, "entities"))

    def resolve(self, relative: str | os.PathLike) -> Path:
        """A path written in the scene (script, pattern) as an absolute path."""
        return resolve_path(self.path, relative)

    def to_toml(self) -> str:
        return scene_toml(self)

    def cpu_variant(self) -> tuple[Scene, list[str]]:
        """This scene with its ``[cpu]`` preset applied, and what that changed, one
        'path old -> new' line each ('fire.gas.cell 0.04 -> 0.08'); the scene itself and no
        changes when it has no preset."""
        if not self.cpu:
            return self, []
        doc = tomllib.loads(self.to_toml())
        preset = doc.pop(PRESET_TABLE)
        lowered = merged_document(doc, preset, self.path)
        variant = Scene(**SceneLoader(self.path).scene_fields(lowered))
        return variant, preset_changes(doc, lowered, preset)

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
    return Scene(**SceneLoader(path).scene_fields(doc))


def validate_component(key: str, table: dict, *, entity: str, path=None) -> object:
    """A component from a dict of scene-file fields, validated like a scene file's table."""
    loader = SceneLoader(path)
    return loader.component(key, table, entity)


def validated_copy(value, key: str, *, entity: str | None = None, path=None,
                   since=None, touched: list[str] | None = None,
                   assigned: set[str] | None = None) -> Any:
    """A validated copy of ``value``, an object built or edited in Python (a dataclass's
    __init__ checks only what its __post_init__ does) or a dict of scene-file fields, checked
    like the file's table ``key`` ("scene", "camera" or a component key), nested objects
    included, with the loader's messages. ``since``: a component of the same class that passed
    this check (a live edit's last valid values): the checks of a field alone (32-bit numbers,
    file paths) then look only at the fields whose values differ from it; types and the class's
    own checks still see every field. ``touched``: a list that gets, when the edit's fields were
    checked alone (the class's ``CHECKED_ALONE``), the fields of ``value`` that do not hold
    ``since``'s very objects; the copy and ``value`` hold those objects in every other field
    (it stays empty when the whole component was checked). ``assigned``: with ``since``, the
    only fields of ``value`` set since it held ``since``'s values (a live edit's tracking
    knows them): the others are not compared at all."""
    valid, differing = _validated(value, key, entity, path, since, assigned)
    if touched is not None and differing is not None:
        touched.extend(differing)
    return valid


def _validated(value, key: str, entity: str | None, path, since,
               assigned: set[str] | None = None) -> tuple[Any, list[str] | None]:
    """validated_copy's copy, and the fields that may differ from ``since`` when they were
    checked alone (None otherwise)."""
    settings_tables = {"scene": SceneSettings, "camera": Camera, "light": Light,
                       "render": RenderSettings}
    cls = settings_tables.get(key) or component_types()[key].cls
    fields = None
    loader: SceneLoader | None = None   # made only when the plain edit's shortcut is not taken
    if isinstance(value, cls):
        if isinstance(since, cls) and dataclasses.is_dataclass(since):
            # A field holding the very object ``since`` holds is unchanged (a live component
            # shares its valid values' immutable ones): only the others are converted
            if assigned is not None:   # in field order, as below
                differing = [name for name in component_field_names(cls) if name in assigned
                             and getattr(value, name) is not getattr(since, name)]
            else:
                names, values_of = component_field_names(cls), field_values(cls)
                differing = [name for name, new, held
                             in zip(names, values_of(value), values_of(since)) if new is not held]
            quick = plain_edit(cls, value, since, differing)   # a script's every-step edit
            if quick is not None:
                return quick, differing
            loader = SceneLoader(path)
            edited = _builtins(loader, key, entity, {n: getattr(value, n) for n in differing})
            old = msgspec.to_builtins({n: getattr(since, n) for n in differing},
                                      enc_hook=plain_builtin)
            fields = frozenset(n for n in differing if not same_builtin(old[n], edited[n]))
            if not fields:   # values equal to the valid ones, types included: valid as they are
                return since, differing
            alone = checked_alone(cls, key, edited, since, fields)
            if alone is not None:
                return alone, differing
        loader = loader or SceneLoader(path)
        value = _builtins(loader, key, entity, value)
    elif dataclasses.is_dataclass(value) or isinstance(value, msgspec.Struct):
        raise SceneLoader(path).error(f"expected {cls.__name__}(...) or a table of its fields, "
                                  f"found {type(value).__name__}(...)", field=key, entity=entity)
    loader = loader or SceneLoader(path)
    if cls in (SceneSettings, Camera, Light, RenderSettings):
        return loader.convert(cls, loader.table({key: value}, key), key), None
    return loader.component(key, value, entity, fields), None


def _builtins(loader: SceneLoader, key: str, entity: str | None, value):
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
    SceneLoader(path).references(entities, among)


def _syntax_error(path, exc: tomllib.TOMLDecodeError) -> SceneError:
    # Python 3.11's TOMLDecodeError has no lineno attribute: the position is in the message.
    message = str(exc)
    where = re.search(r"\s*\(at (line \d+, column \d+|end of document)\)$", message)
    position = None
    if where:
        message = message[:where.start()]
        position = where[1].replace("end of document", "end of file")
    return SceneError(path, f"invalid TOML: {message[:1].lower()}{message[1:]}", field=position)
