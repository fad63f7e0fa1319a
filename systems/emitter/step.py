"""The emitters' step as strategies: how one simulation (a lone pool's buffers or a batch's
arenas, ``Simulation``) is stepped each frame. Every strategy gives the same bytes.

  one-pass     update + ranks by decoupled look-back + alive list + draw arguments in one pass
               (emitter/update_ranked.wgsl), then the births (emitter/births.wgsl) unless the
               update gave them; ordered allocation, where the adapter keeps resident
               workgroups running (or the tuning says), and no event births
  three-pass   update, ranks (emitter/ranks.wgsl: the free scan, births per emitter and draw
               arguments in one workgroup) and spawn; ordered, while the ranks' serial scan
               takes at most ``tuning.ranks_max_rounds`` rounds
  multi-pass   update, free scan, count, alive scan, spawn, prepare; ordered, any size
  atomic       update (births by atomic budget or ticket), alive scan, compact, prepare

A strategy (the StepStrategy protocol) says whether it takes a simulation, the scratch buffers
it needs beyond the simulation's own, and its passes; ``choose`` takes the first of STRATEGIES
that takes it. The tuning (systems/emitter/tuning.py) is how tests and benches pick one. No
clear pass: the host writes each emitter's cleared counters.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

import numpy as np
import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.core import wgsl
from emberfx.core.frame_graph import Folded, Folding, Pass, Phase
from emberfx.core.resources import BufferView
from emberfx.systems.emitter import features
from emberfx.systems.emitter.event_marks import kinds_sent
from emberfx.systems.emitter.shader_names import BIRTHS, UPDATE, UPDATE_RANKED
from emberfx.systems.emitter.structs import BLOCK
from emberfx.systems.emitter.tuning import EmitterTuning

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

# the most slots a one-pass step ranks: its state words hold free counts in VALUE_BITS bits
RANKED_MAX_SLOTS = 1 << wgsl.int_constant(UPDATE_RANKED, "VALUE_BITS")
TILE_CONTROL_WORDS = wgsl.int_constant(UPDATE_RANKED, "CONTROL_WORDS")
ALLOCATION_MODES = wgsl.enum_constants(UPDATE, "ALLOCATION")
COUNT_GROUP = wgsl.workgroup_size("emitter/count.wgsl")[0]   # blocks per count workgroup
RANKS = "emitter/ranks.wgsl"
RANKS_THREADS = wgsl.int_constant(RANKS, "MAX_THREADS")   # at most; the device may allow fewer
RANKS_PER_INVOCATION = wgsl.int_constant(RANKS, "PER_INVOCATION")
STORAGE = wgpu.BufferUsage.STORAGE


class StepStrategy(Protocol):
    name: str

    def takes(self, system: EmitterHost, pool: Pool, sim: Simulation) -> bool:
        """Whether this strategy steps ``sim`` (``pool``: its first emitter) now."""

    def scratch_sizes(self, system: EmitterHost, blocks: int, members: int,
                      component) -> dict[str, tuple[int, int]]:
        """Buffers it may need beyond the simulation's own, by key, for a simulation of
        ``blocks`` blocks and ``members`` emitters (``component``: its first), allocated
        before the event links are known."""

    def passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
               updates: dict) -> list[Pass]:
        """The step's passes; the update pass built goes into ``updates`` by variant."""

    def update_pass(self, system: EmitterHost, pool: Pool, sim: Simulation) -> Pass:
        """The update pass for the variant of what acts on ``pool`` now."""

    def with_update(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass], update: Pass) -> list[Pass]:
        """``passes`` (the step's, or none yet) with ``update`` as their update pass."""


def counters_cleared(b: dict[str, BufferView]) -> Folded:
    """The step's clear of the counters, which the host writes (no clear pass)."""
    return Folded(Phase.CLEAR, Folding.HOST_WRITE,
                  f"{b['counters'].name}: the step's birth budget and zero counts")


def draw_args_prepared(b: dict[str, BufferView]) -> Folded:
    """The PREPARE phase's work, done by the pass that knows the alive counts first."""
    return Folded(Phase.PREPARE, Folding.IN_PASS,
                  f"{b['draw_args'].name}: each emitter's drawIndirect arguments and alive count")


