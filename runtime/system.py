"""What a system is: the bridge from one component family to GPU resources and passes.

The Engine owns one system object per component family present in a scene. It tells the system
when an entity with that component appears (``add``), changes a reload-class field (``rebuild``)
or goes away (``remove``); before each simulation step and each drawn frame it lets the system
write its uniforms; and it asks for the system's passes whenever the set of entities changes.
A system never encodes commands itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import wgpu

from emberfx.frame_graph import Pass
from emberfx.gpu import GpuContext

SCENE_FORMAT = "rgba16float"   # linear HDR colour: additive particles may exceed 1 before present
DEPTH_FORMAT = "depth32float"


@dataclass(frozen=True)
class EntityRef:
    name: str    # unique in the scene; prefixes the entity's passes and resources
    index: int   # position in the scene file (seeds randomness, orders passes)
    eid: int     # esper entity id


@dataclass(frozen=True)
class StepInfo:
    frame: int       # steps taken before this one
    dt: float        # fixed_dt, seconds
    seed: int        # scene seed


@dataclass
class SharedResources:
    """Resources owned by the Engine that every system may bind."""
    frame_uniform: wgpu.GPUBuffer  # holds common/frame.wgsl's Frame
    # other entities' components (read-only use); the engine gives each world its own view
    world: WorldView = field(default_factory=lambda: WorldView({}, {}))
    fixed_dt: float = 1.0 / 60.0
    seed: int = 0
    # scene.resolve: a path written in the scene -> a real path
    resolve: Callable[[str], Path] | None = None
    scene_path: object = None  # the scene file, for messages (None: built in Python)
    # the HDR colour target (post passes read and replace it)
    scene_texture: wgpu.GPUTexture | None = None
    scene_format: str = SCENE_FORMAT
    depth_format: str = DEPTH_FORMAT


class WorldView:
    """What a system may see of the scene beyond its own components (e.g. an emitter the forces
    acting on it): ``components("attractor") -> [(EntityRef, component), ...]`` in scene order.

    The entities holding each component key are indexed, and the engine reports spawns and
    deletions (``added``, ``removed``), so a query costs what it returns: every emitter asks for
    its forces every step, and that must not grow with the number of entities."""

    def __init__(self, entities: dict[str, EntityRef], components: dict[str, dict[str, object]]):
        self._entities = entities
        self._components = components
        self._holders: dict[str, dict[str, None]] = {}   # key -> entity names, in scene order
        for name in components:
            self.added(name)

    def added(self, name: str) -> None:
        for key in self._components[name]:
            self._holders.setdefault(key, {})[name] = None

    def removed(self, name: str) -> None:
        for holders in self._holders.values():
            holders.pop(name, None)

    def components(self, *keys: str) -> list[tuple[EntityRef, object]]:
        if len(keys) == 1:
            key = keys[0]
            return [(self._entities[n], self._components[n][key])
                    for n in self._holders.get(key, ())]
        names = {n for key in keys for n in self._holders.get(key, ())}
        return [(self._entities[n], comp)
                for n in sorted(names, key=lambda n: self._entities[n].index)
                for key, comp in self._components[n].items() if key in keys]


@dataclass(frozen=True)
class Readback:
    """A region of a GPU buffer the engine copies back each step (1-2 frames late, no stall)."""
    entity: str
    system: str
    resource: str    # the frame-graph name of the buffer, e.g. "fountain/counters"
    buffer: wgpu.GPUBuffer
    offset: int
    size: int


class System:
    key: str = ""

    def __init__(self, gpu: GpuContext, shared: SharedResources):
        self.gpu = gpu
        self.device = gpu.device
        self.shared = shared

    # lifecycle -------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component) -> None:
        raise NotImplementedError

    def remove(self, entity: EntityRef) -> None:
        raise NotImplementedError

    def rebuild(self, entity: EntityRef, component) -> None:
        self.remove(entity)
        self.add(entity, component)

    def world_changed(self) -> None:
        """Entities were spawned or deleted (other systems' too): adapt, e.g. to new forces."""

    # per frame -------------------------------------------------------------------------------
    def passes(self) -> list[Pass]:
        return []

    def uploaded(self) -> set[str]:
        """Resources with contents before any pass runs (created with data or written each step)."""
        return set()

    def before_step(self, step: StepInfo) -> None:
        """Write this step's uniforms (queue.write_buffer)."""

    def readbacks(self) -> list[Readback]:
        return []

    def readbacks_of(self, entity: EntityRef) -> list[Readback]:
        """One entity's readbacks (a spawn adds just these); override when readbacks() is long."""
        return [r for r in self.readbacks() if r.entity == entity.name]

    # inspection ------------------------------------------------------------------------------
    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        return {}

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        return {}

    # helpers for subclasses ------------------------------------------------------------------
    def storage_buffer(self, label: str, size: int, *, extra_usage=0, what: str | None = None):
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        return self.gpu.buffer(label, size, usage | extra_usage, what=what)

    def uniform_buffer(self, label: str, size: int):
        return self.gpu.buffer(label, size, wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


_SCALARS = frozenset({int, float, str, bool, type(None)})


def snapshot(component) -> tuple:
    """A cheap value copy of a component's fields, nested objects included (an edit of
    ``emitter.shape.radius`` must show), to notice edits between steps. It runs twice a frame
    for every component, so field names are looked up once per class and plain values are
    kept as they are."""
    names = _FIELD_NAMES.get(type(component))
    if names is None:
        names = _FIELD_NAMES[type(component)] = tuple(f.name for f in dataclasses.fields(component))
    values = [getattr(component, name) for name in names]
    return tuple([v if type(v) in _SCALARS else _frozen(v) for v in values])


def _frozen(value):
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return tuple([v if type(v) in _SCALARS else _frozen(v) for v in value])
    if kind in _FIELD_NAMES or dataclasses.is_dataclass(value):
        return (kind, snapshot(value))   # the type too: two classes may hold equal fields
    if kind is dict:
        return tuple((k, _frozen(v)) for k, v in value.items())
    if hasattr(value, "tolist"):   # numpy: an array never compares as one bool
        return (kind, _frozen(value.tolist()))
    return value
