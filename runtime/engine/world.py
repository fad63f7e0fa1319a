"""The Engine's world: its esper world (the entities, their components, the systems that run
them) and the entities by name.

The World wires its systems to the Engine's notices (core/events.py): each system's
``world_changed`` and ``targets_changed`` hear WORLD_CHANGED and TARGETS_CHANGED from the
moment the system is made until the world is released, and a REARRANGE from a system during a
step sets ``rearrange_due``, which the Engine looks at before the step encodes.

Every scene entity is an esper entity of the Engine's own esper world, holding a ``Name`` and its
components (the registered dataclasses): there is no other component store. ``entities`` maps
names to EntityRefs in index order (scene order, then spawns). Systems are esper Processors of
that world, run by ``process`` in their priority order.

Each live component is tracked (components.py): an edit of it marks (entity, key) in ``dirty``,
and live_edits.py looks at the dirty ones only, against ``last_valid``, the copy of each
component's last valid values. The store makes no GPU passes and reads nothing back; the Engine
tells the renderer and telemetry when the set of entities changed.

esper's current world is process-global: every esper call here runs in ``visiting`` (the
Engine's world, then the caller's again), so the store works from an Engine method, from a system
during a step and from user code between calls alike.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import esper

from emberfx.core.errors import EmberError, SceneError
from emberfx.core.events import REARRANGE, TARGETS_CHANGED, WORLD_CHANGED
from emberfx.core.system import EntityRef, SharedResources, StepInfo, System
from emberfx.engine import live_edits
from emberfx.engine.engine_guard import switch_to, visiting
from emberfx.model import registry
from emberfx.model.components import Tracked, track, untrack
from emberfx.model.scene_fields import show

_world_ids = itertools.count()


@dataclasses.dataclass(frozen=True)
class Name:
    """The esper component that carries an entity's scene name."""
    value: str


class EntityGoneError(EmberError, AttributeError):
    """An EntityView read after its entity was deleted, or its Engine closed or restarted."""


class EntityView:
    """``engine.entity("fountain")``: the entity's live components as attributes, read from the
    esper world each time (``view.emitter is esper.component_for_entity(eid, Emitter)``)."""

    __slots__ = ("name", "eid", "_world", "_esper_world")

    def __init__(self, world: World, ref: EntityRef):
        object.__setattr__(self, "name", ref.name)
        object.__setattr__(self, "eid", ref.eid)
        object.__setattr__(self, "_world", world)
        object.__setattr__(self, "_esper_world", world.esper_world)

    def __getattr__(self, key: str):
        if key.startswith("_"):
            raise AttributeError(key)
        self._check_alive()
        component = self._world.live_component(self.name, key)
        if component is None:
            raise AttributeError(f"entity '{self.name}' has no component '{key}'; it has: "
                                 f"{', '.join(self._components()) or 'none'}")
        return component

    def _check_alive(self) -> None:
        if not still_current(self):
            raise EntityGoneError(f"entity '{self.name}' no longer exists in its Engine (deleted, "
                                  f"or the Engine was closed or restarted its world)")

    def _components(self) -> dict[str, Any]:
        self._check_alive()
        return self._world.components_of(self.name)

    def __setattr__(self, key, value):
        raise SceneError("live edit", f"expected an edit of the component's fields (e.g. "
                         f"entity.emitter.rate = 500.0; engine.delete and engine.spawn remove "
                         f"and add entities), found {key} = {show(value, 40)}", entity=self.name,
                         field=key)

    def __dir__(self):
        return list(self._components())

    def __repr__(self) -> str:
        return f"<EntityView '{self.name}'>"


def still_current(view: EntityView) -> bool:
    """Whether the view's entity is still the one of its name in an open world: what
    ``engine.entity(view.name)`` would give now is an equal view."""
    world = view._world
    ref = world.entities.get(view.name)
    return not (world.released or world.esper_world != view._esper_world or ref is None
                or ref.eid != view.eid)


