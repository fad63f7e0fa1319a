"""What the emitter family's modules may use of the system that runs them: the EmitterHost
protocol. The pools, batches, passes, events and records are written against it, so that only
the family's ``__init__`` imports the system (systems/emitter/system.py), and each module knows
exactly which of the system's parts it touches.

This module is imported for types only (under TYPE_CHECKING) and imports the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from emberfx.core.bindings import PassBuilder
    from emberfx.core.frame_graph import Pass
    from emberfx.core.gpu import GpuContext
    from emberfx.core.resources import Resources
    from emberfx.core.system import EntityRef, SharedResources, StepInfo
    from emberfx.systems.emitter.batches import Batch
    from emberfx.systems.emitter.events import EventWiring
    from emberfx.systems.emitter.pool import Pool
    from emberfx.systems.emitter.records import RecordPages
    from emberfx.systems.emitter.tuning import EmitterTuning


class EmitterHost(Protocol):
    key: str
    gpu: GpuContext
    device: Any
    shared: SharedResources
    resources: Resources
    build: PassBuilder
    tuning: EmitterTuning
    events: EventWiring
    records: RecordPages
    pools: dict[str, Pool]
    batches: list[Batch]
    pending: dict[tuple, list[Pool]]
    runs: tuple[tuple, dict[int, Pass]]

    def query(self, *kinds: str | type) -> list[tuple[EntityRef, Any]]: ...

    def buffer(self, entity: EntityRef, key: str, size: int, usage: int, *,
               what: str | None = None, persistent: bool = True) -> Any: ...

    def forces_on(self, pool: Pool, in_scene: list | None = None) -> list: ...

    def scene_has_forces(self) -> bool: ...

    def place_alone(self, pool: Pool) -> None: ...

    def place_member(self, pool: Pool) -> None: ...

    def replace_spawn(self, pool: Pool) -> None: ...

    def rewire_batch(self, batch: Batch) -> None: ...

    def step_uniforms(self, pool: Pool, step: StepInfo, start: float,
                      in_scene: list | None = None) -> tuple[bytes, bytes, bytes]: ...
