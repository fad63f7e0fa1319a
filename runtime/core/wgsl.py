"""WGSL loading: files from shaders/ (inside the package), a small include mechanism, caching, and
compile errors that name the file and line.

Includes are a comment so every file stays valid WGSL text on its own::

    //! include common/random.wgsl

An include is expanded once per shader (later repeats are dropped). Each expanded line remembers
the file and line it came from, so a compiler error at "wgsl:57:3" is reported as
"emitter/update.wgsl:12:3".

Sources may also live in memory (``register``): generated code such as an emitter's modifiers,
whose lines carry the user's own file names and line numbers, and ``derive``d copies of a
package shader with some of its includes swapped for such sources. Both are immutable (a name
is registered once, so every cache keyed by name stays right): name them after their content.
Every cache here is keyed by shader name (core/shader_cache.py), so a generated program nothing
uses any more can be forgotten, its sources, modules and what was made from them.
"""

from __future__ import annotations

import ast
import functools
import importlib.resources
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from emberfx.core.errors import ShaderError
from emberfx.core.shader_cache import shader_cache

_INCLUDE = re.compile(r"^\s*//!\s*include\s+(\S+)\s*$")
_LOCATION = re.compile(r"wgsl:(\d+):(\d+)")


@dataclass(frozen=True)
class ShaderSource:
    name: str                            # e.g. "emitter/update.wgsl"
    code: str                            # with includes expanded
    origins: tuple[tuple[str, int], ...]  # per line of code: (file, line in that file), 1-based

    def origin(self, line: int) -> tuple[str, int]:
        if 1 <= line <= len(self.origins):
            return self.origins[line - 1]
        return (self.name, line)


@dataclass(frozen=True)
class _Virtual:
    text: str | None                                  # None: ``base`` with includes swapped
    origins: tuple[tuple[str, int], ...] | None       # per line of text; None: (name, line)
    base: str | None = None
    includes: tuple[tuple[str, str], ...] = ()        # (include as written, replacement)


_VIRTUAL: dict[str, _Virtual] = shader_cache()


def _by_shader(function):
    """functools.cache for a function whose first argument is a shader name, in a
    shader_cache (so forgetting the name drops its entries)."""
    cache = shader_cache()

    @functools.wraps(function)
    def cached(*args, **kwargs):
        key = args + tuple(sorted(kwargs.items()))
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = function(*args, **kwargs)
            return value
    cached.cache_clear = cache.clear   # type: ignore[attr-defined]
    return cached
_SHOWN_AS_IS: set[str] = set()   # origin files named by register(): user paths, not shaders/


def _put(name: str, source: _Virtual) -> None:
    known = _VIRTUAL.get(name)
    if known is not None and known != source:
        raise ShaderError(f"shader source {name!r} is already registered with other contents "
                          "(in-memory sources are immutable: name them after their content)")
    _VIRTUAL[name] = source


def register(name: str, text: str, origins=None) -> str:
    """Make ``text`` loadable as shader ``name`` (includes expand as in files). ``origins``:
    (file, line) per line of ``text``, the names compile errors show for those lines (shown as
    given, e.g. a user's path); without it, lines are (name, line)."""
    lines = text.splitlines()
    if origins is not None:
        origins = tuple((str(f), int(n)) for f, n in origins)
        if len(origins) != len(lines):
            raise ShaderError(f"shader source {name!r}: {len(lines)} lines but "
                              f"{len(origins)} origins")
        _SHOWN_AS_IS.update(f for f, _ in origins)
    _put(name, _Virtual(text, origins))
    return name


def derive(name: str, base: str, includes: dict[str, str]) -> str:
    """Make shader ``name`` load as shaders/``base`` with each ``//! include A`` (at any depth)
    read as ``//! include includes[A]``: a pass specialised by swapping one of its parts."""
    _put(name, _Virtual(None, None, base, tuple(sorted(includes.items()))))
    return name


def shown(file: str) -> str:
    """How messages name a file of an origin: shaders/<file> for the package's own."""
    return file if file in _SHOWN_AS_IS else f"shaders/{file}"


def read_text(name: str) -> str:
    """A WGSL file from the shaders package, by its path relative to shaders/ (or a source
    given to register)."""
    virtual = _VIRTUAL.get(name)
    if virtual is not None and virtual.text is not None:
        return virtual.text
    path = importlib.resources.files("emberfx.shaders").joinpath(*name.split("/"))
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ShaderError(f"shader file not found: shaders/{name}") from None


