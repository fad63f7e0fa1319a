"""Reload transactions: turn the running scene into a new version of it (``Engine.reload``).

hot_reload.plan_reload compares the two versions; the plan is applied here. Unchanged entities
keep their GPU state; edited components take the new values; added, removed and respawned
entities go through the Engine's spawn and delete. Each applied change records how to undo it,
so when a later one fails (a capacity the device refuses) everything is undone, newest first,
and the last good scene keeps running. A new seed or timestep restarts the world instead.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from emberfx.core.clock import FixedClock
from emberfx.engine.engine_guard import checked_scene
from emberfx.engine.live_edits import copy_fields
from emberfx.model.colors import linear_color


class Reloader:
    """Applies reload plans to ``engine`` through its public methods and its entity store.
    ``build_world`` and ``release_world`` make and drop the world with its readbacks, ``sync``
    applies pending live edits, ``lay_out_readback`` lays out the readbacks again (after a
    rebuild), ``retarget`` remakes the render targets for a new background colour, and
    ``adopt(scene=, clock=, camera=, scripts=)`` sets what the reload changes of the Engine
    itself (the given ones): the Reloader reads the Engine's fields but never writes them."""

    def __init__(self, engine, world, *, build_world: Callable[[], None],
                 release_world: Callable[[], None], sync: Callable[[], list],
                 lay_out_readback: Callable[[], None], retarget: Callable[[tuple], None],
                 adopt: Callable[..., None]):
        self.engine = engine
        self.world = world
        self._build_world = build_world
        self._release_world = release_world
        self._sync = sync
        self._lay_out_readback = lay_out_readback
        self._retarget = retarget
        self._adopt = adopt

    def reload(self, scene, changed_files=()):
        from emberfx.engine.scripting import Scripts, check_script_locations
        from emberfx.model.hot_reload import plan_reload

        engine = self.engine
        scene = checked_scene(scene, "reload(scene)")
        check_script_locations(scene, engine.script_policy)   # refused before anything changes
        plan = plan_reload(engine.scene, scene, changed_files)
        if plan.restart:
            self.restart(scene)
        elif not plan.empty:
            self.apply(plan, scene)
        if plan.camera or scene.settings.size != engine.scene.settings.size:
            self._adopt(camera=scene.camera.with_reference(scene.settings.size))
        if plan.background:
            self._retarget(linear_color(scene.settings.background))
        old_scene = engine.scene
        self._adopt(scene=scene)
        if plan.scripts or plan.restart or scene.path != old_scene.path:
            if plan.restart:   # a new world starts its scripts afresh (the window's input stays)
                self._adopt(scripts=Scripts(engine, inputs=engine.scripts.input))
            else:
                self._adopt(scripts=Scripts(engine, previous=engine.scripts))
                if engine.scripts.started:
                    engine.scripts.start()   # on_start for the scripts the edit added
        return plan

    def apply(self, plan, scene) -> None:
        """The plan's changes in place, each with its undo; on failure all are undone."""
        engine, world = self.engine, self.world
        new_specs = {s.name: s for s in scene.entities}
        undo: list[Callable[..., object]] = []   # run newest-first when a later step fails
        try:
            for name, key in plan.updated:   # edits as any other: marked, then synced
                live = world.live_component(name, key)
                before = copy.deepcopy(live)
                undo.append(lambda live=live, before=before: copy_fields(before, live))
                copy_fields(new_specs[name].components[key], live)
            self._sync()
            for name, key in plan.refreshed:
                world.systems[key].rebuild(world.entities[name], world.live_component(name, key))
            if plan.refreshed:   # rebuilt passes and readbacks: the frame graph is made again
                self._lay_out_readback()
            for name in plan.added:
                engine.spawn(name, copy.deepcopy(new_specs[name].components))
                undo.append(lambda name=name: engine.delete(name))
            for name in plan.respawned:
                old = world.components_of(name)
                engine.delete(name)
                undo.append(lambda name=name, old=old: engine.spawn(name, old))
                engine.spawn(name, copy.deepcopy(new_specs[name].components))
                undo.append(lambda name=name: engine.delete(name))
        except Exception:
            for step in reversed(undo):
                step()
            self._sync()   # rebuild what the restored fields need
            self._lay_out_readback()
            raise
        for name in plan.removed:
            engine.delete(name)

    def restart(self, scene) -> None:
        """A new world for a new seed or timestep. If the new one cannot be built, the old
        scene starts again from its beginning (its GPU state went with its world)."""
        old_scene, old_clock = self.engine.scene, self.engine.clock
        self._release_world()
        self.world.renew()
        self._adopt(scene=scene, clock=FixedClock(scene.settings.fixed_dt))
        try:
            self._build_world()
        except Exception:
            self._release_world()
            self.world.renew()
            self._adopt(scene=old_scene, clock=old_clock)
            self._build_world()
            raise
