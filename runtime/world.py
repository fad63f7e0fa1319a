"""The Engine's entity store: its esper world, the entities by name, their live components and
the systems that run them.

Entities are kept in index order (scene order, then spawns). Each live component has a
``live_edits.Committed`` record under (entity, key), which live_edits.py uses to notice edits.
The store makes no GPU passes and reads nothing back; the Engine tells the renderer and
telemetry when the set of entities changed.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools

import esper

from emberfx import live_edits, registry
from emberfx.engine_guard import in_world
from emberfx.errors import EmberError
from emberfx.system import EntityRef, SharedResources, StepInfo, System, WorldView

_world_ids = itertools.count()


@dataclasses.dataclass(frozen=True)
class Name:
    """The esper component that carries an entity's scene name."""
    value: str


class EntityView:
    """``engine.entity("fountain")``: the entity's live components as attributes."""

    def __init__(self, name: str, components: dict[str, object]):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_components", components)

    def __getattr__(self, key: str):
        try:
            return self._components[key]
        except KeyError:
            raise AttributeError(f"entity '{self.name}' has no component '{key}'; it has: "
                                 f"{', '.join(self._components) or 'none'}") from None

    def __setattr__(self, key, value):
        raise AttributeError("edit the component's fields, e.g. entity.emitter.rate = 500.0")

    def __dir__(self):
        return list(self._components)


class World:
    """Entities, components and systems of one Engine, in an esper world of their own."""

    def __init__(self, gpu, shared: SharedResources):
        self.gpu = gpu
        self.shared = shared
        self.esper_world = f"emberfx-{next(_world_ids)}"
        self.entities: dict[str, EntityRef] = {}
        self.components: dict[str, dict[str, object]] = {}
        self.systems: dict[str, System] = {}   # by component key; several keys may share one
        self.snapshots: dict[tuple[str, str], live_edits.Committed] = {}
        self._added: list[tuple[str, str]] = []   # (component key, entity) with GPU resources

    # building and releasing --------------------------------------------------------------------
    def build(self, specs) -> None:
        """Create the scene's entities (``EntitySpec`` list) and give them to their systems."""
        self.entities, self.components, self.systems = {}, {}, {}
        self._added = []
        for index, spec in enumerate(specs):
            components = {k: copy.deepcopy(c) for k, c in spec.components.items()}
            with in_world(self.esper_world):
                eid = esper.create_entity(Name(spec.name), *components.values())
            self.entities[spec.name] = EntityRef(spec.name, index, eid)
            self.components[spec.name] = components
        self.shared.world = WorldView(self.entities, self.components)
        self.snapshots = {}
        types = registry.component_types()
        for name in self.components:
            self.attach(name, types)

    def release(self) -> None:
        """Every entity leaves its systems (their GPU resources go) and the esper world is
        deleted; ``renew`` then gives a later ``build`` a fresh one."""
        for key, name in reversed(self._added):
            self.systems[key].remove(self.entities[name])
        self._added = []
        self.systems = {}
        with in_world("default"), contextlib.suppress(KeyError):   # KeyError: never created
            esper.delete_world(self.esper_world)

    def renew(self) -> None:
        self.esper_world = f"emberfx-{next(_world_ids)}"

    def attach(self, name: str, types=None) -> None:
        """Give each of the entity's components to its system (GPU resources are made here)."""
        types = types or registry.component_types()
        for key, component in self.components[name].items():
            self.snapshots[(name, key)] = live_edits.committed(component)
            system_cls = types[key].system
            if system_cls is None:
                continue
            if key not in self.systems:
                # one object per system class: a system may own several component keys
                shared = next((s for s in self.systems.values() if type(s) is system_cls), None)
                self.systems[key] = shared or system_cls(self.gpu, self.shared)
            self.systems[key].add(self.entities[name], component)
            self._added.append((key, name))

    # entities at run time ----------------------------------------------------------------------
    def add(self, name: str, components: dict[str, object]) -> EntityRef:
        """A new entity with validated ``components``, not yet given to its systems."""
        with in_world(self.esper_world):
            eid = esper.create_entity(Name(name), *components.values())
        # the last entity has the highest index: looking it up costs the same at any size
        last = next(reversed(self.entities.values()), None)
        ref = EntityRef(name, last.index + 1 if last is not None else 0, eid)
        self.entities[name] = ref
        self.components[name] = components
        self.shared.world.added(name)
        return ref

    def remove(self, ref: EntityRef) -> None:
        """The entity leaves its systems, the esper world and the name index."""
        name = ref.name
        for key, owner in list(self._added):
            if owner == name:
                self.systems[key].remove(ref)
                self._added.remove((key, owner))
        with in_world(self.esper_world):
            esper.delete_entity(ref.eid, immediate=True)
        for key in self.components.pop(name):
            self.snapshots.pop((name, key), None)
        del self.entities[name]
        self.shared.world.removed(name)

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
        return EntityView(ref.name, self.components[ref.name])

    def system_of(self, ref: EntityRef, key: str):
        components = self.components[ref.name]
        if key not in components or key not in self.systems:
            raise EmberError(f"entity '{ref.name}' has no {key} system; its components: "
                             f"{', '.join(components) or 'none'}")
        return self.systems[key]

    def systems_of(self, name: str) -> list:
        """The system objects that run entity ``name``'s components, each once."""
        systems = {id(s): s for key in self.components[name]
                   if (s := self.systems.get(key)) is not None}
        return list(systems.values())

    def system_objects(self) -> list:
        """Each system object once (several component keys may share one)."""
        return list({id(s): s for s in self.systems.values()}.values())

    # what the systems report -------------------------------------------------------------------
    def before_step(self, info: StepInfo) -> None:
        for system in self.system_objects():
            system.before_step(info)

    def world_changed(self) -> None:
        """After a spawn or delete: the systems adapt (e.g. to a new force)."""
        for system in self.system_objects():
            system.world_changed()

    def state(self, ref: EntityRef) -> dict:
        out: dict = {}
        for key in self.components[ref.name]:
            system = self.systems.get(key)
            if system is not None:
                out.update(system.state(ref))
        return out

    def stats(self, per_entity: dict[str, bytes]) -> dict[str, dict]:
        """Each entity's counters as its systems read them from the gathered readback bytes."""
        entities = {}
        for name, components in self.components.items():
            info: dict = {}
            for key in components:
                system = self.systems.get(key)
                if system is not None:
                    info.update(system.stats(self.entities[name], per_entity))
            entities[name] = info
        return entities