@_by_shader
def load(name: str) -> ShaderSource:
    lines: list[str] = []
    origins: list[tuple[str, int]] = []
    seen: set[str] = set()
    root = _VIRTUAL.get(name)
    swapped = dict(root.includes) if root is not None else {}

    def expand(file: str, chain: tuple[str, ...]) -> None:
        seen.add(file)
        virtual = _VIRTUAL.get(file)
        given = virtual.origins if virtual is not None else None
        for number, text in enumerate(read_text(file).splitlines(), start=1):
            m = _INCLUDE.match(text)
            if m:
                target = swapped.get(m.group(1), m.group(1))
                if target in chain + (file,):
                    raise ShaderError(f"{shown(file)}:{number}: include cycle "
                                      f"{' -> '.join(chain + (file, target))}")
                if target not in seen:
                    expand(target, chain + (file,))
                continue
            lines.append(text)
            origins.append(given[number - 1] if given is not None else (file, number))

    expand(root.base if root is not None and root.base is not None else name, ())
    return ShaderSource(name, "\n".join(lines) + "\n", tuple(origins))


def explain_compile_error(source: ShaderSource, message: str) -> str:
    """Rewrite naga's "wgsl:LINE:COL" locations to "file.wgsl:line:col" and keep the gist."""
    def relocate(m: re.Match) -> str:
        file, line = source.origin(int(m.group(1)))
        return f"{shown(file)}:{line}:{m.group(2)}"

    text = _LOCATION.sub(relocate, message)
    first = next((line.strip() for line in text.splitlines()
                  if "error" in line.lower() and "Caused" not in line
                  and "Validation Error" not in line), "")
    where = _LOCATION.search(message)
    snippet = ""
    if where:
        file, line = source.origin(int(where.group(1)))
        code_line = source.code.splitlines()[int(where.group(1)) - 1].strip()
        snippet = f"{shown(file)}:{line}:{where.group(2)}: "
        return f"{snippet}{first} | {code_line}"
    return f"shaders/{source.name}: {first or text.strip()}"


def create_module(device, name: str):
    """A compiled shader module for ``device`` (cached per device and file)."""
    key = (name, id(device))
    module = _MODULES.get(key)
    if module is None:
        source = load(name)
        try:
            module = device.create_shader_module(label=name, code=source.code)
        except Exception as exc:  # wgpu raises GPUValidationError with naga's report
            raise ShaderError(explain_compile_error(source, str(exc))) from None
        _MODULES[key] = module
    return module


_MODULES: dict[tuple[str, int], object] = shader_cache()   # (name, device id) -> module


# Module-scope constants and workgroup sizes, so the host reads numbers the WGSL owns instead of
# typing them again. Values may be literals (hex, exponents, u/i/f/h suffixes, true/false) or
# integer/float arithmetic over earlier consts; anything else is reported when it is asked for.

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//[^\n]*")
_CONST = re.compile(r"\bconst\s+(\w+)\s*(?::\s*([\w<>]+)\s*)?=\s*([^;]*);")
_ENTRY = re.compile(r"((?:@\w+\s*(?:\([^)]*\))?\s*)+)fn\s+(\w+)")
_WORKGROUP_SIZE = re.compile(r"@workgroup_size\s*\(([^)]*)\)")
_TOKEN = re.compile(r"\s*(?:(?P<float>(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fh]?"
                    r"|[0-9]+[eE][+-]?[0-9]+[fh]?|[0-9]+[fh](?![\w]))"
                    r"|(?P<int>0[xX][0-9a-fA-F]+[iu]?|[0-9]+[iu]?)(?![\w.])"
                    r"|(?P<name>[A-Za-z_]\w*)|(?P<op><<|>>|[-+*/%()|&^~]))")
_INTEGER_TYPES = {"u32": (0, 2**32 - 1), "i32": (-2**31, 2**31 - 1)}


def _module_scope(code: str) -> str:
    """``code`` without comments and with everything inside braces blanked, so only module-scope
    declarations remain (function-local consts are not the host's business)."""
    code = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub(" ", code))
    out, depth = [], 0
    for ch in code:
        if ch == "{":
            depth += 1
        out.append(ch if depth == 0 or ch == "\n" else " ")
        if ch == "}":
            depth = max(0, depth - 1)
    return "".join(out)


