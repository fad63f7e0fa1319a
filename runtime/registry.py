"""One registry from a scene-file table name (``emitter``) to its component class and system.

Systems register themselves when their module is imported (``@component("emitter", system=...)``);
``load_builtin_systems()`` imports every module of ``emberfx.systems`` without a hard-coded list, so
adding a system is adding a file. The scene loader and the Engine only ever look names up here.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ComponentType:
    key: str        # the table name in a scene file: [entity.emitter]
    cls: type       # the component dataclass
    system: type | None  # the system class that turns it into passes (None: data only)


_TYPES: dict[str, ComponentType] = {}
_loaded = False


def component(key: str, *, system: type | None = None):
    """Class decorator: register ``cls`` as the component stored under ``[entity.<key>]``."""

    def register(cls: type) -> type:
        if key in _TYPES and _TYPES[key].cls is not cls:
            raise RuntimeError(f"component key {key!r} registered twice")
        _TYPES[key] = ComponentType(key, cls, system)
        return cls

    return register


def set_system(key: str, system: type) -> None:
    """Attach the system class after the component (the system is usually defined below it)."""
    ct = _TYPES[key]
    _TYPES[key] = ComponentType(ct.key, ct.cls, system)


def load_builtin_systems() -> None:
    global _loaded
    if _loaded:
        return
    import emberfx.systems as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")
    _loaded = True


def component_types() -> dict[str, ComponentType]:
    load_builtin_systems()
    return dict(_TYPES)

