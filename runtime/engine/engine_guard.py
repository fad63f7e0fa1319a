"""The rules at the Engine's public surface, enforced before any GPU or esper work.

- An Engine belongs to the thread that created it. wgpu command encoding and esper's world
  switching are not safe to interleave between threads (two threads stepping one Engine lose
  steps and end in a wgpu RuntimeError), so a call from another thread is refused. An Engine
  created in a worker thread works there, and several threads may each own one.
- After ``close()`` every method is refused: the GPU resources are released, and a submit that
  touched one would abort the process.
- Each call switches esper to the Engine's own world, so several Engines in one process never
  see each other's entities. esper keeps its current world in module globals, so every switch
  (and the Engine's own esper calls, through ``in_world``) holds one process-wide lock.
- Arguments are checked here and refused with one line that says what was expected
  (``step(1.7)``, ``state(None)``, ``Engine(size=("a", "b"))``); a Scene given to ``Engine`` or
  ``reload`` is validated as a scene file is, since one built or edited in Python skipped it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import numbers
import operator
import os
import threading

import esper

from emberfx.core.errors import DeviceLimitError, EmberError, SceneError
from emberfx.core.frame_graph import Phase
from emberfx.model.registry import entity_name_problem

# reentrant: a system's query during esper.process (which holds it) switches nothing
_ESPER_LOCK = threading.RLock()

# The GPU's step index (Frame.frame in common/frame.wgsl) is a u32 and seeds every birth: a
# step past its largest value could not be encoded, and births would repeat earlier ones.
STEP_INDEX_LIMIT = 2**32
# One step(n) call holds its thread for all n steps, and a notebook's or a sweep's thread hears
# no Ctrl-C: ten million steps are 46 hours of simulated time at 60 steps a second, and hours of
# wall time even on a fast GPU. Longer runs call step() in a loop.
MAX_STEPS_PER_CALL = 10_000_000
SECONDS_PER_DAY = 86_400.0


class EngineUsageError(EmberError):
    """An Engine method called with an argument it cannot use."""


class EngineClosedError(EngineUsageError):
    """An Engine method called after ``close()``."""


class EngineThreadError(EngineUsageError):
    """An Engine method called from a thread other than the one that created the Engine."""


# ---------------------------------------------------------------------------- ownership and worlds

@contextlib.contextmanager
def in_world(world: str):
    """esper calls made in ``world``, with no other thread switching worlds meanwhile."""
    with _ESPER_LOCK:
        esper.switch_world(world)
        yield


class visiting:
    """``with visiting(world):`` esper calls made in ``world``, after which the caller's world
    is current again (a user's esper code around ours keeps its world; "default" if the body
    deleted it). Switches only when needed: inside an Engine call its world is current
    already. A class rather than a generator: every component a script reads enters one."""

    __slots__ = ("world", "previous")

    def __init__(self, world: str):
        self.world = world
        self.previous = world

    def __enter__(self) -> None:
        _ESPER_LOCK.acquire()
        try:
            self.previous = esper.current_world
            if self.previous != self.world:
                esper.switch_world(self.world)
        except BaseException:
            _ESPER_LOCK.release()
            raise

    def __exit__(self, *exc) -> None:
        try:
            previous = self.previous
            if previous != self.world:
                esper.switch_world(previous if previous in esper.list_worlds() else "default")
        finally:
            _ESPER_LOCK.release()


def switch_to(world: str) -> str:
    """Make ``world`` esper's current world; returns the one it replaces."""
    with _ESPER_LOCK:
        previous = esper.current_world
        if previous != world:
            esper.switch_world(world)
        return previous


def guard_public_methods(*, exempt: tuple[str, ...] = ()):
    """Class decorator: every public method and property of the class (those added later too,
    so a new method cannot forget) checks ownership and enters the Engine's world first, and
    submits a step held open for the draw unless it is that draw (TAKES_HELD).
    The check is one comparison of thread ids: ``step`` runs it every frame."""

    def guard(cls):
        for name, attr in list(vars(cls).items()):
            if name.startswith("_") or name in exempt:
                continue
            if isinstance(attr, property):
                setattr(cls, name, property(_entry(attr.fget, name),
                                            attr.fset and _entry(attr.fset, name),
                                            attr.fdel, attr.__doc__))
            elif callable(attr) and not isinstance(attr, (staticmethod, classmethod, type)):
                setattr(cls, name, _entry(attr, name))
        return cls

    return guard


# The one call that records into a step's encoder held open by Engine.frame(); every other call
# submits the held step first, so it reads, edits or steps after the step as without the block.
TAKES_HELD = frozenset({"draw_to"})