def _integration(system: EmitterHost, pool: Pool, sim: Simulation,
                 base: str) -> tuple[dict, dict]:
    """What both update passes bind and compile for emitter/integrate.wgsl (pass ``base``):
    forces, contacts, events, modifiers and features of ``pool`` (the (first) emitter whose
    contacts, events and modifiers the pass binds), and the compiled-out code: forces without
    force entities (HAS_FORCES; much faster on CPU backends) and the code of force kinds the
    scene lacks (FORCE_KINDS), collisions without a collision material and colliders
    (HAS_COLLISIONS), the code of collider kinds that do not act on it (SOLID_KINDS,
    common/collide.wgsl says why) and vector field sampling without vector fields
    (HAS_VECTOR_FIELDS)."""
    b = sim.buffers
    force_kinds, solid_kinds, has_fields = pool.variant
    bindings = {"emitters": b["params"], "particles": b["particles"],
                "counters": b["counters"], "forces": b["forces"],
                "block_owner": b["block_owner"], **features.part_bindings(pool, base),
                **features.bindings(pool.component, base, b), **sim.stand_ins}
    constants = {"HAS_FORCES": force_kinds != 0, "FORCE_KINDS": force_kinds,
                 "HAS_COLLISIONS": solid_kinds != 0,
                 "SOLID_KINDS": solid_kinds, "HAS_VECTOR_FIELDS": has_fields,
                 **features.part_constants(pool, base),
                 **features.constants(pool.component, base, sim)}
    return bindings, constants


def _replace_update(passes: list[Pass], update: Pass) -> list[Pass]:
    at = next((i for i, p in enumerate(passes) if p.name.endswith(":emitter:update")),
              len(passes))
    return [*passes[:at], update, *passes[at + 1:]]


class _PassesAfterUpdate:
    """The strategies whose update marks slots and whose later passes give the births."""
    name = ""

    def scratch_sizes(self, system: EmitterHost, blocks: int, members: int,
                      component) -> dict[str, tuple[int, int]]:
        return {}

    def update_pass(self, system: EmitterHost, pool: Pool, sim: Simulation) -> Pass:
        """The update marks free slots (ordered: births come in spawn) or, having spawned
        itself (atomic, ticket), the final alive slots."""
        component, b = pool.component, sim.buffers
        bindings, constants = _integration(system, pool, sim, UPDATE)
        ordered = component.allocation == "ordered"
        marks = ("free_mask", "block_free") if ordered else ("alive_mask", "block_alive")
        return system.build.compute(
            f"{sim.name}:emitter:update", Phase.SIMULATE, pool.shader(UPDATE),
            system.gpu.grid(sim.blocks),
            {**bindings, "mask": b[marks[0]], "block_count": b[marks[1]]},
            constants={"ALLOCATION": ALLOCATION_MODES[component.allocation], **constants},
            does=("steps every alive particle (age, forces, collisions, events), marks dead "
                  "slots free" if ordered else "steps every alive particle and gives births to "
                  f"dead slots by {component.allocation} allocation, marking the alive ones"),
            folded=(counters_cleared(b),))

    def with_update(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass], update: Pass) -> list[Pass]:
        return _replace_update(passes, update)

    def _prepare(self, system: EmitterHost, sim: Simulation, alive_scan: PrefixScan) -> Pass:
        b = sim.buffers
        return system.build.compute(
            f"{sim.name}:emitter:prepare", Phase.PREPARE, "emitter/prepare.wgsl",
            (sim.members, 1, 1),
            {"emitters": b["params"], "counters": b["counters"], "alive_offset": b["block_alive"],
             "alive_scan_total": alive_scan.total, "alive_totals": b["alive_total"],
             "draw_args": b["draw_args"]},
            does="each emitter's drawIndirect arguments, alive count and counters.alive")


def _ranks_threads(system: EmitterHost) -> int:
    limits = system.gpu.limits
    return min(system.tuning.ranks_threads or RANKS_THREADS,
               limits["max-compute-invocations-per-workgroup"],
               limits["max-compute-workgroup-size-x"])


