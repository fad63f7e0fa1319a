"""WGSL loading: files from shaders/ (inside the package), a small include mechanism, caching, and
compile errors that name the file and line.

Includes are a comment so every file stays valid WGSL text on its own::

    //! include common/random.wgsl

An include is expanded once per shader (later repeats are dropped). Each expanded line remembers
the file and line it came from, so a compiler error at "wgsl:57:3" is reported as
"emitter/update.wgsl:12:3".
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from dataclasses import dataclass

from emberfx.errors import ShaderError

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


def read_text(name: str) -> str:
    """A WGSL file from the shaders package, by its path relative to shaders/."""
    path = importlib.resources.files("emberfx.shaders").joinpath(*name.split("/"))
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ShaderError(f"shader file not found: shaders/{name}") from None


@functools.cache
def load(name: str) -> ShaderSource:
    lines: list[str] = []
    origins: list[tuple[str, int]] = []
    seen: set[str] = set()

    def expand(file: str, chain: tuple[str, ...]) -> None:
        seen.add(file)
        for number, text in enumerate(read_text(file).splitlines(), start=1):
            m = _INCLUDE.match(text)
            if m:
                target = m.group(1)
                if target in chain + (file,):
                    raise ShaderError(f"shaders/{file}:{number}: include cycle "
                                      f"{' -> '.join(chain + (file, target))}")
                if target not in seen:
                    expand(target, chain + (file,))
                continue
            lines.append(text)
            origins.append((file, number))

    expand(name, ())
    return ShaderSource(name, "\n".join(lines) + "\n", tuple(origins))


def explain_compile_error(source: ShaderSource, message: str) -> str:
    """Rewrite naga's "wgsl:LINE:COL" locations to "file.wgsl:line:col" and keep the gist."""
    def relocate(m: re.Match) -> str:
        file, line = source.origin(int(m.group(1)))
        return f"shaders/{file}:{line}:{m.group(2)}"

    text = _LOCATION.sub(relocate, message)
    first = next((l.strip() for l in text.splitlines() if "error" in l.lower() and "Caused" not in l
                  and "Validation Error" not in l), "")
    where = _LOCATION.search(message)
    snippet = ""
    if where:
        file, line = source.origin(int(where.group(1)))
        code_line = source.code.splitlines()[int(where.group(1)) - 1].strip()
        snippet = f"shaders/{file}:{line}:{where.group(2)}: "
        return f"{snippet}{first} | {code_line}"
    return f"shaders/{source.name}: {first or text.strip()}"


def create_module(device, name: str):
    """A compiled shader module for ``device`` (cached per device and file)."""
    cache = _module_cache(device)
    module = cache.get(name)
    if module is None:
        source = load(name)
        try:
            module = device.create_shader_module(label=name, code=source.code)
        except Exception as exc:  # wgpu raises GPUValidationError with naga's report
            raise ShaderError(explain_compile_error(source, str(exc))) from None
        cache[name] = module
    return module


_MODULES: dict[int, dict[str, object]] = {}


def _module_cache(device) -> dict[str, object]:
    return _MODULES.setdefault(id(device), {})