def _entry(method, name: str):
    @functools.wraps(method)
    def entry(engine, *args, **kwargs):
        if engine._owner_ident != threading.get_ident():
            raise refusal(engine, name)
        if esper.current_world != engine._world:   # a switch saves and loads 11 globals
            with _ESPER_LOCK:
                esper.switch_world(engine._world)
        if takes_held is False and engine.resources.held is not None:
            engine.resources.submit_held()   # a step held for the draw (core/submission.py)
        return method(engine, *args, **kwargs)
    takes_held = name in TAKES_HELD
    return entry


def refusal(engine, name: str) -> EngineUsageError:
    """Why ``engine.name(...)`` cannot run here: the Engine is closed, or owned by another
    thread."""
    if engine._owner_ident is None:
        return EngineClosedError(f"Engine.{name}: this Engine is closed; create a new Engine "
                                 f"to go on")
    return EngineThreadError(
        f"Engine.{name} called from thread '{threading.current_thread().name}': an Engine "
        f"belongs to the thread that created it ('{engine._owner.name}'); create one Engine "
        f"per thread, in the thread that uses it")


# ------------------------------------------------------------------------------------- arguments

def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _duration(seconds: float) -> str:
    if seconds >= SECONDS_PER_DAY:
        return f"{seconds / SECONDS_PER_DAY:,.1f} days"
    return f"{seconds / 3600:.1f} hours" if seconds >= 3600 else f"{seconds:.0f} s"


def steps_left(done: int) -> int:
    """How many more steps the GPU's step index can count after ``done`` steps."""
    return STEP_INDEX_LIMIT - 1 - done


def step_budget(count: int, what: str, *, done: int, fixed_dt: float,
                seconds_per_step: float = 0.0, per_call: int | None = MAX_STEPS_PER_CALL) -> int:
    """``count``, or a one-line refusal of ``count`` more steps (after ``done``) that cannot
    finish: past the GPU's step index, or over ``per_call`` in one call, with what they would
    take in the message."""
    took = f"{_duration(count * fixed_dt)} of simulated time"
    if seconds_per_step > 0:
        took += (f", about {_duration(count * seconds_per_step)} at the "
                 f"{seconds_per_step * 1e3:.2g} ms a step measured so far")
    if count > steps_left(done):
        raise EngineUsageError(
            f"{what}: {count} steps ({took}) would pass step {STEP_INDEX_LIMIT - 1}, the last "
            f"the GPU's 32-bit step index (the seed of every birth) can count; "
            f"{max(0, steps_left(done))} steps are left after the {done} taken")
    if per_call is not None and count > per_call:
        raise EngineUsageError(
            f"{what}: {count} steps ({took}) in one call; at most {per_call:,} a call (a call "
            f"holds its thread until it ends): call step() in a loop for longer runs")
    return count


def step_count(frames, what: str = "step(frames)") -> int:
    """A whole number of steps >= 0 (an int or a numpy integer; not a bool, float or string)."""
    if isinstance(frames, bool):
        raise EngineUsageError(f"{what}: expected a whole number of steps >= 0, found {frames}")
    try:
        count = operator.index(frames)
    except TypeError:
        raise EngineUsageError(f"{what}: expected a whole number of steps >= 0, found "
                               f"{_shown(frames)}") from None
    if count < 0:
        raise EngineUsageError(f"{what}: expected a whole number of steps >= 0, found {count}")
    return count


def seconds(value, what: str) -> float:
    """A finite, non-negative number of seconds."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not math.isfinite(value) or value < 0):
        raise EngineUsageError(f"{what}: expected a finite number of seconds >= 0, found "
                               f"{_shown(value)}")
    return float(value)


def entity_name(name, what: str) -> str:
    """An entity name: a non-empty string."""
    if not isinstance(name, str) or not name.strip():
        raise EngineUsageError(f"{what}: expected an entity name (a non-empty string), found "
                               f"{_shown(name)}")
    problem = entity_name_problem(name)
    if problem is not None:
        raise EngineUsageError(f"{what}: {problem}")
    return name


def render_size(size, what: str = "Engine(size)") -> tuple[int, int]:
    """(width, height) in whole pixels; ``device_size`` also checks the device's limit."""
    try:
        w, h = size
        if isinstance(w, bool) or isinstance(h, bool):
            raise TypeError("a bool is not a pixel count")
        return operator.index(w), operator.index(h)
    except (TypeError, ValueError):
        raise EngineUsageError(f"{what}: expected (width, height) in whole pixels, found "
                               f"{_shown(size)}") from None


