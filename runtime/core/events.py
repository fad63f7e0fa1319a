"""Notices among one Engine's parts and its systems, by name: ``SharedResources.events``.

The calls are esper's (``set_handler``, ``remove_handler``, ``dispatch_event``), on a table of
the Engine's own. esper's table belongs to esper's current world, and that is process-global:
an Engine switches to its world on each call without holding it for the whole call, so a notice
sent by one thread's Engine could reach the handlers of another thread's. esper also holds its
handlers weakly, in a set, so they run in no fixed order. Here each Engine has one table, a
handler is held until it is removed, and handlers run in the order they were set (the World
sets its systems' in the order it makes the systems), so a step runs the same way every time.

The runtime's notices:

- ``REARRANGE``: a system changed its passes during its step (a live edit took an emitter out
  of its batch): the Engine arranges the systems again and makes a new frame graph before the
  step encodes. The World listens.
- ``WORLD_CHANGED``: entities were spawned or deleted, or the world was built or an entity
  rebuilt (after the systems arranged): each system adapts, e.g. to a new force. The World
  sends it; each system's ``world_changed`` hears it.
- ``TARGETS_CHANGED``: the renderer made new render targets (a resize, a new background): a
  system binding "scene/color" or "scene/depth" binds the new ones. The renderer sends it; each
  system's ``targets_changed`` hears it.

A family names its own notices next to the data they carry (systems/forces/fields.py:
``VECTOR_FIELDS``, the vector fields' samples, which the emitters sample). Such a notice of a
state is ``announce``d: the table keeps the last one of each name, and a handler set later
hears it at once, so a system made after the announcement knows the state too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["REARRANGE", "WORLD_CHANGED", "TARGETS_CHANGED", "Events"]

REARRANGE = "rearrange"
WORLD_CHANGED = "world_changed"
TARGETS_CHANGED = "targets_changed"


class Events:
    """One Engine's handlers by notice name, and the last announcement of each state."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[Callable[..., Any]]] = {}
        self._announced: dict[str, tuple[Any, ...]] = {}

    def set_handler(self, name: str, func: Callable[..., Any]) -> None:
        """``func(*args)`` runs for every ``dispatch_event(name, *args)`` from now on, after the
        handlers set before it (a handler set twice runs once). After an ``announce(name,
        ...)``, it hears the last announcement at once."""
        handlers = self._handlers.setdefault(name, [])
        if func in handlers:
            return
        handlers.append(func)
        if name in self._announced:
            func(*self._announced[name])

    def remove_handler(self, name: str, func: Callable[..., Any]) -> None:
        """``func`` hears ``name`` no more (nothing happens when it did not)."""
        handlers = self._handlers.get(name, [])
        if func in handlers:
            handlers.remove(func)

    def dispatch_event(self, name: str, *args: Any) -> None:
        """Run every handler of ``name`` with ``args``, in the order they were set. A handler
        that raises stops the dispatch and the error reaches the sender."""
        for func in tuple(self._handlers.get(name, ())):
            func(*args)

    def announce(self, name: str, *args: Any) -> None:
        """``dispatch_event(name, *args)`` for a notice of a state: kept as the last of its name,
        for handlers set later."""
        self._announced[name] = args
        self.dispatch_event(name, *args)

    def forget(self, owner: object) -> None:
        """Remove every handler that is a method of ``owner`` (a system leaving the world)."""
        for handlers in self._handlers.values():
            handlers[:] = [f for f in handlers if getattr(f, "__self__", None) is not owner]

    def forget_announcements(self) -> None:
        """Drop the kept announcements (the world that made them was released)."""
        self._announced.clear()
