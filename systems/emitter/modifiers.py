"""Programmable particles: an emitter's WGSL modifiers (``init``, ``update``, ``color`` files),
custom attributes and expression fields, turned into specialised copies of its passes.

The built-in passes (emitter/update.wgsl, spawn.wgsl, billboard.wgsl) call hooks declared in
emitter/modifiers.wgsl, whose defaults do nothing. For an emitter that programs something, this
module puts the hooks, written again (modifier_code.py), around the user's code, registers that
text with the WGSL loader (wgsl.register: the user's lines keep their file names and line
numbers, so compile errors point at them) and derives each pass with the include swapped
(wgsl.derive). Sources are named after a hash of their text, so emitters with identical
modifiers share shaders and pipelines, and the struct layout of the attributes comes from the
generated WGSL (layout.struct_dtype).

An emitter that carries a colour per particle (systems/emitter/color.py) gets `color` in
ParticleState and the colour's bindings in the same generated code.

Checks that need no GPU (attribute names and types, function signatures, the shape of an
expression) run when the scene loads (component.py); the compile runs when the pool is made or
reprogrammed, and its errors are SceneErrors naming the field.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from emberfx.core import shader_cache, wgsl
from emberfx.core.errors import SceneError, ShaderError, read_user_text
from emberfx.core.layout import struct_dtype
from emberfx.core.wgsl_bounds import BoundError, check_wgsl_bounds
from emberfx.systems.emitter import color as particle_color
from emberfx.systems.emitter import features
from emberfx.systems.emitter.attributes import attributes_problem
from emberfx.systems.emitter.expression_ranges import bounded_return
from emberfx.systems.emitter.expressions import EXPRESSION_FIELDS, expression_problem, expressions
from emberfx.systems.emitter.looks import DRAW, DRAW_SOFT
from emberfx.systems.emitter.modifier_code import Hooks
from emberfx.systems.emitter.shader_names import BIRTHS, SPAWN, UPDATE, UPDATE_RANKED

MODIFIER_FIELDS = ("init", "update", "color")
SIGNATURES = {
    "init": "fn init(p: ptr<function, ParticleState>, ctx: ModifierContext)",
    "update": "fn update(p: ptr<function, ParticleState>, ctx: ModifierContext)",
    "color": "fn color(p: ParticleState, ctx: ModifierContext) -> vec4f",
}
_PTR = r"ptr\s*<\s*function\s*,\s*ParticleState\s*>"
_ARGS = r"\(\s*\w+\s*:\s*{state}\s*,\s*\w+\s*:\s*ModifierContext\s*,?\s*\)"
_SIGNATURE_RE = {
    "init": re.compile(r"fn\s+init\s*" + _ARGS.format(state=_PTR) + r"\s*\{"),
    "update": re.compile(r"fn\s+update\s*" + _ARGS.format(state=_PTR) + r"\s*\{"),
    "color": re.compile(r"fn\s+color\s*" + _ARGS.format(state="ParticleState")
                        + r"\s*->\s*(?:vec4f|vec4\s*<\s*f32\s*>)\s*\{"),
}
GENERATED = "emitter modifiers (generated)"   # the origin of generated lines in messages
# bytes of the generated structs user code may hold in arrays (without custom attributes: the
# least they take), for wgsl_bounds' count of array bytes
GENERATED_SIZES = {"ParticleState": 48, "ModifierContext": 96}
# (kind, base pass): the built-in passes that run an emitter's generated code
_PASSES = (("update", UPDATE), ("update", UPDATE_RANKED), ("spawn", SPAWN), ("spawn", BIRTHS))
# the passes of the one-pass step only (not derived for an emitter the one-pass step never runs)
ONE_PASS_SHADERS = (UPDATE_RANKED, BIRTHS)
# where a pass's generated code binds `attributes`: group 1, unless the pass uses group 1 itself
ATTRIBUTE_GROUPS = {UPDATE_RANKED: 2}
_DRAWS = (DRAW, DRAW_SOFT)


def is_modifier_file(value) -> bool:
    """A string field naming a WGSL file (``color = "heat.wgsl"``)."""
    return isinstance(value, str) and value.strip().lower().endswith(".wgsl")


def modifier_files(component) -> dict[str, str]:
    """Field -> file as written, for the modifier files an emitter names."""
    found = {f: getattr(component, f) for f in ("init", "update") if getattr(component, f)}
    if is_modifier_file(component.color):
        found["color"] = component.color
    return found


def program_key(component) -> tuple:
    """What the emitter's generated code depends on among its field values (file contents are
    read again when the entity is rebuilt, e.g. when a watched file changes)."""
    return (tuple(modifier_files(component).items()), tuple(expressions(component).items()),
            tuple(component.attributes.items()))


def read_modifier(field: str, path: Path) -> str:
    """The text of a modifier file, checked to declare its function with the expected
    signature; ValueError "field: ..." otherwise."""
    def error(message, line, column):
        return ValueError(f"{field}: {message} ({path})")

    text = read_user_text(path, "WGSL", error)
    try:   # before anything compiles it: past these the compiler crashes or hangs
        check_wgsl_bounds(text, GENERATED_SIZES)
    except BoundError as exc:
        where = f"line {exc.line} of {path}" if exc.line is not None else str(path)
        raise ValueError(f"{field}: {exc.message} ({where})") from None
    code = re.sub(r"/\*.*?\*/", " ", re.sub(r"//[^\n]*", "", text), flags=re.S)
    if _SIGNATURE_RE[field].search(code):
        return text
    found = re.search(rf"fn\s+{field}\b[^{{]*", code)
    if found:
        shown = " ".join(found.group(0).split())
        what = f"`{shown}`"
    else:
        names = re.findall(r"\bfn\s+(\w+)", code)
        what = f"no fn {field} (it declares {', '.join(names) or 'no functions'})"
    raise ValueError(f"{field}: expected `{SIGNATURES[field]}` in {path}, found {what}")


def check_modifier_files(component, resolve) -> None:
    """The scene loader's check: each modifier file reads and declares its function."""
    for field, relative in modifier_files(component).items():
        read_modifier(field, resolve(relative))


