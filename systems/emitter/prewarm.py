"""Prewarm: run one emitter alone for ``prewarm`` seconds before the scene's first step.

Those steps lie before t = 0 (so bursts do not fire) and seed births with frames from 2**31 up,
apart from the scene's own frames.

Steps go to the GPU in batches (emberfx.core.step_batches), as large as the Engine's
StepBatching allows: each step's params, forces and budget word are staged and copied into place
before that step's passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emberfx.core import step_batches
from emberfx.core.frame_graph import SIMULATION_PHASES, FrameGraph, Phase
from emberfx.core.step_batches import PrewarmNotice, StagedUniforms
from emberfx.core.system import StepInfo
from emberfx.systems.forces.forces import FORCE_KEYS

if TYPE_CHECKING:
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

PREWARM_FRAMES = 1 << 31         # birth-seed frames used while prewarming


def prewarm(system: EmitterHost, pool: Pool) -> None:
    """Advance ``pool`` by its component's prewarm time (see the module docstring)."""
    c, name = pool.component, pool.entity.name
    device = system.device
    dt, seed = system.shared.fixed_dt, system.shared.seed
    steps = c.prewarm_steps(dt)
    graph = FrameGraph([p for p in pool.passes if p.phase in SIMULATION_PHASES
                        and p.phase != Phase.READBACK], system.resources.persistent())
    in_scene = system.query(*FORCE_KEYS)

    def records(k: int) -> tuple[bytes, bytes, bytes]:   # called once per step, in order
        return system.step_uniforms(pool, StepInfo(frame=PREWARM_FRAMES + k, dt=dt, seed=seed),
                                     (k - steps) * dt, in_scene)

    counters = pool.buffers["counters"]
    step_batches.run_steps(
        device, f"{name}:emitter:prewarm", steps, c.capacity,
        lambda encoder, k: graph.encode(encoder, {}), fence_source=counters,
        notice=PrewarmNotice(name, c.prewarm, f"{c.capacity:,} slots", "particle-steps"),
        uniforms=StagedUniforms((pool.buffers["params"], pool.buffers["forces"], counters),
                                records),
        batching=step_batches.batching_of(system.shared))
    pool.births.last_position = None

