"""The passes that step the emitters: the simulation of one pool or one batch (update, the
scans, count and spawn or compaction, prepare; systems/emitter/system.py lists them) and the
alpha emitters' back-to-front sort. The system places pools and batches; these build what runs
over them (a batch's arenas or a pool's own buffers, ``Simulation``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.blocks.sort import KeySort
from emberfx.blocks.sprites import SPRITE_INDICES, sprite_indices, sprite_pipeline, sprite_queue
from emberfx.blocks.textures import sprite_sampler
from emberfx.core import wgsl
from emberfx.core.frame_graph import Folded, Folding, Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView
from emberfx.systems.emitter import culling, features
from emberfx.systems.emitter.events import kinds_sent
from emberfx.systems.emitter.looks import DRAW, DRAW_SOFT, textured
from emberfx.systems.emitter.params import BLOCK, RECORD
from emberfx.systems.emitter.shader_names import BIRTHS, UPDATE, UPDATE_RANKED
from emberfx.systems.emitter.tuning import EmitterTuning

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.system import EmitterSystem, _Pool

# the most slots a one-pass step ranks: its state words hold free counts in VALUE_BITS bits
RANKED_MAX_SLOTS = 1 << wgsl.int_constant(UPDATE_RANKED, "VALUE_BITS")
TILE_CONTROL_WORDS = wgsl.int_constant(UPDATE_RANKED, "CONTROL_WORDS")
ALLOCATION_MODES = wgsl.enum_constants(UPDATE, "ALLOCATION")
COUNT_GROUP = wgsl.workgroup_size("emitter/count.wgsl")[0]   # blocks per count workgroup
DEPTH_GROUP = wgsl.workgroup_size("emitter/depth.wgsl")[0]   # alive entries per depth workgroup
DEPTH_PARAMS = struct_dtype("emitter/depth.wgsl", "DepthParams")
RANKS = "emitter/ranks.wgsl"
RANKS_THREADS = wgsl.int_constant(RANKS, "MAX_THREADS")   # at most; the device may allow fewer
RANKS_PER_INVOCATION = wgsl.int_constant(RANKS, "PER_INVOCATION")


def counters_cleared(b: dict[str, BufferView]) -> Folded:
    """The step's clear of the counters, which the host writes (no clear pass)."""
    return Folded(Phase.CLEAR, Folding.HOST_WRITE,
                  f"{b['counters'].name}: the step's birth budget and zero counts")


def draw_args_prepared(b: dict[str, BufferView]) -> Folded:
    """The PREPARE phase's work, done by the pass that knows the alive counts first."""
    return Folded(Phase.PREPARE, Folding.IN_PASS,
                  f"{b['draw_args'].name}: each emitter's drawIndirect arguments and alive count")


def one_pass_sizes(system: EmitterSystem, blocks: int, members: int,
                   component) -> dict[str, tuple[int, int]]:
    """The buffers that only the one-pass step reads, for a simulation of ``blocks`` blocks and
    ``members`` emitters (``component``: its first) that may take it: the look-back's control
    and state words, and the born slots."""
    if not may_step_in_one_pass(system, members, component):
        return {}
    storage = wgpu.BufferUsage.STORAGE
    return {"tiles": ((TILE_CONTROL_WORDS + blocks) * 4, storage),
            "birth_slots": (blocks * BLOCK * 4, storage)}


def may_step_in_one_pass(system: EmitterSystem, members: int, component) -> bool:
    """What decides the one-pass step before the event links are known (the system's
    ``tuning.one_pass`` says)."""
    one_pass = system.tuning.one_pass
    if one_pass is None:
        return (system.gpu.keeps_resident_workgroups_running and members == 1
                and component.allocation == "ordered" and not kinds_sent(component))
    return one_pass and component.allocation == "ordered"


def steps_in_one_pass(system: EmitterSystem, pool: _Pool, sim: Simulation) -> bool:
    """Whether ``sim`` takes the one-pass ordered step: as may_step_in_one_pass says, with no
    births from events (the one-pass step gives the host's births only; births from event
    records come from emitter/spawn.wgsl) and fewer than RANKED_MAX_SLOTS slots (or the
    tuning's lower ``one_pass_slot_limit``)."""
    members = pool.batch.members if pool.batch is not None else [pool]
    limit = min(RANKED_MAX_SLOTS, system.tuning.one_pass_slot_limit or RANKED_MAX_SLOTS)
    return ("tiles" in sim.buffers and may_step_in_one_pass(system, sim.members, pool.component)
            and not any(system.events.into.get(m.entity.name) for m in members)
            and sim.blocks * BLOCK < limit)