class ThreePassStep(_PassesAfterUpdate):
    name = "three-pass"

    def takes(self, system: EmitterHost, pool: Pool, sim: Simulation) -> bool:
        tuning = system.tuning
        rounds = math.ceil(sim.blocks / (_ranks_threads(system) * RANKS_PER_INVOCATION))
        return (pool.component.allocation == "ordered" and tuning.fused_ranks
                and rounds <= tuning.ranks_max_rounds)

    def passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
               updates: dict) -> list[Pass]:
        b = sim.buffers
        update = updates[pool.variant] = self.update_pass(system, pool, sim)
        ranks = system.build.compute(
            f"{sim.name}:emitter:ranks", Phase.SIMULATE, RANKS, (1, 1, 1),
            {"emitters": b["params"], "free_offset": b["block_free"],
             "counters": b["counters"], "alive_totals": b["alive_total"],
             "draw_args": b["draw_args"]},
            constants={"THREADS": _ranks_threads(system)},
            does="in one workgroup: ranks the free slots, each emitter's births and alive count",
            folded=(draw_args_prepared(b),))
        return [update, ranks, system.events.spawn_pass(pool, sim)]


class MultiPassStep(_PassesAfterUpdate):
    name = "multi-pass"

    def takes(self, system: EmitterHost, pool: Pool, sim: Simulation) -> bool:
        return pool.component.allocation == "ordered"

    def passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
               updates: dict) -> list[Pass]:
        """Free ranks -> alive counts per block -> alive ranks, then one pass gives births and
        writes the alive list (emitter/count.wgsl and spawn.wgsl explain the arithmetic)."""
        b, blocks, prefix = sim.buffers, sim.blocks, f"{sim.name}:emitter"
        passes = [self.update_pass(system, pool, sim)]
        updates[pool.variant] = passes[0]
        alive_scan = PrefixScan(system.build, f"{prefix}:alive", b["block_alive"], blocks)
        free_scan = PrefixScan(system.build, f"{prefix}:free", b["block_free"], blocks)
        passes += free_scan.passes()
        passes.append(system.build.compute(
            f"{prefix}:count", Phase.SIMULATE, "emitter/count.wgsl",
            (math.ceil(blocks / COUNT_GROUP), 1, 1),
            {"emitters": b["params"], "free_offset": b["block_free"],
             "free_total": free_scan.total, "block_alive": b["block_alive"],
             "counters": b["counters"], "block_owner": b["block_owner"]},
            does="each block's alive count after this step's births, from the free ranks"))
        passes += alive_scan.passes()
        passes.append(system.events.spawn_pass(pool, sim))
        return passes + [self._prepare(system, sim, alive_scan)]


class AtomicStep(_PassesAfterUpdate):
    name = "atomic"

    def takes(self, system: EmitterHost, pool: Pool, sim: Simulation) -> bool:
        return pool.component.allocation != "ordered"

    def passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
               updates: dict) -> list[Pass]:
        b, prefix = sim.buffers, f"{sim.name}:emitter"
        passes = [self.update_pass(system, pool, sim)]
        updates[pool.variant] = passes[0]
        alive_scan = PrefixScan(system.build, f"{prefix}:alive", b["block_alive"], sim.blocks)
        passes += alive_scan.passes()
        passes.append(system.build.compute(
            f"{prefix}:compact", Phase.SIMULATE, "emitter/compact.wgsl",
            system.gpu.grid(sim.blocks),
            {"params": b["params"], "alive_mask": b["alive_mask"],
             "block_alive_offset": b["block_alive"], "alive_list": b["alive_list"]},
            does="the dense alive list from the alive mask and the scanned block counts"))
        return passes + [self._prepare(system, sim, alive_scan)]


