"""One registry from a scene-file table name (``emitter``) to its component class and system.

Systems register themselves when their module is imported (``@component("emitter", system=...)``);
``load_builtin_systems()`` imports every module of ``emberfx.systems`` without a hard-coded list, so
adding a system is adding a file. The scene loader and the Engine only ever look names up here.

Families also register what scripts and the mouse can do with them, so the runtime names none:

- ``@script_action("burst")`` on ``fn(engine, *args, **kwargs)`` makes ``ctx.burst(*args,
  **kwargs)`` in scripts (runtime/engine/scripting.py runs it shielded from the script watchdog);
- ``pointer_tool(tool)`` adds a mouse tool (runtime/app/interaction.py): ``tool.press(engine, x, y,
  viewport, modifiers)`` answers what the tool has under the cursor with a stroke (an object with
  ``drag(x, y, viewport)``) or None, and an optional ``tool.hover(engine, x, y, viewport)`` sees
  every move;
- ``cli_command(name, help_text, add_arguments, run)`` adds ``emberfx <name>`` (runtime/app/cli.py):
  ``add_arguments(parser)`` declares its arguments on the subcommand's ``argparse`` parser and
  ``run(args)`` returns the exit status. It raises EmberError for user mistakes like the built-in
  commands (UsageError: exit 2 with the usage line; other EmberError: exit 1, one line).
  runtime/app/arguments.py holds the argument types and checks the built-in commands use.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emberfx.model.constructors import checked_constructors

if TYPE_CHECKING:
    import argparse


@dataclass(frozen=True, slots=True)
class ComponentType:
    key: str        # the table name in a scene file: [entity.emitter]
    cls: type       # the component dataclass
    system: type | None  # the system class that turns it into passes (None: data only)


@dataclass(frozen=True, slots=True)
class CliCommand:
    name: str                                                 # emberfx <name>
    help_text: str                                            # one line, in `emberfx --help`
    add_arguments: Callable[[argparse.ArgumentParser], None]  # declares the command's arguments
    run: Callable[[argparse.Namespace], int]                  # returns the exit status


_TYPES: dict[str, ComponentType] = {}
_ACTIONS: dict[str, Callable[..., Any]] = {}
_TOOLS: list[Any] = []
_COMMANDS: dict[str, CliCommand] = {}
_loaded = False


def component(key: str, *, system: type | None = None):
    """Class decorator: register ``cls`` as the component stored under ``[entity.<key>]``. It
    must be a dataclass deriving from ``emberfx.model.components.Tracked`` whose every field (and
    every field of the dataclasses nested in it) declares its change class with ``live()``,
    ``passes()`` or ``rebuild()``: the Engine notices edits by it."""

    def register(cls: type) -> type:
        if key in _TYPES and _TYPES[key].cls is not cls:
            raise RuntimeError(f"component key {key!r} registered twice")
        if any(ct.cls is cls and k != key for k, ct in _TYPES.items()):
            raise RuntimeError(f"{cls.__qualname__} registered under two component keys")
        check_component_class(cls)
        checked_constructors(cls, key)   # Python-built ones fail with a SceneError too
        _TYPES[key] = ComponentType(key, cls, system)
        return cls

    return register


def check_component_class(cls: type) -> None:
    """RuntimeError unless ``cls`` can be a tracked component (see ``component``)."""
    import dataclasses

    from emberfx.model.components import Tracked, undeclared_fields

    if not (dataclasses.is_dataclass(cls) and issubclass(cls, Tracked)):
        raise RuntimeError(f"component class {cls.__qualname__}: expected a dataclass deriving "
                           f"from emberfx.model.components.Tracked")
    missing = undeclared_fields(cls)
    if missing:
        raise RuntimeError(f"component class {cls.__qualname__}: these fields declare no "
                           f"change class (live(), passes() or rebuild() from "
                           f"emberfx.model.components): {', '.join(missing)}")


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


def component_type(key: str) -> ComponentType | None:
    """The registration of ``key`` (None if nothing is registered under it); no copy."""
    load_builtin_systems()
    return _TYPES.get(key)


_KEYS: dict[type, str] = {}   # component class -> key, made from _TYPES when that changes


def component_key(cls: type) -> str | None:
    """The key a component class is registered under (None: not a registered component)."""
    load_builtin_systems()
    key = _KEYS.get(cls)
    if key is not None and key in _TYPES and _TYPES[key].cls is cls:
        return key
    if key is not None or len(_KEYS) != len(_TYPES):   # registrations changed since
        _KEYS.clear()
        _KEYS.update({ct.cls: k for k, ct in _TYPES.items()})
        return _KEYS.get(cls)
    return None



def script_action(name: str):
    """Decorator: ``fn(engine, *args, **kwargs)`` becomes ``ctx.<name>(*args, **kwargs)``."""
    if not name.isidentifier() or name.startswith("_"):
        raise RuntimeError(f"script action name {name!r}: expected a public Python identifier")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if name in _ACTIONS and _ACTIONS[name] is not fn:
            raise RuntimeError(f"script action {name!r} registered twice")
        _ACTIONS[name] = fn
        return fn

    return register


def remove_script_action(name: str) -> None:
    _ACTIONS.pop(name, None)


def script_actions() -> dict[str, Callable[..., Any]]:
    load_builtin_systems()
    return dict(_ACTIONS)


def pointer_tool(tool: Any) -> Any:
    """Add a mouse tool (see the module's docstring); tools are asked in registration order."""
    if not callable(getattr(tool, "press", None)):
        raise RuntimeError(f"pointer tool {tool!r}: expected a press(engine, x, y, viewport, "
                           f"modifiers) method")
    if tool not in _TOOLS:
        _TOOLS.append(tool)
    return tool


def remove_pointer_tool(tool: Any) -> None:
    if tool in _TOOLS:
        _TOOLS.remove(tool)


def pointer_tools() -> list[Any]:
    load_builtin_systems()
    return list(_TOOLS)


def cli_command(name: str, help_text: str,
                add_arguments: Callable[[argparse.ArgumentParser], None],
                run: Callable[[argparse.Namespace], int]) -> CliCommand:
    """Add the subcommand ``emberfx <name>`` (see the module's docstring)."""
    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise RuntimeError(f"CLI command name {name!r}: expected lower-case letters, digits and "
                           f"hyphens")
    command = CliCommand(name, help_text, add_arguments, run)
    if name in _COMMANDS and _COMMANDS[name] != command:
        raise RuntimeError(f"CLI command {name!r} registered twice")
    _COMMANDS[name] = command
    return command


def remove_cli_command(name: str) -> None:
    _COMMANDS.pop(name, None)


def cli_commands() -> dict[str, CliCommand]:
    """The commands families add, in registration order."""
    load_builtin_systems()
    return dict(_COMMANDS)


def entity_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name an entity, or None: its resources are named ``<entity>/<key>``,
    its passes ``<entity>:<system>:<pass>``, and names starting with '~' are the engine's own
    (batches of like entities, systems/emitter/batches.py)."""
    bad = [c for c in "/:" if c in name]
    if bad or name.startswith("~"):
        return (f"expected a name without '/' or ':' that does not start with '~' (entity names "
                f"also name GPU resources and passes), found '{name}'")
    return None