def alpha_sort(system: EmitterSystem, owner: str, b: dict[str, BufferView], segment: int,
               first_owner: int, segments: int) -> list[Pass]:
    """Back to front by this frame's camera: depth keys, then the sort of the alive lists in
    ``segments`` segments of ``segment`` entries (``b["sort_values"]``), segment s holding
    emitter first_owner + s's (one segment: an emitter alone)."""
    record = np.zeros((), DEPTH_PARAMS)
    record["segment"], record["first_owner"], record["segments"] = (segment, first_owner,
                                                                    segments)
    system.resources.write(b["depth_params"], record.tobytes())
    prefix = f"{owner}:emitter"
    depth = system.build.compute(
        f"{prefix}:depth", Phase.RENDER, "emitter/depth.wgsl",
        system.gpu.grid(math.ceil(segment * segments / DEPTH_GROUP)),
        {"frame": "frame", "particles": b["particles"], "alive_list": b["sort_values"],
         "alive_totals": b["alive_total"], "keys": b["sort_keys"], "emitters": b["params"],
         "depth_params": b["depth_params"]},
        does="each alive particle's distance from this frame's camera, the back-to-front keys")
    sort = KeySort(system.build, prefix, b["sort_keys"], b["sort_values"], segment,
                   count=(b["alive_total"], first_owner * RECORD),
                   segments=segments, count_stride=RECORD if segments > 1 else 0)
    return [depth, *sort.passes(Phase.RENDER)]



def simulation_passes(system: EmitterSystem, pool: _Pool, sim: Simulation,
                      updates: dict) -> list[Pass]:
    """The passes that step ``sim`` (one pool's buffers or a batch's arenas, ``pool`` its
    first emitter): update; in ordered mode free ranks -> alive counts per block -> alive
    ranks, then one pass gives births and writes the alive list (emitter/count.wgsl and
    spawn.wgsl explain the arithmetic); in the atomic modes the compaction; then the draw
    arguments. No clear pass: the host writes each emitter's cleared counters. With the
    tuning's ``fused_ranks``, ordered mode is update, ranks (emitter/ranks.wgsl: the free scan,
    births and draw arguments in one workgroup) and spawn."""
    b, blocks, tuning = sim.buffers, sim.blocks, system.tuning
    prefix = f"{sim.name}:emitter"
    compute = system.build.compute
    sim.one_pass = steps_in_one_pass(system, pool, sim)
    if sim.one_pass:
        updates[pool.variant] = ranked_update_pass(system, pool, sim)
        return with_update(system, pool, sim, [], updates[pool.variant])
    update = updates[pool.variant] = update_pass(system, pool, sim)
    passes = [update]
    limits = system.gpu.limits
    threads = min(tuning.ranks_threads or RANKS_THREADS,
                  limits["max-compute-invocations-per-workgroup"],
                  limits["max-compute-workgroup-size-x"])
    rounds = math.ceil(blocks / (threads * RANKS_PER_INVOCATION))
    if (pool.component.allocation == "ordered" and tuning.fused_ranks
            and rounds <= tuning.ranks_max_rounds):
        passes.append(compute(
            f"{prefix}:ranks", Phase.SIMULATE, RANKS, (1, 1, 1),
            {"emitters": b["params"], "free_offset": b["block_free"],
             "counters": b["counters"], "alive_totals": b["alive_total"],
             "draw_args": b["draw_args"]},
            constants={"THREADS": threads},
            does="in one workgroup: ranks the free slots, each emitter's births and alive count",
            folded=(draw_args_prepared(b),)))
        passes.append(system.events.spawn_pass(pool, sim))
        return passes
    alive_scan = PrefixScan(system.build, f"{prefix}:alive", b["block_alive"], blocks)
    if pool.component.allocation == "ordered":
        free_scan = PrefixScan(system.build, f"{prefix}:free", b["block_free"], blocks)
        passes += free_scan.passes()
        passes.append(compute(
            f"{prefix}:count", Phase.SIMULATE, "emitter/count.wgsl",
            (math.ceil(blocks / COUNT_GROUP), 1, 1),
            {"emitters": b["params"], "free_offset": b["block_free"],
             "free_total": free_scan.total, "block_alive": b["block_alive"],
             "counters": b["counters"], "block_owner": b["block_owner"]},
            does="each block's alive count after this step's births, from the free ranks"))
        passes += alive_scan.passes()
        passes.append(system.events.spawn_pass(pool, sim))
    else:
        passes += alive_scan.passes()
        passes.append(compute(
            f"{prefix}:compact", Phase.SIMULATE, "emitter/compact.wgsl",
            system.gpu.grid(blocks),
            {"params": b["params"], "alive_mask": b["alive_mask"],
             "block_alive_offset": b["block_alive"], "alive_list": b["alive_list"]},
            does="the dense alive list from the alive mask and the scanned block counts"))
    passes.append(compute(
        f"{prefix}:prepare", Phase.PREPARE, "emitter/prepare.wgsl", (sim.members, 1, 1),
        {"emitters": b["params"], "counters": b["counters"], "alive_offset": b["block_alive"],
         "alive_scan_total": alive_scan.total, "alive_totals": b["alive_total"],
         "draw_args": b["draw_args"]},
        does="each emitter's drawIndirect arguments, alive count and counters.alive"))
    return passes