class OnePassStep:
    name = "one-pass"

    @staticmethod
    def allowed(system: EmitterHost, members: int, component) -> bool:
        """What decides the one-pass step before the event links are known (the system's
        ``tuning.one_pass`` says)."""
        one_pass = system.tuning.one_pass
        if not features.one_pass(component):
            return False
        if one_pass is None:
            return (system.gpu.keeps_resident_workgroups_running and members == 1
                    and component.allocation == "ordered" and not kinds_sent(component))
        return one_pass and component.allocation == "ordered"

    def takes(self, system: EmitterHost, pool: Pool, sim: Simulation) -> bool:
        """As ``allowed`` says, with no births from events (the one-pass step gives the host's
        births only; births from event records come from emitter/spawn.wgsl) and fewer than
        RANKED_MAX_SLOTS slots (or the tuning's lower ``one_pass_slot_limit``)."""
        members = pool.batch.members if pool.batch is not None else [pool]
        limit = min(RANKED_MAX_SLOTS, system.tuning.one_pass_slot_limit or RANKED_MAX_SLOTS)
        return ("tiles" in sim.buffers and self.allowed(system, sim.members, pool.component)
                and not any(system.events.into.get(m.entity.name) for m in members)
                and sim.blocks * BLOCK < limit)

    def scratch_sizes(self, system: EmitterHost, blocks: int, members: int,
                      component) -> dict[str, tuple[int, int]]:
        """The look-back's control and state words, and the born slots."""
        if not self.allowed(system, members, component):
            return {}
        return {"tiles": ((TILE_CONTROL_WORDS + blocks) * 4, STORAGE),
                "birth_slots": (blocks * BLOCK * 4, STORAGE)}

    def passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
               updates: dict) -> list[Pass]:
        updates[pool.variant] = self.update_pass(system, pool, sim)
        return self.with_update(system, pool, sim, [], updates[pool.variant])

    def update_pass(self, system: EmitterHost, pool: Pool, sim: Simulation) -> Pass:
        """emitter/update_ranked.wgsl. Software adapters keep the shader's bound on look-back
        rounds (llvmpipe leaves longer loops); elsewhere a wait may last far longer before it
        gives up."""
        b, tuning = sim.buffers, system.tuning
        bindings, constants = _integration(system, pool, sim, UPDATE_RANKED)
        per_tile, prefetch = tile_shape(tuning, pool, sim)
        births_here = sim.births_here[pool.variant] = births_in_update(tuning, pool, sim)
        constants.update(PUBLISH_INCLUSIVE=tuning.publish_inclusive, TILE_BLOCKS=per_tile,
                         RANK_AFTER_NEXT=tuning.rank_after_next, BIRTHS_HERE=births_here,
                         PREFETCH_PARTICLES=prefetch)
        if tuning.look_first_lanes is not None:
            constants["LOOK_FIRST_LANES"] = tuning.look_first_lanes
        if tuning.look_back_rounds is not None:
            constants["MAX_ROUNDS"] = tuning.look_back_rounds
        elif not system.gpu.is_software:
            constants["MAX_ROUNDS"] = 1 << 22
        tiles = math.ceil(sim.blocks / per_tile)
        return system.build.compute(
            f"{sim.name}:emitter:update", Phase.SIMULATE, pool.shader(UPDATE_RANKED),
            system.gpu.grid(min(tiles, tuning.workgroups_at_most or tiles)),
            {**bindings, "alive_list": b["alive_list"], "alive_totals": b["alive_total"],
             "tiles": b["tiles"], "draw_args": b["draw_args"], "birth_slots": b["birth_slots"]},
            constants=constants,
            does="steps every particle, ranks the free slots by look-back and writes the alive "
                 "list" + ("" if births_here else " (the births follow)"),
            folded=(counters_cleared(b), draw_args_prepared(b)))

    def with_update(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass], update: Pass) -> list[Pass]:
        """Followed by the births pass unless that update gives the births itself, as
        update_pass recorded when it built it for that variant."""
        at = next((i for i, p in enumerate(passes) if p.name.endswith(":emitter:update")),
                  len(passes))
        rest = passes[at + 1:]
        births = [p for p in rest[:1] if p.name.endswith(":emitter:births")]
        rest = rest[len(births):]
        if sim.births_here[pool.variant]:
            births = []
        elif not births:
            births = [births_pass(system, pool, sim)]
        return [*passes[:at], update, *births, *rest]


ONE_PASS, THREE_PASS = OnePassStep(), ThreePassStep()
MULTI_PASS, ATOMIC = MultiPassStep(), AtomicStep()
STRATEGIES: tuple[StepStrategy, ...] = (ONE_PASS, THREE_PASS, MULTI_PASS, ATOMIC)


def choose(system: EmitterHost, pool: Pool, sim: Simulation) -> StepStrategy:
    return next(s for s in STRATEGIES if s.takes(system, pool, sim))


def scratch_sizes(system: EmitterHost, blocks: int, members: int,
                  component) -> dict[str, tuple[int, int]]:
    """Every strategy's scratch buffers that ``component``'s simulation may need."""
    return {k: v for s in STRATEGIES
            for k, v in s.scratch_sizes(system, blocks, members, component).items()}