def _evaluate(text: str, known: dict[str, int | float | bool]) -> int | float | bool:
    """A WGSL constant expression of literals, known consts and + - * / % << >> | & ^ ~ ( )."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    pieces, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read {text[pos:].strip()!r}")
        pos = m.end()
        if m.group("float"):
            pieces.append(repr(float(m.group("float").rstrip("fh"))))
        elif m.group("int"):
            digits = m.group("int").rstrip("iu")
            pieces.append(str(int(digits, 16 if digits[:2] in ("0x", "0X") else 10)))
        elif m.group("name"):
            value = known.get(m.group("name"))
            if value is None or isinstance(value, bool):
                raise ValueError(f"{m.group('name')!r} is not an earlier numeric const")
            pieces.append(repr(value))
        else:
            pieces.append(m.group("op"))
    expression = " ".join(pieces)
    if not any(p[0].isdigit() and ("." in p or "e" in p) for p in pieces):
        expression = expression.replace("/", "//")   # integer division truncates in WGSL
    try:
        return _arithmetic(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ArithmeticError, TypeError) as exc:
        raise ValueError(f"cannot evaluate {text!r} ({exc})") from None


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_, ast.BitXor: operator.xor}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}


def _arithmetic(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_arithmetic(node.left), _arithmetic(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_arithmetic(node.operand))
    raise TypeError("not an arithmetic expression")


def _typed(value, wgsl_type: str | None):
    if wgsl_type in _INTEGER_TYPES:
        low, high = _INTEGER_TYPES[wgsl_type]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"expected a {wgsl_type}, found {value!r}")
    elif wgsl_type in ("f32", "f16"):
        if isinstance(value, bool):
            raise ValueError(f"expected a {wgsl_type}, found {value!r}")
        value = float(value)
    elif wgsl_type == "bool" and not isinstance(value, bool):
        raise ValueError(f"expected a bool, found {value!r}")
    return value


@_by_shader
def _declared_constants(name: str) -> dict[str, int | float | bool | ValueError]:
    """Each module-scope const of shaders/``name`` (includes expanded): its value, or the reason
    it could not be read."""
    found: dict[str, int | float | bool | ValueError] = {}
    for m in _CONST.finditer(_module_scope(load(name).code)):
        const, wgsl_type, text = m.groups()
        try:
            readable = {k: v for k, v in found.items() if not isinstance(v, ValueError)}
            found[const] = _typed(_evaluate(text, readable), wgsl_type)
        except ValueError as exc:
            found[const] = ValueError(f"const {const} = {' '.join(text.split())}: {exc}")
    return found


def constants(name: str) -> dict[str, int | float | bool]:
    """The module-scope consts of shaders/``name`` (with its includes) that have a readable
    value."""
    return {k: v for k, v in _declared_constants(name).items() if not isinstance(v, ValueError)}


def constant(name: str, const: str) -> int | float | bool:
    """The value of ``const NAME`` declared at module scope in shaders/``name`` or its includes."""
    value = _declared_constants(name).get(const)
    if value is None:
        raise ShaderError(f"shaders/{name}: expected a module-scope 'const {const}', found none")
    if isinstance(value, ValueError):
        raise ShaderError(f"shaders/{name}: {value}")
    return value


def int_constant(name: str, const: str) -> int:
    """``constant`` for a count or size the host computes with: an integer, else a ShaderError."""
    value = constant(name, const)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ShaderError(f"shaders/{name}: expected 'const {const}' to be an integer, "
                          f"found {value!r}")
    return value


def enum_constants(name: str, prefix: str) -> dict[str, int]:
    """An enum-like table from consts named ``PREFIX_WORD``: ``const SHAPE_SPHERE: u32 = 1u;``
    read with prefix "SHAPE" gives {"sphere": 1}."""
    head = prefix.rstrip("_") + "_"
    table = {k[len(head):].lower(): int_constant(name, k) for k in constants(name)
             if k.startswith(head)}
    if not table:
        raise ShaderError(f"shaders/{name}: expected module-scope consts named {head}*, found none")
    return table


@_by_shader
def workgroup_size(name: str, entry: str = "main") -> tuple[int, int, int]:
    """The ``@workgroup_size(x[, y[, z]])`` of entry point ``entry`` in shaders/``name`` as
    (x, y, z); each may be a literal or a const."""
    for m in _ENTRY.finditer(_module_scope(load(name).code)):
        if m.group(2) != entry:
            continue
        size = _WORKGROUP_SIZE.search(m.group(1))
        if size is None:
            break
        dims = []
        for text in size.group(1).split(","):
            if not text.strip():
                continue
            try:
                value = _evaluate(text, constants(name))
            except ValueError as exc:
                raise ShaderError(f"shaders/{name}: @workgroup_size of {entry}: {exc}; "
                                  "expected a literal or a const (an override is the host's "
                                  "choice, so the host cannot read it back)") from None
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ShaderError(f"shaders/{name}: @workgroup_size of {entry}: expected a "
                                  f"positive integer, found {value!r}")
            dims.append(value)
        if not 1 <= len(dims) <= 3:
            raise ShaderError(f"shaders/{name}: @workgroup_size of {entry}: expected 1 to 3 "
                              f"sizes, found {len(dims)}")
        dims += [1] * (3 - len(dims))
        return dims[0], dims[1], dims[2]
    raise ShaderError(f"shaders/{name}: expected a compute entry point '{entry}' with "
                      "@workgroup_size, found none")


# Resource bindings: ``@group(g) @binding(b) var<space, access> name: type;`` at module scope.
# Passes bind resources by these names, and each declaration's address space and access mode
# say whether the pass reads or writes what is bound (runtime/core/bindings.py).

_BINDING = re.compile(r"(@(?:group|binding)\s*\(\s*\d+\s*\)\s*@(?:group|binding)\s*\(\s*\d+\s*\))"
                      r"\s*var\s*(?:<([^>]*)>)?\s*(\w+)\s*:\s*([^;]+);")
_GROUP = re.compile(r"@group\s*\(\s*(\d+)\s*\)")
_BINDING_INDEX = re.compile(r"@binding\s*\(\s*(\d+)\s*\)")
_STORAGE_TEXTURE = re.compile(r"texture_storage_(\w+)\s*<\s*(\w+)\s*,\s*(\w+)\s*>")
_SAMPLED_TEXTURE = re.compile(r"texture_(multisampled_)?(1d|2d_array|2d|3d|cube_array|cube)"
                              r"\s*<\s*(\w+)\s*>")


@dataclass(frozen=True)
class Binding:
    """One module-scope resource declaration of a shader."""
    group: int
    index: int
    name: str
    kind: str      # uniform | storage | texture | depth-texture | storage-texture | sampler
    access: str    # read | read_write | write (storage buffers and storage textures)
    type: str      # the WGSL type text, e.g. "array<Particle>" or "texture_2d<f32>"

    @property
    def reads(self) -> bool:
        return self.access != "write"

    @property
    def writes(self) -> bool:
        return self.access in ("read_write", "write")


def _binding_kind(space: str | None, type_text: str) -> tuple[str, str]:
    parts = [p.strip() for p in (space or "").split(",") if p.strip()]
    if parts and parts[0] == "uniform":
        return "uniform", "read"
    if parts and parts[0] == "storage":
        return "storage", parts[1] if len(parts) > 1 else "read"
    if type_text.startswith("texture_storage_"):
        m = _STORAGE_TEXTURE.match(type_text)
        return "storage-texture", m.group(3) if m else "write"
    if type_text.startswith("texture_depth"):
        return "depth-texture", "read"
    if type_text.startswith("texture_"):
        return "texture", "read"
    if type_text.startswith("sampler"):
        return "sampler", "read"
    raise ShaderError(f"unknown resource type {type_text!r}")


@_by_shader
def bindings(name: str) -> dict[str, Binding]:
    """The resource declarations of shaders/``name`` (includes expanded), by variable name, in
    (group, binding) order."""
    found: list[Binding] = []
    for m in _BINDING.finditer(_module_scope(load(name).code)):
        attributes, space, var, type_text = m.groups()
        type_text = " ".join(type_text.split())
        try:
            kind, access = _binding_kind(space, type_text)
        except ShaderError as exc:
            raise ShaderError(f"shaders/{name}: binding '{var}': {exc}") from None
        found.append(Binding(int(_GROUP.search(attributes).group(1)),        # type: ignore[union-attr]
                             int(_BINDING_INDEX.search(attributes).group(1)),  # type: ignore[union-attr]
                             var, kind, access, type_text))
    found.sort(key=lambda b: (b.group, b.index))
    return {b.name: b for b in found}


def storage_texture_format(binding: Binding) -> tuple[str, str]:
    """(dimension, texel format) of a storage texture binding."""
    m = _STORAGE_TEXTURE.match(binding.type)
    if m is None:
        raise ShaderError(f"binding '{binding.name}': cannot read {binding.type!r}")
    return m.group(1), m.group(2)


def sampled_texture_type(binding: Binding) -> tuple[str, str, bool]:
    """(view dimension, sample scalar, multisampled) of a sampled texture binding."""
    if binding.kind == "depth-texture":
        dims = binding.type.removeprefix("texture_depth_").removeprefix("multisampled_")
        return dims.replace("_", "-"), "depth", "multisampled" in binding.type
    m = _SAMPLED_TEXTURE.match(binding.type)
    if m is None:
        raise ShaderError(f"binding '{binding.name}': cannot read {binding.type!r}")
    return m.group(2).replace("_", "-"), m.group(3), bool(m.group(1))