def tile_shape(tuning: EmitterTuning, pool: _Pool, sim: Simulation) -> tuple[int, bool]:
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


def births_in_update(tuning: EmitterTuning, pool: _Pool, sim: Simulation) -> bool:
    """Whether the one-pass update of ``sim`` compiled for ``pool.variant`` gives the births
    itself (``tuning.births_in_update`` says when)."""
    if tuning.births_in_update is not None:
        return tuning.births_in_update
    force_kinds, solid_kinds, _ = pool.variant
    return ((force_kinds == 0 and solid_kinds == 0)
            or sim.blocks * BLOCK <= tuning.births_in_update_up_to)


def with_update(system: EmitterSystem, pool: _Pool, sim: Simulation, passes: list[Pass],
                update: Pass) -> list[Pass]:
    """``passes`` (a simulation's, or none yet) with ``update`` (compiled for
    ``pool.variant``) as their update pass; in the one-pass step, followed by the births pass
    unless that update gives the births itself, as ranked_update_pass recorded when it built
    it for that variant."""
    at = next((i for i, p in enumerate(passes) if p.name.endswith(":emitter:update")),
              len(passes))
    rest = passes[at + 1:]
    if not sim.one_pass:
        return [*passes[:at], update, *rest]
    births = [p for p in rest[:1] if p.name.endswith(":emitter:births")]
    rest = rest[len(births):]
    if sim.births_here[pool.variant]:
        births = []
    elif not births:
        births = [births_pass(system, pool, sim)]
    return [*passes[:at], update, *births, *rest]


def births_pass(system: EmitterSystem, pool: _Pool, sim: Simulation) -> Pass:
    """The particles of the births the one-pass step ranked (emitter/births.wgsl): one
    workgroup row per emitter, as many workgroups as the emitter with the largest budget this
    step could fill (no event births reach a one-pass simulation, so the host knows them)."""
    b = sim.buffers

    def groups() -> tuple[int, int, int]:
        records = pool.batch.params if pool.batch is not None else pool.param_record
        most = int(np.max(np.minimum(records["budget"], records["capacity"])))
        return (math.ceil(most / BLOCK), sim.members, 1)

    return system.build.compute(
        f"{sim.name}:emitter:births", Phase.SIMULATE, pool.shader(BIRTHS), groups,
        {"emitters": b["params"], "counters": b["counters"], "particles": b["particles"],
         "birth_slots": b["birth_slots"], **pool.program_bindings(BIRTHS),
         **features.bindings(pool.component, BIRTHS, b)},
        does="new particles in the slots the update ranked for this step's births")


