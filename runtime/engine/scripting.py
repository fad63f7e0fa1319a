"""Python scripts attached to a scene or an entity: hooks called by the frame loop.

A script file defines any of::

    def on_start(ctx): ...              # once, before the first step
    def on_update(ctx, dt): ...         # before every fixed step (dt = fixed_dt)
    def on_key(ctx, key): ...           # a key pressed in the window ("space", "a", "f2", ...)
    def on_event(ctx, name, data): ...  # ctx.emit(name, data), a key of the scene's [bindings],
                                        # or events counted on the GPU (below)

``ctx`` reaches the scene: ``ctx.entity("well").attractor.position = (x, y, z)`` takes effect on the
next step; ``ctx.time``, ``ctx.frame``, ``ctx.dt``, ``ctx.rng`` (seeded from the scene seed),
``ctx.spawn``, ``ctx.delete``, ``ctx.emit``, ``ctx.input``, for entity scripts ``ctx.self`` (that
entity), and the actions component families register (``ctx.burst`` from emitters, ``ctx.paint``
from Life; see runtime/model/registry.py). A script that fails to load or raises never stops the
frame loop: the error is printed with its traceback (at most once per second per hook) and the
failing hook is skipped until the file changes on disk, when it is loaded again. A hook that
calls ``sys.exit()``, runs longer than the time limit (``ScriptPolicy.timeout``, see
runtime/engine/script_watchdog.py) or loads a module that does either is reported in one line and
its whole script is skipped the same way, also when it swallows the interruption in a loop. A
hook name bound to what cannot be called as a hook (a number, an ``async def``, a generator
function, a wrong signature) is reported in one line when the script loads and skipped. An
``on_event`` that keeps re-emitting events (``MAX_EVENT_DEPTH`` deep) is reported and skipped.
Ctrl-C is never caught here: it interrupts a hook at once and ends the program. A thread a script
starts is its own business, but the ``emberfx`` command does not wait for it at exit: it says
so in one line and ends (script_watchdog.finish_process).

GPU events reach ``on_event`` too: an emitter with ``on_death`` (``on_collision``, ``on_age``)
gives ``on_event(ctx, "death:rockets", {"count": n})``, n being how many of its particles died
since the last such call (only when n > 0), before ``on_update``. The counts come from the
asynchronous counter readback, so they are one or two steps late (the GPU is never waited for);
they come from running totals, so a readback that was skipped loses none, it is added to the
next.

Trust: a scene with scripts is a program. Its scripts run with the rights of the process, so
``ScriptPolicy`` can turn them off (``--no-scripts``, ``EMBERFX_NO_SCRIPTS=1``,
``Engine(scene, scripts=False)``), and a script outside the scene file's folder is refused unless
allowed (``--allow-outside-scripts``). Inspection (``validate``, ``passes``) never runs them.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import math
import numbers
import os
import runpy
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from emberfx.core.errors import EmberError, SceneError
from emberfx.engine import interrupts
from emberfx.engine.camera_view import CameraView
from emberfx.engine.script_hooks import HOOKS, hook_problem
from emberfx.engine.script_watchdog import ScriptTimeout, watchdog
from emberfx.engine.world import EntityView, still_current
from emberfx.model.registry import script_actions

DEFAULT_SCRIPT_TIMEOUT = 5.0   # seconds one hook call (or a script's import) may run
MAX_EVENT_DEPTH = 32           # on_event -> ctx.emit -> on_event ... deeper than this is a loop
MAX_KEPT_VIEWS = 64            # entity views a script context keeps for reuse (entity())
NO_SCRIPTS_ENV = "EMBERFX_NO_SCRIPTS"


@dataclass(frozen=True)
class ScriptPolicy:
    """Whether and how a scene's scripts run (``Engine(scene, scripts=ScriptPolicy(...))``)."""
    run: bool = True
    timeout: float | None = DEFAULT_SCRIPT_TIMEOUT   # seconds per hook call; None or 0: no limit
    allow_outside: bool = False      # run scripts that lie outside the scene file's folder
    off_reason: str = "scripts=False"   # how they were turned off, for the one "scripts off" line