class WorldHandle:
    """``engine.world``: the Engine's esper world, to read it with esper directly::

        with engine.world:                  # esper's current world until the block ends
            for eid, (name, emitter) in esper.get_components(Name, Emitter): ...
        engine.world.get_components(Name, Emitter)   # the same, switching for this call only
        engine.world.entity("fountain")              # the esper entity id

    The components are the live ones: an edit of a field is an edit of the scene, as through
    ``engine.entity``."""

    def __init__(self, world: World, check: Callable[[], None],
                 ref: Callable[[str], EntityRef]):
        self._world = world
        self._check = check     # the Engine is open and this is its thread
        self._ref = ref         # entity name -> EntityRef, or the Engine's error
        self._previous: list[str] = []

    @property
    def name(self) -> str:
        """The esper world's name (``esper.switch_world(engine.world.name)``)."""
        return self._world.esper_world

    def __enter__(self) -> WorldHandle:
        self._check()
        self._previous.append(switch_to(self.name))
        return self

    def __exit__(self, *exc) -> None:
        previous = self._previous.pop()
        switch_to(previous if previous in esper.list_worlds() else "default")

    def get_components(self, *classes: type) -> list[tuple[int, tuple[Any, ...]]]:
        """``esper.get_components(*classes)`` in this world."""
        self._check()
        with visiting(self.name):
            return list(esper.get_components(*classes))

    def get_component(self, cls: type) -> list[tuple[int, Any]]:
        """``esper.get_component(cls)`` in this world."""
        self._check()
        with visiting(self.name):
            return list(esper.get_component(cls))

    def entity(self, name: str) -> int:
        """The esper entity id of the entity called ``name``."""
        self._check()
        return self._ref(name).eid