def with_new_spawn(system: EmitterSystem, pool: _Pool, sim: Simulation, passes: list[Pass],
                   updates: dict) -> list[Pass]:
    """``passes`` (``sim``'s, ``pool`` its first emitter) with a new spawn pass (the event
    links into an emitter of ``sim`` changed). A simulation stepped in one pass gets the
    multi-pass step instead (``updates``, by variant, made again): only the spawn pass gives
    births from event records."""
    if sim.one_pass:
        updates.clear()
        kept = [p for p in passes if p.phase not in (Phase.SIMULATE, Phase.PREPARE)]
        return simulation_passes(system, pool, sim, updates) + kept
    at = next(i for i, p in enumerate(passes) if p.name.endswith(":emitter:spawn"))
    return [*passes[:at], system.events.spawn_pass(pool, sim), *passes[at + 1:]]


def update_pass_for(system: EmitterSystem, pool: _Pool, sim: Simulation) -> Pass:
    """The update pass of ``sim``'s step as its passes were built (one pass or several), for
    the variant of what acts on ``pool`` now."""
    return (ranked_update_pass if sim.one_pass else update_pass)(system, pool, sim)


def _integration(system: EmitterSystem, pool: _Pool, sim: Simulation,
                 base: str) -> tuple[dict, dict]:
    """What both update passes bind and compile for emitter/integrate.wgsl (pass ``base``):
    forces, contacts, events and modifiers of ``pool`` (the (first) emitter whose contacts,
    events and modifiers the pass binds), and the compiled-out code (update_pass says which)."""
    b = sim.buffers
    force_kinds, solid_kinds, has_fields = pool.variant
    assert pool.contacts is not None
    bindings = {"emitters": b["params"], "particles": b["particles"],
                "counters": b["counters"], "forces": b["forces"],
                "block_owner": b["block_owner"], **pool.contacts.bindings(),
                **system.events.update_bindings(pool), **pool.program_bindings(base),
                **features.bindings(pool.component, base, b), **sim.stand_ins}
    constants = {"HAS_FORCES": force_kinds != 0, "FORCE_KINDS": force_kinds,
                 "HAS_COLLISIONS": solid_kinds != 0,
                 "SOLID_KINDS": solid_kinds, "HAS_VECTOR_FIELDS": has_fields,
                 **system.events.update_constants(pool)}
    return bindings, constants


def ranked_update_pass(system: EmitterSystem, pool: _Pool, sim: Simulation) -> Pass:
    """The one-pass ordered step (emitter/update_ranked.wgsl), compiled as update_pass says.
    Software adapters keep the shader's bound on look-back rounds (llvmpipe leaves longer
    loops); elsewhere a wait may last far longer before it gives up."""
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
        does="steps every particle, ranks the free slots by look-back and writes the alive list"
             + ("" if births_here else " (the births follow)"),
        folded=(counters_cleared(b), draw_args_prepared(b)))


def update_pass(system: EmitterSystem, pool: _Pool, sim: Simulation) -> Pass:
    """The update marks free slots (ordered: births come in spawn) or, having spawned itself
    (atomic, ticket), the final alive slots. What nothing acts with is compiled out:
    forces without force entities (HAS_FORCES; much faster on CPU backends) and the code of
    force kinds the scene lacks (FORCE_KINDS), collisions
    without a collision material and colliders (HAS_COLLISIONS), the code of collider
    kinds that do not act on it (SOLID_KINDS, emitter/collide.wgsl says why) and vector
    field sampling without vector fields (HAS_VECTOR_FIELDS)."""
    component, b = pool.component, sim.buffers
    bindings, constants = _integration(system, pool, sim, UPDATE)
    ordered = component.allocation == "ordered"
    marks = ("free_mask", "block_free") if ordered else ("alive_mask", "block_alive")
    return system.build.compute(
        f"{sim.name}:emitter:update", Phase.SIMULATE, pool.shader(UPDATE),
        system.gpu.grid(sim.blocks),
        {**bindings, "mask": b[marks[0]], "block_count": b[marks[1]]},
        constants={"ALLOCATION": ALLOCATION_MODES[component.allocation], **constants},
        does=("steps every alive particle (age, forces, collisions, events), marks dead slots "
              "free" if ordered else "steps every alive particle and gives births to dead slots "
              f"by {component.allocation} allocation, marking the alive ones"),
        folded=(counters_cleared(b),))


def _draw_pipeline(system: EmitterSystem, component, shader: str):
    soft = component.soft > 0.0
    fragment = ("fs_soft" if soft else "fs") + ("_textured" if textured(component) else "")
    return sprite_pipeline(system.device, shader, component.blend,
                           system.shared.scene_format, system.shared.depth_format, fragment)

