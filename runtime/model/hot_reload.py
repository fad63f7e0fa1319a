"""Hot reload: notice that a scene file (or a file it names) changed, and work out what to redo.

Three pieces, from pure to stateful:

- ``plan_reload(old, new, changed_files)`` compares two validated scenes entity by entity and says
  what the Engine must do: spawn, delete, respawn (the set of components changed), update fields
  in place (through the live-edit path: each changed field's declared change class, see
  components.py, decides between a uniform write, new passes and a rebuild of that entity),
  rebuild an entity whose pattern file changed on disk, or restart the whole
  world (the seed or fixed_dt changed: every entity's history depends on them; the ``[render]``
  sample count changed: every solid draw's pipeline depends on it). Entities that did
  not change keep their GPU state.
- ``SceneWatcher`` polls modification times of the scene file and of the files its components
  name (``PATH_FIELDS``, e.g. Life patterns). Scripts are watched by runtime/engine/scripting.py
  itself.
- ``HotReloader`` ties them to an Engine for the frame loop: on a change it loads the scene; an
  invalid edit is reported once (console, and ``error`` for the window's title and inspector) and
  the last good scene keeps running.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from emberfx.core.errors import EmberError


@dataclass
class ReloadPlan:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    respawned: list[str] = field(default_factory=list)
    updated: list[tuple[str, str]] = field(default_factory=list)     # (entity, component key)
    refreshed: list[tuple[str, str]] = field(default_factory=list)   # a file it reads changed
    restart: bool = False          # seed, fixed_dt or [render] changed: rebuild every entity
    camera: bool = False
    background: bool = False
    scripts: bool = False          # a script path was added, removed or changed
    settings: bool = False         # anything else in [scene] or [bindings] (name, size, ...)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.respawned or self.updated
                    or self.refreshed or self.restart or self.camera or self.background
                    or self.scripts or self.settings)

    def summary(self) -> str:
        if self.empty:
            return "no changes"
        if self.restart:
            return "seed, fixed_dt or [render] changed: restarted every entity"
        parts = []
        for label, names in (("added", self.added), ("removed", self.removed),
                             ("rebuilt", self.respawned)):
            if names:
                parts.append(f"{label} {', '.join(names)}")
        if self.updated:
            parts.append("updated " + ", ".join(f"{n}.{k}" for n, k in self.updated))
        if self.refreshed:
            parts.append("re-read " + ", ".join(f"{n}.{k}" for n, k in self.refreshed))
        parts += [what for what, flag in (("camera", self.camera), ("background", self.background),
                                          ("scripts", self.scripts), ("settings", self.settings))
                  if flag]
        return "; ".join(parts)


def component_files(scene, spec) -> dict[str, list[Path]]:
    """Component key -> the files its ``PATH_FIELDS`` name, resolved against the scene."""
    from emberfx.model.component_values import path_values

    out: dict[str, list[Path]] = {}
    for key, component in spec.components.items():
        for _, item in path_values(component):
            out.setdefault(key, []).append(scene.resolve(item))
    return out


def plan_reload(old, new, changed_files=()) -> ReloadPlan:
    """What turns the running ``old`` scene into ``new``. Pure: no GPU, no Engine."""
    changed = {Path(os.path.abspath(f)) for f in changed_files}
    plan = ReloadPlan()
    a, b = old.settings, new.settings
    # a new sample count remakes every pipeline that draws into the multisampled target
    plan.restart = ((a.seed, a.fixed_dt) != (b.seed, b.fixed_dt)
                    or old.render != new.render)
    plan.camera = old.camera != new.camera
    plan.background = a.background != b.background
    old_specs = {s.name: s for s in old.entities}
    new_specs = {s.name: s for s in new.entities}
    plan.scripts = (a.script != b.script or old.path != new.path
                    or {n: s.script for n, s in old_specs.items()}
                    != {n: s.script for n, s in new_specs.items()})
    same = {f.name for f in dataclasses.fields(a)} - {"seed", "fixed_dt", "background", "script"}
    plan.settings = (any(getattr(a, f) != getattr(b, f) for f in same)
                     or old.bindings != new.bindings)
    plan.removed = [n for n in old_specs if n not in new_specs]
    plan.added = [n for n in new_specs if n not in old_specs]
    for name, spec in new_specs.items():
        before = old_specs.get(name)
        if before is None:
            continue
        if list(before.components) != list(spec.components):
            plan.respawned.append(name)
            continue
        files = component_files(new, spec)
        for key, component in spec.components.items():
            if component != before.components[key]:
                plan.updated.append((name, key))
            elif changed & set(files.get(key, ())):
                plan.refreshed.append((name, key))
    return plan


class SceneWatcher:
    """Modification times of a scene file and the files its components read."""

    def __init__(self, scene):
        self.path = Path(scene.path)
        self.stamps = self._stamps(scene)

    def _stamps(self, scene) -> dict[Path, float | None]:
        files = [self.path]
        for spec in scene.entities:
            for paths in component_files(scene, spec).values():
                files += paths
        return {f: _mtime(f) for f in files}

    def changed(self) -> set[Path]:
        """The watched files whose modification time differs from the last look."""
        return {f for f, stamp in self.stamps.items() if _mtime(f) != stamp}

    def accept(self, scene=None) -> None:
        """Take the current times as seen (after a reload, or after reporting a bad edit once);
        with a new scene, watch the files that one names."""
        self.stamps = self._stamps(scene) if scene is not None else {
            f: _mtime(f) for f in self.stamps}


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None   # deleted for a moment (editors that write a new file and rename it)


class HotReloader:
    """Polls a running Engine's scene file and applies edits; never raises into the frame loop."""

    def __init__(self, engine, interval: float = 0.25, out=None):
        self.engine = engine
        self.interval = interval
        self.out = out            # None: sys.stderr as it is when a message is printed
        self.watcher = SceneWatcher(engine.scene) if engine.scene.path is not None else None
        self.next_poll = 0.0
        self.error: str | None = None    # the last bad edit, until a good one replaces it
        self.last_message: str | None = None

    def poll(self, force: bool = False) -> str | None:
        """Reload when a watched file changed (or always, with ``force``: the R key).
        Returns what happened, or None when nothing was due."""
        if self.watcher is None:
            return None
        now = time.monotonic()
        if not force and now < self.next_poll:
            return None
        self.next_poll = now + self.interval
        changed = self.watcher.changed()
        if not changed and not force:
            return None
        return self._reload(changed)

    def _reload(self, changed: set[Path]) -> str:
        from emberfx.model.scene import load_scene

        watcher = self.watcher
        assert watcher is not None   # poll() reloads only a scene read from a file
        path = watcher.path
        try:
            scene = load_scene(path)
            plan = self.engine.reload(scene, changed)
        except EmberError as exc:
            # Seen once: don't report the same broken file on every poll, wait for the next save.
            watcher.accept()
            self.error = str(exc)
            return self._say(f"reload failed, the last good scene keeps running: {exc}")
        watcher.accept(scene)
        self.error = None
        return self._say(f"reloaded {path.name}: {plan.summary()}")

    def _say(self, message: str) -> str:
        self.last_message = message
        print(f"emberfx: {message}", file=self.out or sys.stderr, flush=True)
        return message
