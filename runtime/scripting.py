"""Python scripts attached to a scene or an entity: hooks called by the frame loop.

A script file defines any of::

    def on_start(ctx): ...              # once, before the first step
    def on_update(ctx, dt): ...         # before every fixed step (dt = fixed_dt)
    def on_key(ctx, key): ...           # a key pressed in the window ("space", "a", "f2", ...)
    def on_event(ctx, name, data): ...  # ctx.emit(name, data), or a key of the scene's [bindings]

``ctx`` reaches the scene: ``ctx.entity("well").attractor.position = (x, y, z)`` takes effect on the
next step; ``ctx.time``, ``ctx.frame``, ``ctx.dt``, ``ctx.rng`` (seeded from the scene seed),
``ctx.spawn``, ``ctx.delete``, ``ctx.burst``, ``ctx.paint``, ``ctx.emit``, ``ctx.input`` and, for
entity scripts, ``ctx.self`` (that entity). A script that fails to load or raises never stops the frame loop: the
error is printed with its traceback (at most once per second per hook) and the failing hook is
skipped until the file changes on disk, when it is loaded again.
"""

from __future__ import annotations

import inspect
import os
import runpy
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HOOKS = {"on_start": 1, "on_update": 2, "on_key": 2, "on_event": 3}   # parameters after nothing


@dataclass
class InputState:
    """What the window saw (filled by the window; empty headless): keys held, by their emberfx
    names ("a", "space", "f2"; see runtime/keys.py), the cursor in logical pixels from the window's
    top-left, the mouse buttons held (1 left, 2 right, 3 middle) and whether the cursor is inside."""
    keys: set = field(default_factory=set)
    mouse: tuple[float, float] = (0.0, 0.0)
    buttons: set = field(default_factory=set)
    inside: bool = False


class ScriptContext:
    """The API a hook sees. One per script (``self`` differs); the rest is the engine's."""

    def __init__(self, engine, entity: str | None, rng: np.random.Generator, inputs: InputState):
        self._engine = engine
        self._entity = entity
        self.rng = rng
        self.input = inputs

    @property
    def time(self) -> float:
        """Simulated seconds at the start of the step about to run."""
        return self._engine.clock.time

    @property
    def frame(self) -> int:
        return self._engine.clock.steps

    @property
    def dt(self) -> float:
        return self._engine.clock.fixed_dt

    @property
    def self(self):
        return self._engine.entity(self._entity) if self._entity else None

    def entity(self, name: str):
        return self._engine.entity(name)

    def spawn(self, name: str, **components):
        """Add an entity now: components as dataclasses or as dicts of scene-file fields."""
        return self._engine.spawn(name, components)

    def delete(self, name: str) -> None:
        self._engine.delete(name)

    def burst(self, emitter: str, count: int) -> None:
        """`count` extra births for that emitter on the next step (on top of its rate)."""
        self._engine.system_of(emitter, "emitter").burst(self._engine._ref(emitter), int(count))

    def paint(self, layer: str, cells, alive: bool = True) -> None:
        """Set Life cells ((x, y) pairs, row 0 at the top) alive or dead in that layer now."""
        engine = self._engine
        engine.system_of(layer, "life").paint(engine._ref(layer), cells, alive=alive)

    def emit(self, name: str, data=None) -> None:
        self._engine.scripts.event(name, data)