def simulation_passes(system: EmitterHost, pool: Pool, sim: Simulation,
                      updates: dict) -> list[Pass]:
    """The passes that step ``sim`` (``pool`` its first emitter), by the strategy that takes
    it now (recorded as ``sim.strategy``)."""
    sim.strategy = choose(system, pool, sim)
    return features.step_passes(system, pool, sim,
                                sim.strategy.passes(system, pool, sim, updates))


def update_pass_for(system: EmitterHost, pool: Pool, sim: Simulation) -> Pass:
    """The update pass of ``sim``'s strategy for the variant of what acts on ``pool`` now."""
    assert sim.strategy is not None
    return sim.strategy.update_pass(system, pool, sim)


def with_update(system: EmitterHost, pool: Pool, sim: Simulation, passes: list[Pass],
                update: Pass) -> list[Pass]:
    assert sim.strategy is not None
    return features.step_passes(system, pool, sim,
                                sim.strategy.with_update(system, pool, sim, passes, update))


def with_new_spawn(system: EmitterHost, pool: Pool, sim: Simulation, passes: list[Pass],
                   updates: dict) -> list[Pass]:
    """``passes`` (``sim``'s, ``pool`` its first emitter) with a new spawn pass (the event
    links into an emitter of ``sim`` changed). A simulation stepped in one pass gets another
    strategy (``updates``, by variant, made again): only the spawn pass gives births from
    event records."""
    if sim.strategy is ONE_PASS:
        updates.clear()
        kept = [p for p in passes if p.phase not in (Phase.SIMULATE, Phase.PREPARE)]
        return simulation_passes(system, pool, sim, updates) + kept
    at = next(i for i, p in enumerate(passes) if p.name.endswith(":emitter:spawn"))
    return features.step_passes(system, pool, sim, [*passes[:at], system.events.spawn_pass(
        pool, sim), *passes[at + 1:]])


def tile_shape(tuning: EmitterTuning, pool: Pool, sim: Simulation) -> tuple[int, bool]:
    """Blocks per workgroup of the one-pass step, and whether a tile's particles are prefetched:
    one block for a batch (a tile never spans two emitters) and for an event source (its
    marks are kept per block); for an emitter alone, more in bigger pools, so that fewer tiles
    take part in the look-back, and fewer where forces act on it (``tuning.tile_blocks_from``).
    ``tuning.tile_blocks`` and ``tuning.prefetch_particles``, when set, override the table."""
    force_kinds, _, _ = pool.variant
    blocks, prefetch = next((blocks, prefetch) for start, blocks, prefetch
                            in tuning.tile_blocks_from[force_kinds != 0] if sim.blocks >= start)
    if tuning.prefetch_particles is not None:
        prefetch = tuning.prefetch_particles
    if sim.members > 1 or kinds_sent(pool.component):
        return 1, prefetch
    return (blocks if tuning.tile_blocks is None else tuning.tile_blocks), prefetch


def births_in_update(tuning: EmitterTuning, pool: Pool, sim: Simulation) -> bool:
    """Whether the one-pass update of ``sim`` compiled for ``pool.variant`` gives the births
    itself (``tuning.births_in_update`` says when)."""
    if tuning.births_in_update is not None:
        return tuning.births_in_update
    force_kinds, solid_kinds, _ = pool.variant
    return ((force_kinds == 0 and solid_kinds == 0)
            or sim.blocks * BLOCK <= tuning.births_in_update_up_to)


def births_pass(system: EmitterHost, pool: Pool, sim: Simulation) -> Pass:
    """The particles of the births the one-pass step ranked (emitter/births.wgsl): one
    workgroup row per emitter, as many workgroups as the emitter with the largest budget this
    step could fill (no event births reach a one-pass simulation, so the host knows them)."""
    b = sim.buffers

    def groups() -> tuple[int, int, int]:
        records = pool.batch.page.params if pool.batch is not None else pool.param_record
        most = int(np.max(np.minimum(records["budget"], records["capacity"])))
        return (math.ceil(most / BLOCK), sim.members, 1)

    return system.build.compute(
        f"{sim.name}:emitter:births", Phase.SIMULATE, pool.shader(BIRTHS), groups,
        {"emitters": b["params"], "counters": b["counters"], "particles": b["particles"],
         "birth_slots": b["birth_slots"], **features.part_bindings(pool, BIRTHS),
         **features.bindings(pool.component, BIRTHS, b)},
        does="new particles in the slots the update ranked for this step's births")
