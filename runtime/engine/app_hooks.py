"""Engine methods whose work is the app layer's: ``Engine.export`` writes point caches
(app/export.py), ``Engine._repr_png_`` and ``Engine.video`` make what a notebook shows
(app/notebook.py), ``Engine.web`` writes the scene as a web page (emberfx.web).

The engine layer imports no app module: the app's side is a table of functions, filled by the
``emberfx`` package when it is imported (``provide``), which happens before any of its modules
runs. The Engine looks its function up here (``hook``) each call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["EXPORT", "PNG", "VIDEO", "WEB", "provide", "hook"]

EXPORT = "export"   # fn(engine, folder, format) -> list of the paths written
PNG = "png"         # fn(engine) -> the current frame as PNG bytes
VIDEO = "video"     # fn(engine, frames, fps) -> an inline video for Jupyter
WEB = "web"         # fn(engine, path, frames, size) -> the page's path, or a display (no path)

_HOOKS: dict[str, Callable[..., Any]] = {}


def provide(name: str, fn: Callable[..., Any]) -> None:
    """Make ``fn`` the app layer's function for ``name`` (one of the names above)."""
    if name not in (EXPORT, PNG, VIDEO, WEB):
        raise ValueError(f"app hook: expected one of {EXPORT}, {PNG}, {VIDEO}, {WEB}, "
                         f"found {name!r}")
    _HOOKS[name] = fn


def hook(name: str) -> Callable[..., Any]:
    """The function provided for ``name``; a RuntimeError when none was (the ``emberfx``
    package provides all three)."""
    fn = _HOOKS.get(name)
    if fn is None:
        raise RuntimeError(f"Engine: no app function for '{name}' was provided (import emberfx "
                           f"provides them)")
    return fn