class Script:
    def __init__(self, path: Path, context: ScriptContext, label: str):
        self.path = path
        self.context = context
        self.label = label              # "scene" or "entity 'name'"
        self.hooks: dict[str, object] = {}
        self.mtime = None
        self.broken: set[str] = set()   # hooks that raised; retried after the file changes
        self.started = False            # on_start has been called
        self.last_report: dict[str, float] = {}
        self.load()

    def load(self) -> None:
        self.broken.clear()
        self.hooks = {}
        try:
            self.mtime = os.stat(self.path).st_mtime
            namespace = runpy.run_path(str(self.path), run_name=f"emberfx_script_{self.path.stem}")
        except Exception:
            self.report("load", sys.exc_info())
            self.broken.add("*")
            return
        for name, count in HOOKS.items():
            fn = namespace.get(name)
            if fn is None:
                continue
            try:
                inspect.signature(fn).bind(*([None] * count))
            except TypeError:
                params = ", ".join(["ctx", "dt"] if name == "on_update" else
                                   ["ctx", "key"] if name == "on_key" else
                                   ["ctx", "name", "data"] if name == "on_event" else ["ctx"])
                print(f"emberfx: script error: {self.path}: {name} must take ({params}); found "
                      f"{name}{inspect.signature(fn)}", file=sys.stderr)
                continue
            self.hooks[name] = fn

    def changed(self) -> bool:
        try:
            return os.stat(self.path).st_mtime != self.mtime
        except OSError:
            return False

    def call(self, name: str, *args) -> None:
        if self.changed():
            self.load()
        fn = self.hooks.get(name)
        if fn is None or name in self.broken or "*" in self.broken:
            return
        try:
            fn(self.context, *args)
        except Exception:
            self.broken.add(name)
            self.report(name, sys.exc_info())

    def report(self, what: str, exc_info) -> None:
        now = time.monotonic()
        if now - self.last_report.get(what, -1e9) < 1.0:
            return   # rate-limited: a hook failing every frame prints once a second at most
        self.last_report[what] = now
        tb = "".join(traceback.format_exception(*exc_info, limit=-4))
        print(f"emberfx: script error in {self.path} ({self.label}, {what}); the loop keeps "
              f"running and retries after the file changes:\n{tb}", file=sys.stderr, end="")
        self.errors = getattr(self, "errors", 0) + 1


class Scripts:
    """Every script of an engine's scene, called in scene order (scene script first)."""

    def __init__(self, engine, previous: Scripts | None = None, inputs: InputState | None = None):
        """``previous``: the scripts before a scene reload. A script still attached to the same
        file and entity is kept as it is (its module state, its rng); only new ones are loaded,
        and only they get on_start. ``inputs``: the window's input state to share."""
        self.engine = engine
        self.input = inputs or (previous.input if previous is not None else InputState())
        self.kept = {(s.path, s.context._entity): s for s in previous.scripts} if previous else {}
        self.scripts: list[Script] = []
        self.started = previous.started if previous is not None else False
        scene = engine.scene
        seed = scene.settings.seed
        if scene.settings.script:
            self.add(scene.resolve(scene.settings.script), None, seed, 0)
        for index, spec in enumerate(scene.entities):
            if spec.script:
                self.add(scene.resolve(spec.script), spec.name, seed, index + 1)

    def add(self, path, entity: str | None, seed: int, stream: int) -> None:
        kept = self.kept.pop((Path(path), entity), None)
        if kept is not None:
            self.scripts.append(kept)
            return
        rng = np.random.default_rng([seed, stream, 0x5C21])
        context = ScriptContext(self.engine, entity, rng, self.input)
        label = f"entity '{entity}'" if entity else "scene"
        self.scripts.append(Script(Path(path), context, label))

    def start(self) -> None:
        """on_start, once per script: at the first step, or when a reload adds the script."""
        if not self.started or any(not s.started for s in self.scripts):
            self.started = True
            for script in self.scripts:
                if not script.started:
                    script.started = True
                    script.call("on_start")

    def update(self, dt: float) -> None:
        self.start()
        for script in self.scripts:
            script.call("on_update", dt)

    def key(self, key: str) -> None:
        for script in self.scripts:
            script.call("on_key", key)

    def event(self, name: str, data) -> None:
        for script in self.scripts:
            script.call("on_event", name, data)

    @property
    def errors(self) -> int:
        return sum(getattr(s, "errors", 0) for s in self.scripts)
