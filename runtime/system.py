"""What a system is: the bridge from one component family to GPU resources and passes.

The Engine owns one system object per component family present in a scene. It tells the system
when an entity with that component appears (``add``), changes a reload-class field (``rebuild``)
or goes away (``remove``); before each simulation step and each drawn frame it lets the system
write its uniforms; and it asks for the system's passes whenever the set of entities changes.
A system never encodes commands itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

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
    frame_uniform: object      # GPUBuffer holding common/frame.wgsl's Frame
    world: object = None       # WorldView: other entities' components (read-only use)
    fixed_dt: float = 1.0 / 60.0
    seed: int = 0
    resolve: object = None     # scene.resolve: a path written in the scene -> a real path
    scene_texture: object = None   # the HDR colour target (post passes read and replace it)
    scene_format: str = SCENE_FORMAT
    depth_format: str = DEPTH_FORMAT


class WorldView:
    """What a system may see of the scene beyond its own components (e.g. an emitter the forces
    acting on it): ``components("attractor") -> [(EntityRef, component), ...]`` in scene order."""

    def __init__(self, entities: dict[str, EntityRef], components: dict[str, dict[str, object]]):
        self._entities = entities
        self._components = components

    def components(self, *keys: str) -> list[tuple[EntityRef, object]]:
        return [(self._entities[name], comp) for name, comps in self._components.items()
                for key, comp in comps.items() if key in keys]


@dataclass(frozen=True)
class Readback:
    """A region of a GPU buffer the engine copies back each step (1-2 frames late, no stall)."""
    entity: str
    system: str
    resource: str    # the frame-graph name of the buffer, e.g. "fountain/counters"
    buffer: object
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


def snapshot(component) -> tuple:
    """A cheap value copy of a component's fields, to notice edits between steps (twice a frame
    for every component, so the field names are looked up once per class)."""
    names = _FIELD_NAMES.get(type(component))
    if names is None:
        names = _FIELD_NAMES[type(component)] = tuple(f.name for f in dataclasses.fields(component))
    values = [getattr(component, name) for name in names]
    return tuple(tuple(v) if isinstance(v, list) else v for v in values)