class World:
    """Entities, components and systems of one Engine, in an esper world of their own."""

    def __init__(self, gpu, shared: SharedResources):
        self.gpu = gpu
        self.shared = shared
        self.esper_world = f"emberfx-{next(_world_ids)}"
        self.released = False
        self.entities: dict[str, EntityRef] = {}
        self.systems: dict[str, System] = {}   # by component key; several keys may share one
        self._system_list: tuple | None = None  # system_objects(), until a system is added
        # (entity, key) -> the component's last valid values; edited since the last sync, with
        # the fields set (None: any field may have changed, e.g. a nested one)
        self.last_valid: dict[tuple[str, str], live_edits.Committed] = {}
        self.dirty: dict[tuple[str, str], set[str] | None] = {}
        self._quiet = 0   # > 0 while live_edits writes components itself
        self._added: list[tuple[str, str]] = []   # (component key, entity) with GPU resources
        self._queries: dict[tuple, tuple[tuple, list]] = {}   # classes -> (esper's lists, result)
        self._query_classes: dict[tuple, tuple[type, ...]] = {}
        shared.query = self.query
        # a system changed its passes during the step: arrange before the step encodes
        self.rearrange_due = False
        shared.events.set_handler(REARRANGE, self._rearrange_requested)

    # building and releasing --------------------------------------------------------------------
    def build(self, specs) -> None:
        """Create the scene's entities (``EntitySpec`` list) and give them to their systems."""
        self.entities, self.systems, self.last_valid, self.dirty = {}, {}, {}, {}
        self._system_list = None
        self._added, self._queries, self._query_classes = [], {}, {}
        self.released = False
        with visiting(self.esper_world):
            for index, spec in enumerate(specs):
                components = [copy.deepcopy(c) for c in spec.components.values()]
                eid = esper.create_entity(Name(spec.name), *components)
                self.entities[spec.name] = EntityRef(spec.name, index, eid)
        types = registry.component_types()
        for name in self.entities:
            self.attach(name, types)

    def release(self) -> None:
        """Every entity leaves its systems (their GPU resources go) and the esper world is
        deleted; ``renew`` then gives a later ``build`` a fresh one."""
        if self.released:
            return
        for key, name in reversed(self._added):
            self.systems[key].detach(self.entities[name])
        self._added = []
        with visiting(self.esper_world):
            for system in self.system_objects():
                esper.remove_processor(type(system))
        for _, components in self._all_components():
            for component in components.values():
                untrack(component)   # references kept elsewhere edit nothing any more
        for system in self.system_objects():   # they hear no notice any more
            self.shared.events.forget(system)
        self.shared.events.forget_announcements()
        self.systems, self._system_list = {}, None
        self._queries, self._query_classes = {}, {}
        # esper cannot delete the current world; the caller's own world stays current
        with visiting("default"), contextlib.suppress(KeyError):   # KeyError: never created
            esper.delete_world(self.esper_world)
        self.released = True

    def renew(self) -> None:
        self.esper_world = f"emberfx-{next(_world_ids)}"

    def attach(self, name: str, types=None) -> None:
        """Track each of the entity's components and give it to its system (GPU resources are
        made here)."""
        types = types or registry.component_types()
        ref = self.entities[name]
        for key, component in self.components_of(name).items():
            if not isinstance(component, Tracked):
                raise RuntimeError(f"component class {type(component).__qualname__} ('{key}'): "
                                   f"expected a subclass of emberfx.model.components.Tracked")
            track(component, functools.partial(self._mark, name, key))
            self.last_valid[(name, key)] = live_edits.committed(component)
            system_cls = types[key].system
            if system_cls is None:
                continue
            if key not in self.systems:
                # one object per system class: a system may own several component keys
                system = next((s for s in self.systems.values() if type(s) is system_cls), None)
                if system is None:
                    system = system_cls(self.gpu, self.shared)
                    with visiting(self.esper_world):
                        esper.add_processor(system, system.priority)
                    self.shared.events.set_handler(WORLD_CHANGED, system.world_changed)
                    self.shared.events.set_handler(TARGETS_CHANGED, system.targets_changed)
                self.systems[key], self._system_list = system, None
            self.systems[key].add(ref, component)
            self._added.append((key, name))

    # change tracking ---------------------------------------------------------------------------
    def _mark(self, name: str, key: str, field: str | None = None) -> None:
        if not self._quiet:
            self.mark_dirty((name, key), None if field is None else {field})

    def mark_dirty(self, edit: tuple[str, str], fields: set[str] | None) -> None:
        """(entity, component key) has edits to look at: in ``fields`` (None: in any field)."""
        if edit not in self.dirty:
            self.dirty[edit] = None if fields is None else set(fields)
            return
        known = self.dirty[edit]
        if known is None or fields is None:
            self.dirty[edit] = None
        else:
            known.update(fields)

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Component writes that are no edit (live_edits restoring or normalising values)."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    # entities at run time ----------------------------------------------------------------------
    def add(self, name: str, components: dict[str, object]) -> EntityRef:
        """A new entity with validated ``components``, not yet given to its systems."""
        with visiting(self.esper_world):
            eid = esper.create_entity(Name(name), *components.values())
        # the last entity has the highest index: looking it up costs the same at any size
        last = next(reversed(self.entities.values()), None)
        ref = EntityRef(name, last.index + 1 if last is not None else 0, eid)
        self.entities[name] = ref
        return ref

    def remove(self, ref: EntityRef) -> None:
        """The entity leaves its systems, the esper world and the name index."""
        name = ref.name
        for key, owner in list(self._added):
            if owner == name:
                self.systems[key].detach(ref)
                self._added.remove((key, owner))
        for key, component in self.components_of(name).items():
            untrack(component)   # a reference kept elsewhere edits nothing any more
            self.last_valid.pop((name, key), None)
            self.dirty.pop((name, key), None)
        with visiting(self.esper_world):
            esper.delete_entity(ref.eid, immediate=True)
        del self.entities[name]

    # lookups -----------------------------------------------------------------------------------
    def ref(self, name: str, scene_name: str) -> EntityRef:
        """The entity called ``name`` (already checked to be a string), or an error naming
        ``scene_name`` and the closest existing name."""
        if name not in self.entities:
            import difflib

            close = difflib.get_close_matches(name, self.entities, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise EmberError(f"no entity named '{name}' in scene '{scene_name}'{hint}")
        return self.entities[name]

    def view(self, ref: EntityRef) -> EntityView:
        return EntityView(self, ref)

    def components_of(self, name: str) -> dict[str, Any]:
        """The entity's live components by key, in the order they were given, from esper."""
        with visiting(self.esper_world):
            found: tuple[Any, ...] = esper.components_for_entity(self.entities[name].eid)
        out = {}
        for component in found:
            key = registry.component_key(type(component))
            if key is not None:
                out[key] = component
        return out

    def live_component(self, name: str, key: str) -> Any | None:
        """The entity's ``key`` component, or None (no such entity or component)."""
        ref, registered = self.entities.get(name), registry.component_type(key)
        if ref is None or registered is None:
            return None
        with visiting(self.esper_world):
            return esper.try_component(ref.eid, registered.cls)

    def _all_components(self) -> list[tuple[str, dict[str, Any]]]:
        with visiting(self.esper_world):
            return [(name, self.components_of(name)) for name in self.entities]

    def query(self, *kinds: str | type) -> list[tuple[EntityRef, Any]]:
        """Every component of these keys or classes: ``[(EntityRef, component), ...]`` in entity
        order, and within an entity in its component order (System.query). The result is kept
        while esper's own cached lists for the classes stay the same objects: esper makes new
        ones only after an entity or component came or went."""
        classes = self._query_classes.get(kinds)
        if classes is None:
            classes = self._query_classes[kinds] = tuple(self._class_of(k) for k in kinds)
        with visiting(self.esper_world):
            found: tuple[list, ...] = tuple(esper.get_component(cls) for cls in classes)
            cached = self._queries.get(classes)
            if cached is None or any(a is not b for a, b in zip(cached[0], found)):
                cached = self._queries[classes] = (found, self._in_order(found))
        return list(cached[1])

    @staticmethod
    def _class_of(kind: str | type) -> type:
        if isinstance(kind, type):
            return kind
        registered = registry.component_type(kind)
        if registered is None:
            raise EmberError(f"query: no component is registered under the key '{kind}'; "
                             f"registered: {', '.join(registry.component_types())}")
        return registered.cls

    def _in_order(self, found: tuple) -> list[tuple[EntityRef, Any]]:
        """(EntityRef, component) for esper's (eid, component) lists, sorted by entity index
        and then by the component's place in its entity (called inside ``visiting``)."""
        rows = []
        for pairs in found:
            for eid, component in pairs:
                name = esper.try_component(eid, Name)
                ref = self.entities.get(name.value) if name is not None else None
                if ref is None or ref.eid != eid:
                    continue   # not a scene entity (made with esper directly)
                place = 0
                if len(found) > 1:
                    held: tuple[Any, ...] = esper.components_for_entity(eid)
                    place = next(i for i, c in enumerate(held) if c is component)
                rows.append((ref.index, place, ref, component))
        rows.sort(key=lambda row: (row[0], row[1]))
        return [(ref, component) for _, _, ref, component in rows]

    def system_of(self, ref: EntityRef, key: str):
        components = self.components_of(ref.name)
        if key not in components or key not in self.systems:
            raise EmberError(f"entity '{ref.name}' has no {key} system; its components: "
                             f"{', '.join(components) or 'none'}")
        return self.systems[key]

    def systems_of(self, name: str) -> list:
        """The system objects that run entity ``name``'s components, each once."""
        systems = {id(s): s for key in self.components_of(name)
                   if (s := self.systems.get(key)) is not None}
        return list(systems.values())

    def system_objects(self) -> tuple:
        """Each system object once (several component keys may share one)."""
        if self._system_list is None:
            self._system_list = tuple({id(s): s for s in self.systems.values()}.values())
        return self._system_list

    # what the systems do and report ------------------------------------------------------------
    def process(self, info: StepInfo) -> None:
        """One step of every system (``before_step``), by descending priority: esper.process."""
        with visiting(self.esper_world):
            esper.process(info)

    def _rearrange_requested(self) -> None:
        self.rearrange_due = True

    def arrange(self, changed: str | None = None) -> bool:
        """Every system regroups its entities' resources (System.arrange); True when any
        moved."""
        if changed is None:
            self.rearrange_due = False
        moved = [system.arrange(changed) for system in self.system_objects()]
        return any(moved)

    def world_changed(self) -> None:
        """After a spawn or delete: the systems adapt (e.g. to a new force), each hearing the
        WORLD_CHANGED notice in the order the systems were made."""
        self.shared.events.dispatch_event(WORLD_CHANGED)

    def state(self, ref: EntityRef) -> dict:
        out: dict = {}
        for key in self.components_of(ref.name):
            system = self.systems.get(key)
            if system is not None:
                out.update(system.state(ref))
        return out

    def stats(self, per_entity: dict[str, bytes]) -> dict[str, dict]:
        """Each entity's counters as its systems read them from the gathered readback bytes."""
        entities = {}
        for name, components in self._all_components():
            info: dict = {}
            for key in components:
                system = self.systems.get(key)
                if system is not None:
                    info.update(system.stats(self.entities[name], per_entity))
            entities[name] = info
        return entities