def script_policy(scripts: bool | ScriptPolicy = True,
                  timeout: float | None = None) -> ScriptPolicy:
    """The policy an Engine runs with: ``scripts`` (a bool or a policy), a ``timeout`` that
    overrides the policy's when given, and ``EMBERFX_NO_SCRIPTS=1``, which wins over both."""
    if isinstance(scripts, ScriptPolicy):
        policy = scripts
    elif isinstance(scripts, (bool, np.bool_)):
        policy = ScriptPolicy(run=bool(scripts))
    else:
        raise EmberError(f"Engine(scripts=...): expected True, False or a ScriptPolicy, found "
                         f"{scripts!r}")
    if timeout is not None:
        policy = dataclasses.replace(policy, timeout=timeout)
    limit = policy.timeout
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Real)
                              or math.isnan(limit) or limit < 0):
        raise EmberError(f"script timeout: expected a number of seconds >= 0 (0: no limit), "
                         f"found {limit!r}")
    if scripts_disabled_by_env():
        policy = dataclasses.replace(policy, run=False, off_reason=f"{NO_SCRIPTS_ENV}=1")
    return policy


def scripts_disabled_by_env() -> bool:
    value = os.environ.get(NO_SCRIPTS_ENV, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise EmberError(f"{NO_SCRIPTS_ENV}={os.environ[NO_SCRIPTS_ENV]!r}: expected 1 (scripts "
                     f"off) or 0 (scripts on)")


@dataclass(frozen=True)
class SceneScript:
    """A script a scene names: its owner (None: the scene itself), as written, and resolved."""
    entity: str | None
    written: str
    path: Path

    @property
    def field(self) -> str:
        return "scene.script" if self.entity is None else "script"

    @property
    def owner(self) -> str:
        return f"entity '{self.entity}'" if self.entity is not None else "scene"


def scene_scripts(scene) -> list[SceneScript]:
    """Every script of the scene, in the order they run: the scene's own first."""
    out = []
    if scene.settings.script:
        out.append(SceneScript(None, scene.settings.script, scene.resolve(scene.settings.script)))
    out += [SceneScript(spec.name, spec.script, scene.resolve(spec.script))
            for spec in scene.entities if spec.script]
    return out


def scene_folder(scene) -> Path:
    """The folder a scene's scripts must lie in (the working directory for a scene built in
    Python), with symbolic links resolved."""
    base = Path(scene.path).parent if scene.path is not None else Path.cwd()
    return Path(os.path.realpath(base))


def is_outside(scene, script: SceneScript) -> bool:
    """Whether the script lies outside the scene's folder (a link is judged by its target)."""
    folder = scene_folder(scene)
    target = Path(os.path.realpath(script.path))
    return folder != target and folder not in target.parents


def check_script_locations(scene, policy: ScriptPolicy) -> None:
    """Refuse a scene whose scripts would run from outside its folder, before anything runs."""
    if not policy.run or policy.allow_outside:
        return
    for script in scene_scripts(scene):
        if is_outside(scene, script):
            raise SceneError(
                scene.path, f"expected a script inside the scene's folder {scene_folder(scene)}, "
                f"found '{script.written}' (resolved to {os.path.realpath(script.path)}); a "
                f"scene with scripts is a program, so scripts from elsewhere run only with "
                f"--allow-outside-scripts (Python: ScriptPolicy(allow_outside=True))",
                entity=script.entity, field=script.field)


@dataclass
class InputState:
    """What the window saw (filled by the window; empty headless): keys held, by their emberfx
    names ("a", "space", "f2"; see runtime/model/keys.py), the cursor in logical pixels from the
    window's top-left, the mouse buttons held (1 left, 2 right, 3 middle) and whether the cursor is
    inside."""
    keys: set = field(default_factory=set)
    mouse: tuple[float, float] = (0.0, 0.0)
    buttons: set = field(default_factory=set)
    inside: bool = False


class UnknownActionError(EmberError, AttributeError):
    """``ctx.<name>`` that no family registered: one line, and ``hasattr(ctx, name)`` is False."""


class ScriptContext:
    """The API a hook sees. One per script (``self`` differs); the rest is the engine's."""

    def __init__(self, engine, entity: str | None, rng: np.random.Generator, inputs: InputState):
        self._engine = engine
        self._entity = entity
        self._views: dict[str, EntityView] = {}   # entity views handed out by entity()
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
    def camera(self) -> CameraView:
        """The live camera: set its fields (position, target, fov_deg, ...) to move it, checked
        like the [camera] table's; the window's mouse moves the same camera."""
        return CameraView(self._engine)

    @property
    def self(self):
        return self.entity(self._entity) if self._entity else None

    def entity(self, name: str):
        # Hooks ask for the same few entities every step: a view handed out before is handed
        # out again while its entity is the one of that name (a deleted and respawned one gets
        # a new view); any other name, and every refusal, goes through engine.entity.
        view = self._views.get(name) if type(name) is str else None
        if view is not None and still_current(view):
            return view
        view = self._engine.entity(name)
        if len(self._views) >= MAX_KEPT_VIEWS:
            self._views.clear()
        self._views[name] = view
        return view

    # Engine changes run shielded from the watchdog: a timeout never lands half-way through one.
    def spawn(self, name: str, **components):
        """Add an entity now: components as dataclasses or as dicts of scene-file fields."""
        with watchdog.shielded():
            return self._engine.spawn(name, components)

    def delete(self, name: str) -> None:
        with watchdog.shielded():
            self._engine.delete(name)

    def __getattr__(self, name: str):
        """``ctx.burst``, ``ctx.paint``, ...: the script actions families register
        (runtime/model/registry.py), run shielded like the engine changes above."""
        if name.startswith("_"):
            raise AttributeError(name)
        actions = script_actions()
        action = actions.get(name)
        if action is None:
            known = sorted({*actions, *(a for a in dir(type(self)) if not a.startswith("_"))})
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean ctx.{close[0]}?" if close else ""
            raise UnknownActionError(f"ctx.{name}: no such action{hint} (actions: "
                                     f"{', '.join(sorted(actions))})")
        engine = self._engine

        @functools.wraps(action)
        def run(*args, **kwargs):
            with watchdog.shielded():
                return action(engine, *args, **kwargs)

        signature = inspect.signature(action)   # what the script passes: no engine
        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=list(signature.parameters.values())[1:])
        return run

    def emit(self, name: str, data=None) -> None:
        self._engine.scripts.event(name, data)


