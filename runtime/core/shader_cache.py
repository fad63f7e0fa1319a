"""Caches keyed by shader name, bounded for generated programs.

Package shaders are a fixed set: what is made from them (sources, shader modules, pipeline
layouts, pipelines) is cached for the process's life. Generated programs (an emitter's
modifiers, attributes and expressions: systems/emitter/modifiers.py) are not: a script that
spawns emitters with a new `size` expression each step made a new program each time, and each
kept its compiled pipelines (2.5 to 5.9 MB on lavapipe) for good.

So every cache keyed by shader name is made here (``shader_cache``), and each generated program
is a *family* of shader names, held (``hold``) by the object that uses it for as long as that
object lives. A family no object holds is *idle*: it stays cached, so spawning the same program
again compiles nothing, but only the ``IDLE_PROGRAMS_KEPT`` most recently used idle families
stay; older ones are forgotten from every cache, which releases their GPU objects (when the
next program is made, or asked about).
``release_idle`` forgets every idle family (Engine.close).
"""

from __future__ import annotations

import gc
import hashlib
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

IDLE_PROGRAMS_KEPT = 8
"""idle generated programs kept compiled: a few kinds of spawned emitter come back without a
compile; each may hold several MB of pipelines"""

_CACHES: list[dict] = []


def shader_cache() -> dict:
    """A new cache whose keys are shader names, or tuples holding one (with a device id, a
    blend mode ...): forgetting a name drops its entries."""
    cache: dict = {}
    _CACHES.append(cache)
    return cache


@dataclass
class _Family:
    names: frozenset[str]
    holders: int = 0


_FAMILIES: OrderedDict[str, _Family] = OrderedDict()   # least recently used first
# families whose holder was collected, not counted yet: a finalizer may run in any thread, in
# the middle of any statement (even one iterating these dicts), so it only appends here and
# the next call below settles under the lock
_LET_GO: list[str] = []
_LOCK = threading.RLock()


def hold(owner: object, names) -> str:
    """``owner`` uses the generated shaders ``names`` until it is garbage: they stay cached
    (and are counted among the idle ones after). Returns the family's key."""
    names = frozenset(names)
    key = hashlib.sha1("\n".join(sorted(names)).encode("utf-8")).hexdigest()
    with _LOCK:
        _settle()
        family = _FAMILIES.get(key)
        if family is None:
            family = _FAMILIES[key] = _Family(names)
        family.holders += 1
        _FAMILIES.move_to_end(key)
    weakref.finalize(owner, _LET_GO.append, key)
    return key


def release_idle() -> None:
    """Forget every family nothing holds (their shader modules and pipelines go). Garbage is
    collected first: an emitter's objects refer to each other, so its program may be let go
    only by the cycle collector."""
    gc.collect()
    with _LOCK:
        _settle(keep=0)


def idle_programs() -> int:
    """How many generated programs are cached with nothing holding them (at most
    IDLE_PROGRAMS_KEPT)."""
    with _LOCK:
        _settle()
        return sum(1 for f in _FAMILIES.values() if f.holders == 0)


def held_programs() -> int:
    """How many generated programs something holds (live emitters' programs)."""
    with _LOCK:
        _settle()
        return sum(1 for f in _FAMILIES.values() if f.holders > 0)


def cached_names() -> set[str]:
    """The generated shader names cached now, held or idle."""
    with _LOCK:
        _settle()
        return set().union(*(f.names for f in _FAMILIES.values()))


def _settle(keep: int = IDLE_PROGRAMS_KEPT) -> None:
    """Count the holders let go, then forget the idle families past the ``keep`` most
    recently used."""
    while _LET_GO:
        family = _FAMILIES.get(key := _LET_GO.pop())
        if family is not None:
            family.holders -= 1
            if family.holders == 0:
                _FAMILIES.move_to_end(key)   # idle from now: the most recent of the idle ones
    idle = [k for k, f in _FAMILIES.items() if f.holders == 0]
    for key in idle[:max(0, len(idle) - keep)]:
        family = _FAMILIES.pop(key)
        still_used = set().union(*(f.names for f in _FAMILIES.values()))
        _forget(family.names - still_used)


def _forget(names: set[str] | frozenset[str]) -> None:
    if not names:
        return
    for cache in _CACHES:
        for key in list(cache):   # (a snapshot: other threads may add entries meanwhile)
            if (key in names if isinstance(key, str) else isinstance(key, tuple) and any(
                    isinstance(part, str) and part in names for part in key)):
                cache.pop(key, None)