@dataclass(frozen=True)
class _Part:
    label: str                     # origin shown in messages: a path or "expression emitter.x"
    field: str                     # the component field it came from
    lines: tuple[str, ...]
    text: str = ""                 # expressions: as written


class Program:
    """One emitter's generated code: the specialised pass shaders and what they bind."""

    def __init__(self, component, resolve, entity: str, scene_path=None,
                 inherited_color: bool = False):
        self.key = program_key(component)
        self.component = component   # (what its features' bindings are asked of)
        self.entity, self.scene_path = entity, scene_path
        self.attributes = dict(component.attributes)
        self.parts: dict[str, _Part] = {}
        for field, relative in modifier_files(component).items():
            path = resolve(relative)
            try:
                text = read_modifier(field, path)
            except ValueError as exc:
                raise self._error(field, str(exc).partition(": ")[2]) from None
            self.parts[field] = _Part(str(path), field, tuple(text.splitlines()))
        for field, text in expressions(component).items():
            self.parts[field] = _Part(f"expression emitter.{field}", field, (text.strip(),),
                                      text.strip())
        # a colour per particle: `.color` in init or update, or an inheriting link into it
        self.color = inherited_color or particle_color.uses_color(
            "\n".join(self.parts[f].lines) for f in ("init", "update") if f in self.parts)
        self.dtype: np.dtype | None = None
        self._attributes_source = None
        if self.attributes:
            members = "".join(f"    {n}: {t},\n" for n, t in self.attributes.items())
            text = f"struct ParticleAttributes {{\n{members}}};\n"
            self._attributes_source = wgsl.register(f"emitter/attributes+{_digest(text)}.wgsl",
                                                    text)
            self.dtype = struct_dtype(self._attributes_source, "ParticleAttributes")
        # the WGSL text around the user's code (modifier_code.py)
        self._hooks = Hooks(self.attributes, self.color, self.parts, self._attributes_source,
                            neighbours=component.neighbour_radius > 0.0)
        self.shaders: dict[str, str] = {}   # base pass shader -> derived one
        # what the emitter's features swap into each pass (emitter/features.py), kept in the
        # derived passes beside the generated code
        self.feature_includes = {base: features.includes(component, base)
                                 for _, base in _PASSES}
        self._registered: list[str] = [self._attributes_source] if self._attributes_source else []
        roles = {"update": self.attributes or self.color
                 or self._has("init", "speed", "lifetime", "update"),
                 "spawn": self.attributes or self.color or self._has("init", "speed", "lifetime"),
                 "draw": self.color or self._has("color", "size")}
        one_pass = features.one_pass(component)
        for kind, base in [*_PASSES, *(("draw", d) for d in _DRAWS)]:
            if roles[kind] and (one_pass or base not in ONE_PASS_SHADERS):
                self.shaders[base] = self._derive(kind, base)
        # cached, with what is compiled from them, while this object lives (and for a while
        # after among the idle programs: core/shader_cache.py)
        if self._registered:
            shader_cache.hold(self, self._registered)

    @property
    def empty(self) -> bool:
        return not self.shaders

    def _has(self, *fields: str) -> bool:
        return any(f in self.parts for f in fields)

    def shader(self, base: str) -> str:
        """The shader the pass ``base`` runs for this emitter."""
        return self.shaders.get(base, base)

    def bindings(self, base: str, buffers: dict) -> dict:
        """Bindings the generated code of pass ``base`` adds (from the pool's buffers)."""
        if base not in self.shaders:
            return {}
        return features.program_bindings(self.component, self, base, buffers)

    def compiled(self, device) -> Program:
        """Itself, with every derived shader compiled now, so a mistake is a SceneError naming
        the field before anything of the running emitter changes."""
        for shader in dict.fromkeys(self.shaders.values()):
            try:
                wgsl.create_module(device, shader)
            except ShaderError as exc:
                raise self._compile_error(str(exc)) from None
        return self

    def _compile_error(self, message: str) -> SceneError:
        for part in self.parts.values():
            where = re.search(re.escape(part.label) + r":(\d+):(\d+): (.*)", message)
            if where is None:
                continue
            line, column, rest = where.groups()
            detail, _, code = re.sub(r"^Shader '[^']*' ", "", rest).partition(" | ")
            if part.text:
                return self._error(part.field, f"WGSL error at column {column}: {detail} in "
                                               f"expression '{part.text}'")
            return self._error(part.field, f"WGSL error at {part.label}:{line}:{column}: "
                                           f"{detail} | {code}")
        fields = ", ".join(f"emitter.{f}" for f in self.parts) or "emitter.attributes"
        return self._error(next(iter(self.parts), "attributes"),
                           f"WGSL error in the code generated for {fields}: {message}")

    def _error(self, field: str, message: str) -> SceneError:
        return SceneError(self.scene_path, message, entity=self.entity, field=f"emitter.{field}")

    # generation ---------------------------------------------------------------------------
    def _derive(self, kind: str, base: str) -> str:
        lines: list[tuple[str, tuple[str, int]]] = []
        generated = 0

        def emit(*texts: str) -> None:
            nonlocal generated
            for text in texts:
                for line in text.splitlines() or [""]:
                    generated += 1
                    lines.append((line, (GENERATED, generated)))

        emit(*self._hooks.common(kind, ATTRIBUTE_GROUPS.get(base, 1)))
        if self.color:
            access = "read" if kind == "draw" else "read_write"
            emit(*particle_color.declarations(base, ATTRIBUTE_GROUPS.get(base, 1), access),
                 *particle_color.birth_color(base))
        if kind in ("update", "spawn"):
            emit(*self._hooks.births())
        if kind == "update":
            emit(*self._hooks.update())
            if self._hooks.neighbours:
                emit(*self._hooks.neighbour_reads())
        if kind == "draw":
            emit(*self._hooks.draw())
        for field in self._hooks.functions_of(kind):
            part = self.parts[field]
            if part.text:   # an expression: its own line, at column 1 of its origin
                opening, closing = bounded_return(field)   # clamped to the field's range
                emit(f"fn expression_{field}(p: ParticleState, ctx: ModifierContext) -> f32 {{",
                     *self._hooks.scope(), opening)
                lines.append((part.lines[0], (part.label, 1)))
                emit(closing, "}")
            else:
                lines += [(text, (part.label, n)) for n, text in enumerate(part.lines, 1)]
        text = "\n".join(t for t, _ in lines) + "\n"
        origins = [o for _, o in lines]
        digest = _digest(text + repr(origins))
        include = wgsl.register(f"emitter/modifiers+{digest}.wgsl", text, origins)
        stem = base.removesuffix(".wgsl")
        swaps = {"emitter/modifiers.wgsl": include, **self.feature_includes.get(base, {})}
        derived = wgsl.derive(f"{stem}+{_digest(repr(sorted(swaps.items())))}.wgsl", base,
                              swaps)
        self._registered += [include, derived]
        return derived


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def layout_signature(component, resolve) -> tuple:
    """What the emitter's buffers and textures were made from: a copy of the component and the
    times of the texture and mesh files it reads (compare with ``only_program_changed``)."""
    return (copy.deepcopy(component), _file_stamps(component, resolve))