class Script:
    def __init__(self, path: Path, context: ScriptContext, label: str,
                 timeout: float | None = DEFAULT_SCRIPT_TIMEOUT):
        self.path = path
        self.context = context
        self.label = label              # "scene" or "entity 'name'"
        self.timeout = timeout          # seconds per hook call; None or 0: no limit
        self.hooks: dict[str, object] = {}
        self.mtime: float | None = None
        self.broken: set[str] = set()   # failed hooks ("*": all); retried after the file changes
        self.started = False            # on_start has been called
        self.last_report: dict[str, float] = {}
        self.errors = 0
        self.fresh = False              # its file was looked at in this step (Scripts.update)
        self.load()

    def load(self) -> None:
        self.broken.clear()
        self.last_report.clear()   # a new version of the file: its first error is news
        self.hooks = {}
        try:
            self.mtime = os.stat(self.path).st_mtime
        except OSError:
            self.report("load", sys.exc_info())
            self.broken.add("*")
            return
        namespace = self.run_user_code("load", runpy.run_path, str(self.path),
                                       run_name=f"emberfx_script_{self.path.stem}")
        if "*" in self.broken:
            return
        for name in HOOKS:
            fn = namespace.get(name)
            if fn is None:
                continue
            problem = hook_problem(name, fn)
            if problem is not None:
                self.errors += 1
                print(f"emberfx: script error: {self.path}: {problem}; the hook is skipped until "
                      f"the file changes, the loop keeps running", file=sys.stderr, flush=True)
                continue
            self.hooks[name] = fn

    def changed(self) -> bool:
        try:
            return os.stat(self.path).st_mtime != self.mtime
        except OSError:
            return False

    def call(self, name: str, *args) -> None:
        if not self.fresh and self.changed():
            self.load()
        fn = self.hooks.get(name)
        if fn is None or name in self.broken or "*" in self.broken:
            return
        result = self.run_user_code(name, fn, self.context, *args)
        if inspect.isawaitable(result):   # a callable that is async inside (a partial, a class)
            if inspect.iscoroutine(result):
                result.close()   # never awaited: closed, so Python does not warn at exit
            self.broken.add(name)
            self.say(name, f"{name} returned {type(result).__name__} to await: hooks are called "
                           f"and never awaited, so its body does not run; {name} is skipped "
                           f"until the file changes, the loop keeps running")

    def run_user_code(self, what: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` for hook or step ``what`` ("load" imports the module): Ctrl-C
        interrupts it at once (KeyboardInterrupt is never caught here: the program ends), the
        watchdog stops it past the time limit. A failure is reported and the hook (an exception)
        or the whole script (sys.exit, a timeout, any failure to load) is skipped until the file
        changes. Returns what ``fn`` returned, or None when it failed."""
        call = watchdog.call(self.timeout)
        returned = False
        try:
            with interrupts.immediate():
                try:
                    watchdog.begin(call)
                    result = fn(*args, **kwargs)
                    returned = True
                finally:
                    watchdog.end(call)
            if call is None or not call.fired:
                return result
            # It caught its ScriptTimeout (a bare ``except:``) and returned late all the same.
            self.skip(what, f"ran past the {self.timeout:g} s limit and caught the interruption")
        except ScriptTimeout:
            watchdog.end(call)   # the timeout may have landed before end() had finished
            if call is None or not call.fired:
                raise   # an outer hook's time ran out (this one runs nested in it): it reports
            if returned:   # it landed after the hook returned late: as above
                self.skip(what, f"ran past the {self.timeout:g} s limit and caught the "
                                f"interruption")
            elif call.caught:   # it swallowed the interruption and ran on: the trace stopped it
                self.skip(what, f"ran past the {self.timeout:g} s limit and caught the "
                                f"interruption{self.where()}; it was stopped there")
            else:
                self.skip(what, f"still running after {self.timeout:g} s{self.where()}; the "
                                f"limit is --script-timeout (Python: Engine(script_timeout=...))")
        except SystemExit as exc:
            self.skip(what, f"called sys.exit({'' if exc.code is None else repr(exc.code)})"
                            f"{self.where()}; a script cannot end the program")
        except EmberError as exc:   # a ctx call the engine refused: one line, like any user error
            self.broken.add("*" if what == "load" else what)
            self.say(what, f"{exc}{self.where()}; the loop keeps running and retries after the "
                           f"file changes")
        except Exception:
            self.broken.add("*" if what == "load" else what)
            self.report(what, sys.exc_info())
        return None

    def where(self) -> str:
        """' at line N' of this script where the exception being handled was raised."""
        frames = [f for f in traceback.extract_tb(sys.exc_info()[2])
                  if Path(f.filename) == self.path]
        return f" at line {frames[-1].lineno}" if frames else ""

    def skip(self, what: str, problem: str) -> None:
        """Report ``problem`` in one line and skip the whole script until its file changes."""
        self.broken.add("*")
        self.say(what, f"{problem}; the script is skipped until its file changes, the loop "
                       f"keeps running")

    def report(self, what: str, exc_info) -> None:
        kind, exc, tb = exc_info
        if tb is not None and tb.tb_frame.f_code is Script.run_user_code.__code__:
            tb = tb.tb_next   # the script's frames, not the one that called it
        tb = "".join(traceback.format_exception(kind, exc, tb, limit=-4))
        self.say(what, f"the loop keeps running and retries after the file changes:\n{tb}")

    def say(self, what: str, message: str) -> None:
        now = time.monotonic()
        if now - self.last_report.get(what, -1e9) < 1.0:
            return   # rate-limited: a hook failing every frame prints once a second at most
        self.last_report[what] = now
        end = "" if message.endswith("\n") else "\n"
        print(f"emberfx: script error in {self.path} ({self.label}, {what}); {message}",
              file=sys.stderr, end=end, flush=True)
        self.errors += 1


class Scripts:
    """Every script of an engine's scene, called in scene order (scene script first)."""

    def __init__(self, engine, previous: Scripts | None = None, inputs: InputState | None = None):
        """``previous``: the scripts before a scene reload. A script still attached to the same
        file and entity is kept as it is (its module state, its rng); only new ones are loaded,
        and only they get on_start. ``inputs``: the window's input state to share."""
        self.engine = engine
        self.input: InputState = inputs or (previous.input if previous is not None
                                            else InputState())
        self.kept = {(s.path, s.context._entity): s for s in previous.scripts} if previous else {}
        self.scripts: list[Script] = []
        self.started: bool = previous.started if previous is not None else False
        self.policy = getattr(engine, "script_policy", None) or ScriptPolicy()
        self.events: list[Script] = []   # whose on_event is running, outermost first
        before = previous or getattr(engine, "scripts", None)   # a reload replaces that one
        self.announced: bool = before.announced if before is not None else False
        scene = engine.scene
        if not self.policy.run:
            self.announce_off(len(scene_scripts(scene)))
            return
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
        self.scripts.append(Script(Path(path), context, label, self.policy.timeout))

    def announce_off(self, count: int) -> None:
        """Say once per engine that the scene's scripts do not run, and why."""
        if count and not self.announced:
            self.announced = True
            print(f"emberfx: scripts off: {count} script{'s' if count != 1 else ''} not run "
                  f"({self.policy.off_reason})", file=sys.stderr, flush=True)

    def start(self) -> None:
        """on_start, once per script: at the first step, or when a reload adds the script."""
        if not self.started or any(not s.started for s in self.scripts):
            self.started = True
            for script in self.scripts:
                if not script.started:
                    script.started = True
                    script.call("on_start")

    def update(self, dt: float, counted_events=None) -> None:
        """on_start where due, on_event for what ``counted_events()`` returns (events counted
        on the GPU; asked only when a script has on_event), then on_update. Each file is looked
        at once for changes, before the step's first hook (a look is a stat of the file)."""
        for script in self.scripts:
            if script.changed():
                script.load()
            script.fresh = True
        try:
            self.start()
            if counted_events is not None and any("on_event" in s.hooks for s in self.scripts):
                for name, data in counted_events():
                    self.event(name, data)
            for script in self.scripts:
                script.call("on_update", dt)
        finally:
            for script in self.scripts:
                script.fresh = False

    def key(self, key: str) -> None:
        for script in self.scripts:
            script.call("on_key", key)

    def event(self, name: str, data) -> None:
        if len(self.events) >= MAX_EVENT_DEPTH:
            # The innermost on_event emitted again: the chain would end in a RecursionError.
            looping = self.events[-1]
            looping.broken.add("on_event")
            looping.say("on_event", f"ctx.emit({name!r}) from on_event nested {MAX_EVENT_DEPTH} "
                                    f"deep: its events keep re-emitting each other; on_event is "
                                    f"skipped until the file changes, the loop keeps running")
            return
        depth = len(self.events)
        try:
            for script in self.scripts:
                del self.events[depth:]
                self.events.append(script)
                script.call("on_event", name, data)
        finally:
            del self.events[depth:]   # also after a timeout of an outer hook passed through

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.scripts)