def device_size(size, gpu) -> tuple[int, int]:
    """A render size (``render_size``) within the texture size limit of ``gpu`` (a GPU
    context: its limits and label)."""
    w, h = render_size(size)
    limit = gpu.limits["max-texture-dimension-2d"]
    if not (1 <= w <= limit and 1 <= h <= limit):
        raise DeviceLimitError(f"render size {w}x{h} is outside 1..{limit} per side on "
                               f"this device ({gpu.label})")
    return (w, h)


def phase_set(phases, what: str) -> set | None:
    """The Phase values of ``phases`` as a set (None: all phases, left None)."""
    if phases is None:
        return None
    phases = set(phases)
    bad = [p for p in phases if not isinstance(p, Phase)]
    if bad:
        raise EmberError(f"{what}: expected Phase values ({', '.join(p.name for p in Phase)}), "
                         f"found {bad[0]!r}")
    return phases


def checked_scene(scene, what: str):
    """``scene`` as given to ``Engine(scene)`` or ``reload(scene)``: a path to a scene file
    (loaded and validated), or a Scene, of which a validated copy is returned: one built or
    edited in Python (``Emitter(capacity=-1)``, ``emitter.shape.radius = -1``) is checked as
    its file would be, and later edits of the caller's object do not reach the Engine."""
    from emberfx.model.scene import EntitySpec, Scene, check_references, load_scene, validated_copy

    if isinstance(scene, (str, os.PathLike)):
        return load_scene(scene)
    if not isinstance(scene, Scene):
        raise EngineUsageError(f"{what}: expected a Scene (e.g. from emberfx.load_scene) or a "
                               f"path to a scene file, found {_shown(scene)}")
    path = scene.path
    if not isinstance(scene.entities, list):
        raise SceneError(path, f"expected a list of EntitySpec, found {_shown(scene.entities)}",
                         field="entities")
    entities, seen = [], set()
    for index, spec in enumerate(scene.entities):
        where = f"entity[{index}]"
        if not isinstance(spec, EntitySpec):
            raise SceneError(path, f"expected an EntitySpec (see Scene.add), found {_shown(spec)}",
                             field=where)
        if not isinstance(spec.name, str) or not spec.name.strip():
            raise SceneError(path, f"expected a non-empty string, found {_shown(spec.name)}",
                             field=f"{where}.name")
        if spec.name in seen:
            raise SceneError(path, f"expected a unique name, found '{spec.name}' again",
                             field=f"{where}.name")
        seen.add(spec.name)
        if not isinstance(spec.components, dict):
            raise SceneError(path, f"expected a dict of components, found "
                             f"{_shown(spec.components)}", entity=spec.name, field="components")
        components = {key: validated_copy(value, _component_key(key, path, spec.name),
                                          entity=spec.name, path=path)
                      for key, value in spec.components.items()}
        entities.append(dataclasses.replace(spec, components=components))
    check_references(entities, path=path)
    return dataclasses.replace(scene, settings=validated_copy(scene.settings, "scene", path=path),
                               camera=validated_copy(scene.camera, "camera", path=path),
                               light=validated_copy(scene.light, "light", path=path),
                               render=validated_copy(scene.render, "render", path=path),
                               entities=entities)


def _component_key(key, path, entity: str) -> str:
    from emberfx.model.registry import component_types

    types = component_types()
    if key not in types:
        import difflib

        close = difflib.get_close_matches(str(key), list(types), n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"expected one of: {', '.join(types)}"
        raise SceneError(path, f"unknown component {_shown(key)}, {hint}", entity=entity)
    return key


def checked_components(components, name: str, *, path, label: str) -> dict[str, object]:
    """What ``spawn(name, components)`` was given: a dict of component key -> component object
    or dict of scene-file fields, each validated as a file's table would be (a copy)."""
    if not isinstance(components, dict):
        raise EngineUsageError(f"{label} '{name}': expected a dict of components, e.g. "
                               f"{{'emitter': {{'rate': 500.0}}}}, found {_shown(components)}")
    from emberfx.model.scene import validated_copy

    out = {}
    for key, value in components.items():
        try:
            out[key] = validated_copy(value, _component_key(key, path, name), entity=name,
                                      path=path)
        except SceneError as exc:
            raise relabelled(exc, label) from None
    return out


def relabelled(exc: SceneError, label: str, note: str = "") -> SceneError:
    """The same message with ``label`` ("spawn", "live edit") where the file would be: the
    values did not come from the scene file. ``note`` is appended (what happened next)."""
    detail = f"{exc.detail}; {note}" if note else exc.detail
    return SceneError(label, detail, entity=exc.entity, field=exc.field)