def only_program_changed(layout: tuple, component, resolve) -> bool:
    """Whether a rebuild of ``component``, made as ``layout`` says, needs no more than new
    programs: no rebuild-class field but `init` and `update` changed, nor a texture or mesh file.
    Then a rebuild recompiles and keeps the particles."""
    from emberfx.model.components import Change, changed_between

    built, stamps = layout
    same_files = dataclasses.replace(component, init=built.init, update=built.update)
    return (changed_between(type(component), built, same_files) is not Change.REBUILD
            and _file_stamps(component, resolve) == stamps)


def _file_stamps(component, resolve) -> tuple:
    stamps = []
    for value in (component.texture, component.mesh):
        try:
            stamps.append(resolve(value).stat().st_mtime_ns if value and resolve else None)
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def modifier_problem(component) -> str | None:
    """Why the emitter's expressions, attributes or colour modifier cannot be, as "field: why"
    (the component's own check, no GPU), or None."""
    for name in EXPRESSION_FIELDS:
        value = getattr(component, name)
        if isinstance(value, str):
            problem = expression_problem(value)
            if problem is not None:
                return f"{name}: {problem}"
            try:   # its size, before anything compiles it (wgsl_bounds)
                check_wgsl_bounds(value, GENERATED_SIZES)
            except BoundError as exc:
                return f"{name}: {exc.message} in the WGSL expression"
    problem = attributes_problem(component.attributes)
    if problem is not None:
        return problem
    if component.mesh is not None:
        for name, used in (("size", isinstance(component.size, str)),
                           ("color", is_modifier_file(component.color))):
            if used:
                return (f"{name}: expected a number (size) or colours (color) for mesh "
                        f"particles, found '{getattr(component, name)}' (expressions and colour "
                        f"modifiers apply to sprites)")
    return None