def draw_pass(system: EmitterSystem, name: str, pool: _Pool, b: dict[str, BufferView],
              records: list[int]) -> Pass:
    """The sprites' draw of ``pool`` and the emitters drawn with it (``records``: their
    indices in the batch whose arenas ``b`` holds; a lone pool: its own buffers, [0]), one
    drawIndirect each; soft ones read this frame's opaque depth, so they draw after every
    opaque draw, in a pass whose depth attachment is read-only."""
    component, texture = pool.component, pool.texture
    soft = component.soft > 0.0
    shader = pool.shader(DRAW_SOFT if soft else DRAW)
    bindings = {"frame": "frame", "emitters": b["params"], "particles": b["particles"],
                "alive_list": b["alive_list"], "looks": b["looks"],
                "sprite_looks": b["sprite_look"], "sprite_texture": texture,
                "sprite_sampler": sprite_sampler(system.device), "list_owner": b["list_owner"],
                **pool.program_bindings(DRAW_SOFT if soft else DRAW)}
    if soft:
        bindings["scene_depth"] = "scene/depth"
    offsets = [k * RECORD for k in records]
    return system.build.draw(name, shader, _draw_pipeline(system, component, shader), bindings,
                             indirect=(b["draw_args"], offsets[0]), depth_read_only=soft,
                             index=(sprite_indices(system.resources, system.key), "uint32",
                                    len(SPRITE_INDICES)),
                             order=sprite_queue(component.blend, component.soft),
                             more_indirect=tuple(offsets[1:]),
                             does=f"camera-facing sprites of the alive list, {component.blend} "
                                  f"blend" + (", soft against the scene's depth" if soft else "")
                                  + (f" (one drawIndexedIndirect each for {len(records)} "
                                     f"emitters)" if len(records) > 1
                                     else " (drawIndexedIndirect)"))


def draw_signature(pool: _Pool) -> tuple:
    """What two emitters' draws must share to be one Pass (pipeline, shader, texture)."""
    c = pool.component
    return (pool.shader(DRAW_SOFT if c.soft > 0.0 else DRAW), c.blend, c.soft > 0.0,
            textured(c), id(pool.texture))


def lone_draw_pass(system: EmitterSystem, pool: _Pool) -> Pass:
    """The draw of an emitter alone: its own buffers, one record, its blocks' owner (all 0)."""
    b = {**pool.buffers, "list_owner": pool.buffers["block_owner"]}
    return draw_pass(system, f"{pool.entity.name}:emitter:draw", pool, b, [0])


def draw_runs(system: EmitterSystem, order: list[_Pool]) -> dict[int, Pass]:
    """One draw Pass per run of batched emitters that follow each other among the draws of
    their render queue (``order``: the pools in the order their draws are declared) and share a
    batch and a draw signature, keyed by the id of the run's first pool: one bind group for all,
    one drawIndirect each. A lone emitter's draw in the same queue ends a run, so every draw
    keeps its place and a batched frame blends in the same order as the emitters alone.
    Cached until the pools or batches change."""
    key = tuple((id(p), id(p.batch)) for p in order)
    if system.runs[0] == key:
        return system.runs[1]
    open_runs: dict[int, tuple] = {}   # queue order -> (batch, signature, members)
    runs: list[tuple] = []
    for pool in order:
        queue = sprite_queue(pool.component.blend, pool.component.soft)
        if pool.batch is None:
            for p in pool.passes:   # a lone draw in a queue keeps its place there
                if p.phase == Phase.RENDER and p.kind == "render":
                    open_runs.pop(p.order, None)
            continue
        signature = draw_signature(pool)
        run = open_runs.get(queue)
        if run is not None and run[0] is pool.batch and run[1] == signature:
            run[2].append(pool)
        else:
            run = open_runs[queue] = (pool.batch, signature, [pool])
            runs.append(run)
    passes = {}
    for batch, _, members in runs:
        first = members[0]
        b = culling.drawn(batch.sim.buffers)
        passes[id(first)] = draw_pass(
            system, f"{first.entity.name}:emitter:draw", first, b, [p.member for p in members])
    system.runs = (key, passes)
    return passes
