"""What a system is: the bridge from one component family to GPU resources and passes.

The Engine owns one system object per component family present in a scene. It tells the system
when an entity with that component appears (``add``), changes a rebuild-class field
(``rebuild``) or goes away (``remove``); before each simulation step it lets the system write its
uniforms; and it asks for the system's passes whenever the set of entities changes. A system
never encodes commands itself.

A system is an esper Processor of the Engine's esper world: each step the Engine runs
``esper.process(step)``, which calls every system's ``process`` (``before_step``) by descending
``priority`` (see ``Priority``). A system sees other entities through ``query`` (an emitter, the
forces acting on it), which reads the esper world, and hears of changes through the Engine's
notices (``shared.events``, core/events.py): the World makes ``world_changed`` and
``targets_changed`` handlers of WORLD_CHANGED and TARGETS_CHANGED, a system that changed its
passes during its step sends REARRANGE, and a family announces what another family reads of it.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import esper
import numpy as np
import wgpu

from emberfx.core.bindings import PassBuilder
from emberfx.core.events import Events
from emberfx.core.frame_graph import Pass
from emberfx.core.gpu import GpuContext
from emberfx.core.resources import Resources

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
    # every GPU buffer and texture by 'owner/key' name (the frame uniform is "frame")
    resources: Resources
    # the Engine's world query (World.query): (EntityRef, component) pairs in entity order
    query: Callable[..., list[tuple[EntityRef, Any]]] = lambda *kinds: []
    # world -> clip (4x4, column vectors) of the last render into the scene target and its size;
    # None before the first render (depth-buffer collisions do nothing until then)
    drawn_view: tuple[np.ndarray, tuple[int, int]] | None = None
    fixed_dt: float = 1.0 / 60.0
    seed: int = 0
    # scene.resolve: a path written in the scene -> a real path
    resolve: Callable[[str], Path] | None = None
    scene_path: object = None  # the scene file, for messages (None: built in Python)
    scene_format: str = SCENE_FORMAT   # of the HDR colour target, resource "scene/color"
    depth_format: str = DEPTH_FORMAT
    # samples per pixel of the geometry target (frame_graph.GEOMETRY_TARGET) that solid
    # geometry draws into: the scene's [render] msaa; its pipelines are made with it
    sample_count: int = 1
    # whether systems may batch like entities into shared arenas (Engine(batching=...))
    batching: bool = True
    # by component key, the frozen tuning value a family's system is built with (the emitters':
    # Engine(emitter_tuning=...), the cloth's: Engine(cloth_tuning=...)), and under
    # step_batches.KEY every family's prewarm submissions (Engine(step_batching=...)); what is
    # missing here takes its defaults
    tuning: Mapping[str, Any] = field(default_factory=dict)
    # notices among the Engine's parts and its systems (core/events.py): a system asks for
    # ``arrange`` and a new frame graph with REARRANGE; a family announces what others read
    # of it (the vector fields' samples)
    events: Events = field(default_factory=Events)

    def tuning_value(self, key: str, default: Any, argument: str) -> Any:
        """The tuning value under ``key`` (``default`` when the Engine got none), checked to be
        of ``default``'s type; ``argument``: the Engine's keyword that gives it."""
        value = self.tuning.get(key, default)
        kind = type(default)
        if not isinstance(value, kind):
            article = "an" if kind.__name__[0] in "AEIOU" else "a"
            raise TypeError(f"Engine({argument}=...): expected {article} {kind.__name__} "
                            f"({kind.__module__}), found {type(value).__name__}")
        return value


@dataclass(frozen=True)
class Readback:
    """A region of a GPU buffer the engine reads back each step (1-2 frames late, no stall): its
    READBACK phase gathers every region into one buffer (engine/gather.py). ``offset`` and
    ``size`` are multiples of 4, and the buffer has STORAGE usage."""
    entity: str
    system: str
    resource: str    # the frame-graph name of the buffer, e.g. "fountain/counters"
    buffer: wgpu.GPUBuffer
    offset: int
    size: int


class Priority(enum.IntEnum):
    """The order systems run in each step (esper runs the higher first): what other families
    read is written before they read it."""
    FORCES = 400       # families that publish forces or fields other families read
    DYNAMICS = 300     # what forces act on: emitters, cloth
    SIMULATION = 200   # self-contained simulations: Life, particle life, fractals, trails
    POST = 100         # post effects, last


class System(esper.Processor):
    key: str = ""
    priority: int = Priority.SIMULATION

    def __init__(self, gpu: GpuContext, shared: SharedResources):
        self.gpu = gpu
        self.device = gpu.device
        self.shared = shared
        self.resources = shared.resources
        self.build = PassBuilder(gpu, shared.resources)   # passes with named bindings

    # lifecycle -------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component) -> None:
        raise NotImplementedError

    def remove(self, entity: EntityRef) -> None:
        raise NotImplementedError

    def rebuild(self, entity: EntityRef, component) -> None:
        self.detach(entity)
        try:
            self.add(entity, component)
        except Exception:
            self.resources.release(entity.name, self.key)   # what the failed add made
            raise

    def detach(self, entity: EntityRef) -> None:
        """The entity leaves this system: ``remove``, then the registry releases every resource
        the system made for it (so ``remove`` need not destroy them)."""
        try:
            self.remove(entity)
        finally:
            self.resources.release(entity.name, self.key)

    def edited(self, entity: EntityRef, component) -> None:
        """A field of the entity's component changed (a live edit, or one undone), before the
        next step: a system that caches what it packs from the component drops that. Raising
        DeviceLimitError refuses values the device cannot run: the edit is undone."""

    def arrange(self, changed: str | None = None) -> bool:
        """Regroup this system's entities' resources, e.g. like entities into shared arenas
        (their registry names stay, as views). The Engine calls it before ``world_changed``:
        when the world was built or an entity rebuilt, or a system sent REARRANGE during the
        step (``changed`` None: look at everything), and after the entity ``changed`` was spawned or
        deleted (look at that one: the cost of a spawn must not grow with the world). True
        when any resource moved (the readback is laid out again)."""
        return False

    def world_changed(self) -> None:
        """Entities were spawned or deleted (other systems' too): adapt, e.g. to new forces
        (the handler of the WORLD_CHANGED notice)."""

    def targets_changed(self) -> None:
        """The renderer made new render targets (a resize, a new background): a system that
        binds "scene/color" or sizes resources by it makes those bindings again (the handler
        of the TARGETS_CHANGED notice)."""

    def query(self, *kinds: str | type) -> list[tuple[EntityRef, Any]]:
        """Every component of the given keys (``"attractor"``) or classes in the Engine's world,
        as ``[(EntityRef, component), ...]`` in entity order (and, within an entity, in its
        component order). Cached until an entity or component comes or goes, so asking every
        step costs what it returns."""
        return self.shared.query(*kinds)

    # per frame -------------------------------------------------------------------------------
    def passes(self) -> list[Pass]:
        return []

    def shadow_casters(self) -> list[tuple[tuple[float, float, float], float]]:
        """Bounding spheres (world centre, radius) of what this system draws into the light's
        shadow map this frame; the renderer fits the shadow box to them (core/shadows.py)."""
        return []

    def presented_image(self) -> str | None:
        """The image holding the frame's final picture, when this system's passes leave it
        somewhere other than "scene/color" (post effects ping-pong between two images); the
        renderer's present pass then draws from it. Asked whenever the frame graph is rebuilt."""
        return None

    def before_step(self, step: StepInfo) -> None:
        """Write this step's uniforms (queue.write_buffer)."""

    def before_draw(self) -> None:
        """Write what only drawing reads, before each render: a live edit then shows even
        when no step runs in between (a paused window)."""

    def process(self, step: StepInfo) -> None:
        """``esper.process(step)`` calls it: this system's part of the step."""
        self.before_step(step)

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

    def script_events(self, readback: dict[str, bytes]) -> list[tuple[str, dict]]:
        """(name, data) for scripts' ``on_event`` from what the GPU counted since the last call
        (e.g. an emitter's "death:<name>"), read from the newest readback."""
        return []

    # helpers for subclasses ------------------------------------------------------------------
    def buffer(self, entity: EntityRef, key: str, size: int, usage: int, *,
               what: str | None = None, persistent: bool = True):
        """A registry buffer ``<entity>/<key>`` owned by the entity and this system; usage may
        name STORAGE, UNIFORM, INDIRECT ... flags (COPY_SRC/COPY_DST are always added)."""
        usage |= wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        return self.resources.buffer(entity.name, key, size, usage, what=what,
                                     persistent=persistent, family=self.key)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


_SCALARS = frozenset({int, float, str, bool, type(None)})


def snapshot(component) -> tuple:
    """A cheap value copy of a dataclass's fields, nested objects included, to notice a change
    by comparison: the renderer keys the camera part of the frame uniform on it (the camera is
    no entity component, so no tracking tells of its edits). Field names are looked up once
    per class and plain values are kept as they are."""
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
