"""Batches of like emitters: one arena per buffer and one dispatch per simulation pass for all.

Emitters whose simulation compiles to the same passes (ordered allocation, no sub-emitter events
sent, no modifiers, attributes or birth expressions, no mesh, no collision material, no vector
field in the scene, and the same "any forces" switch) share the passes below. Events may spawn
into members: each member's inbox is a view into the batch's inbox arena, and their records go
to its region of the batch's records arena (events.py wires the sources to them). A prewarm
runs before the pool joins (it steps the pool alone over its own buffers, ``add``), so a
prewarmed emitter batches like any other:

  <batch>/particles, alive_list, sort_keys       slot ranges, each emitter's padded to whole
                                                 256-slot blocks (emitter/types.wgsl BLOCK)
  <batch>/free_mask, block_free, block_alive,    per block of the batch; block_owner names each
  block_owner                                    block's emitter
  <batch>/params, counters, draw_args,           one RECORD_WORDS-word record per emitter
  alive_total, sprite_look
  <batch>/forces, looks                          MAX_FORCES force records, one Looks per emitter
  <batch>/event_links, event_records             one EventInbox per emitter; the event records
                                                 of the members events spawn into, each
                                                 member's region from its inbox's records_base

and run update, free scan, count, alive scan, spawn and prepare once per frame for all of them
(emitter/update.wgsl, count.wgsl, spawn.wgsl and prepare.wgsl index the records by block_owner).
Each emitter's buffers stay published under its own names (``<e>/particles`` ...) as views into
the arenas at 256-byte offsets, so trails, depth sorts, draws, state() and tests bind them as
before; slots and birth keys are the emitter's own, so a batched run is byte-identical to the
same emitters run alone (tests/test_emitter_batches.py). Draws stay one drawIndirect per emitter
(each binds its own views, texture and blend pipeline), all from the batch's one args buffer.

``arrange`` regroups the pools when the world changes (the Engine calls it when the world is
built, an entity is spawned, deleted or rebuilt, or a pool asked for it): a pool that joins or
leaves a batch has its particles, alive list, counters and draw args copied on the GPU into its
new place, and its uniforms written again. A lone emitter runs the same shaders as a batch of
one over its own buffers.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core.frame_graph import Pass
from emberfx.core.resources import VIEW_ALIGNMENT, BufferView
from emberfx.systems.emitter import features
from emberfx.systems.emitter import layout as emitter_layout
from emberfx.systems.emitter import passes as emitter_passes
from emberfx.systems.emitter import step as emitter_step
from emberfx.systems.emitter.events import INBOX
from emberfx.systems.emitter.events import RECORD as EVENT_RECORD
from emberfx.systems.emitter.shader_names import SPAWN, UPDATE
from emberfx.systems.emitter.step_upload import StepArrays
from emberfx.systems.emitter.structs import PARTICLE
from emberfx.systems.forces.forces import FORCE_KEYS

if TYPE_CHECKING:
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool
    from emberfx.systems.emitter.records import Page
    from emberfx.systems.emitter.step import StepStrategy

STORAGE = wgpu.BufferUsage.STORAGE
# what a pool's new place receives from its old one on the GPU (the rest is written by the host
# or recomputed by every step)
MOVED_STATE = ("particles", "alive_list", "counters", "draw_args", "alive_total", "forces",
               "sprite_look", "looks")
# a pool's own buffers that a batch's arenas replace (and their scans' and sorts' buffers)
ARENA_KEYS = (*MOVED_STATE, "params", "sort_keys", "depth_params", "event_links",
              "free_mask", "block_free", "block_alive", "block_owner", "list_owner", "tiles",
              "birth_slots")
_REPLACED_PREFIXES = ("block_free:", "block_alive:", "sort_keys:")
_serials = itertools.count()


@dataclass
class Simulation:
    """What the simulation passes of a pool or a batch bind: its buffers (a lone pool's own,
    or a batch's arenas), its blocks in all and its emitters."""
    name: str                          # the passes' owner: the entity, or the batch
    buffers: dict[str, BufferView]
    blocks: int
    members: int = 1
    # what a batch's passes bind in place of its first member's own contacts and event marks
    # (no batched emitter collides or sends events: these are never read, but must outlive any
    # member)
    stand_ins: dict[str, BufferView] = field(default_factory=dict)
    # how it is stepped (step.py), as simulation_passes chose when it built the passes
    strategy: StepStrategy | None = None
    # by update variant: whether that one-pass update gives the births itself, as decided when
    # it was built (the births pass follows it or not accordingly)
    births_here: dict[tuple, bool] = field(default_factory=dict)
    # what its emitters' features made for it (features.simulation), by feature name
    parts: dict[str, object] = field(default_factory=dict)

    @property
    def one_pass(self) -> bool:
        """Stepped by the one-pass strategy (emitter/update_ranked.wgsl)."""
        return self.strategy is not None and self.strategy.name == "one-pass"


@dataclass
class Batch:
    """Like emitters sharing arenas and simulation passes."""
    name: str
    key: tuple
    members: list[Pool]
    sim: Simulation
    layout: emitter_layout.Layout               # its members' places in the arenas
    page: Page                                  # its params and counters records (records.py)
    arrays: StepArrays                          # its other per-member step records
    records_bases: dict[int, int] = field(default_factory=dict)   # target member -> first record
    passes: list[Pass] = field(default_factory=list)
    updates: dict[tuple, Pass] = field(default_factory=dict)   # update pass by variant
    written: dict[str, bytes] = field(default_factory=dict)    # last upload of rarely changing ones
    dead: set[int] = field(default_factory=set)   # members deleted since it was made (idle)


def batch_key(system: EmitterHost, pool: Pool, fields: bool) -> tuple | None:
    """What a pool's shared passes compile to, or None when it must run alone."""
    c = pool.component
    if (fields or c.allocation != "ordered"
            or c.collision is not None or c.sub_emitters()
            or pool.program is None or pool.program.dtype is not None
            or pool.program.shader(UPDATE) != UPDATE or pool.program.shader(SPAWN) != SPAWN):
        return None
    added = features.batch_key(c, system.shared.resolve)
    programmed = features.program_batch_key(c, pool.program)
    if added is None or programmed is None:
        return None
    return (system.scene_has_forces(), *added, *programmed)


def wanted_groups(system: EmitterHost) -> dict[tuple, list[list[Pool]]]:
    """The batches the pools should form now: like pools in entity order, split where an arena
    would pass the device's largest storage binding; groups of one run alone."""
    if not system.shared.batching:
        return {}
    fields = any(getattr(f, "kind", None) == "vector_field" for _, f in system.query(*FORCE_KEYS))
    limit = system.gpu.limits["max-storage-buffer-binding-size"]
    per_slot = PARTICLE.itemsize
    groups: dict[tuple, list[list[Pool]]] = {}
    for pool in system.pools.values():
        key = batch_key(system, pool, fields)
        if key is None:
            continue
        chunks = groups.setdefault(key, [[]])
        slots = sum(emitter_layout.padded(p.component.capacity) for p in chunks[-1])
        if (slots + emitter_layout.padded(pool.component.capacity)) * per_slot > limit:
            chunks.append([])
        chunks[-1].append(pool)
    # the alpha emitters last, so that their sort's segments count from one record on
    return {key: [sorted(c, key=lambda p: p.component.blend == "alpha") for c in chunks
                  if len(c) >= 2] for key, chunks in groups.items()}


def arrange(system: EmitterHost) -> bool:
    """Regroup all the pools into the batches wanted now; True when any pool's buffers moved."""
    system.pending.clear()
    wanted = [(key, members) for key, chunks in wanted_groups(system).items()
              for members in chunks]
    alive = {id(p) for p in system.pools.values()}
    kept = [b for b in system.batches
            if all(id(p) in alive for p in b.members)
            and any(key == b.key and members == b.members for key, members in wanted)]
    joining = [(key, members) for key, members in wanted
               if not any(b.key == key and b.members == members for b in kept)]
    return _regroup(system, joining, [b for b in system.batches if b not in kept])


SPAWN_GROUP = 8   # like emitters spawned alone that form a batch of their own


def arrange_after(system: EmitterHost, changed: str) -> bool:
    """After a spawn or delete of ``changed``, at a cost that does not grow with the world: a
    batch with more idle members (deleted) than live ones is packed again; a spawned emitter
    that can share waits alone until SPAWN_GROUP like ones have come, which then form a batch,
    merged with any batch of theirs at most twice their size (so each emitter is copied
    O(log n) times, however many come); a vector field regroups everything. (A member that
    events will spawn into stays: its batch's records are laid out again, events.refresh.)"""
    pool = system.pools.get(changed)
    if pool is None:
        worn = [b for b in system.batches if 2 * len(b.dead) > len(b.members)]
        return _regroup(system, [(b.key, _live(system, b)) for b in worn], worn)
    if any(getattr(f, "kind", None) == "vector_field" and ref.name == changed
           for ref, f in system.query("force_field")) and system.batches:
        return arrange(system)
    key = batch_key(system, pool, False) if system.shared.batching else None
    if key is None or pool.batch is not None:
        return False
    pending = [p for p in system.pending.get(key, []) if system.pools.get(p.entity.name) is p
               and p.batch is None] + [pool]
    if len(pending) < SPAWN_GROUP:
        system.pending[key] = pending
        return False
    system.pending[key] = []
    merged, members = [], pending
    for batch in sorted((b for b in system.batches if b.key == key),
                        key=lambda b: len(b.members)):
        if len(batch.members) <= 2 * len(members):
            merged.append(batch)
            members = _live(system, batch) + members
    members.sort(key=lambda p: p.component.blend == "alpha")
    return _regroup(system, [(key, members)], merged)


def _live(system: EmitterHost, batch: Batch) -> list[Pool]:
    return [p for p in batch.members if system.pools.get(p.entity.name) is p]


def _regroup(system: EmitterHost, joining: list[tuple[tuple, list[Pool]]],
             retired: list[Batch]) -> bool:
    """Make the batches ``joining`` (groups of fewer than two run alone) and retire those
    ``retired``: each pool that moves gets its state copied on the GPU into its new place."""
    joining = [(key, members) for key, members in joining if len(members) >= 2]
    joined = {id(p) for _, members in joining for p in members}
    leaving = [p for b in retired for p in _live(system, b) if id(p) not in joined]
    if not joining and not leaving and not retired:
        return False
    resources = system.resources
    encoder = system.device.create_command_encoder(label="emberfx:emitter:arrange")
    spent: list = []   # own buffers of pools that moved, destroyed once the copies are done
    made = []
    for key, members in joining:
        batch = _new_batch(system, key, members)
        for k, pool in enumerate(members):
            old = _take_place(system, pool, spent)
            _place_in_batch(system, batch, k, pool)
            _copy_state(encoder, old, pool.buffers)
        made.append(batch)
    for pool in leaving:
        old = _take_place(system, pool, spent)
        system.place_alone(pool)
        _copy_state(encoder, old, pool.buffers)
    system.device.queue.submit([encoder.finish()])
    for buffer in spent:
        buffer.destroy()
    for batch in retired:
        resources.release(batch.name, system.key)
        system.records.drop(batch.page)
    system.batches = [b for b in system.batches if b not in retired] + made
    for batch in made:
        _finish_batch(system, batch)
    for pool in leaving:   # (its looks came along on the GPU; its params record changed)
        system.resources.write(pool.buffers["params"], pool.param_record.tobytes())
    return True


def retire_member(system: EmitterHost, pool: Pool) -> None:
    """A deleted member idles: no slots, no births (its record says capacity 0), no draw."""
    batch = pool.batch
    assert batch is not None
    k = pool.member
    batch.dead.add(k)
    row = batch.page.params[k]
    row["capacity"], row["budget"], row["force_count"] = 0, 0, 0
    batch.page.counters[k, 0] = 0
    batch.arrays.inboxes[k] = np.zeros((), INBOX)


def _new_batch(system: EmitterHost, key: tuple, members: list[Pool]) -> Batch:
    """The arenas of a new batch (zeroed; the owner tables written), laid out as layout.py
    lays out any simulation, with what only a batch has: the arenas its features add (culling's),
    one copy of the features' buffers for all, and stand-ins for its first member's contacts and
    event marks."""
    name = f"~batch{next(_serials)}"
    n = len(members)
    layout = emitter_layout.plan(system, [p.component for p in members])
    sizes = {k: v for k, v in layout.sizes.items() if k not in emitter_layout.RECORDS}
    sizes.update(features.arenas(system, members, layout))
    lead = members[0]
    # the features' buffers, one for all: the batch key says the members' are alike
    contents = features.buffers(lead.component, system.shared.resolve)
    sizes.update({k: (len(data), STORAGE) for k, data in contents.items()})
    for binding, view in features.stand_ins(lead).items():
        sizes[f"stand_in:{binding}"] = (view.size, STORAGE)
    what = f"the {n} batched emitters {members[0].entity.name!r}..{members[-1].entity.name!r}"
    arenas = {k: system.resources.buffer(name, k, size,
                                         usage | wgpu.BufferUsage.COPY_SRC
                                         | wgpu.BufferUsage.COPY_DST,
                                         family=system.key, what=f"{what}: {k}")
              for k, (size, usage) in sizes.items()}
    page = system.records.batch_page(name, n)
    arenas.update(page.buffers)
    write_owners(system, layout, arenas)
    for k, data in contents.items():
        system.resources.write(arenas[k], data)
    alphas, segment = layout.alpha
    if alphas:   # the alpha segments of the alive list, as the sort's values
        arenas["sort_values"] = system.resources.view(f"{name}/alive_list", "sort_values",
                                                      layout.slots * 4, alphas * segment * 4)
    stand_ins = {k.split(":", 1)[1]: arenas.pop(k) for k in list(arenas)
                 if k.startswith("stand_in:")}
    sim = Simulation(name, arenas, layout.blocks, n, stand_ins)
    features.simulation(system, members[0], sim)
    return Batch(name, key, list(members), sim, layout, page, StepArrays.of(n, layout.records))


def write_owners(system: EmitterHost, layout: emitter_layout.Layout,
                 buffers: dict[str, BufferView]) -> None:
    """The emitter of each block and of each 256 alive-list entries (all 0 for one)."""
    blocks, listed = layout.owners()
    if len(layout.bases) > 1:
        system.resources.write(buffers["block_owner"], blocks.tobytes())
        system.resources.write(buffers["list_owner"], listed.tobytes())


def _take_place(system: EmitterHost, pool: Pool, spent: list) -> dict[str, BufferView]:
    """Forget the names of the pool's arena-replaceable buffers (own buffers go to ``spent``);
    return the old views of its moving state."""
    resources, name = system.resources, pool.entity.name
    old = {k: pool.buffers[k] for k in MOVED_STATE if k in pool.buffers}
    system.records.free(pool, spent)   # (a lone pool's params and counters: its page's)
    for k in ARENA_KEYS:
        if k in pool.buffers:
            buffer = resources.take(pool.buffers.pop(k).name)
            if buffer is not None:
                spent.append(buffer)
    for full in [n for n in resources.names(owner=name)
                 if n.split("/", 1)[1].startswith(_REPLACED_PREFIXES)]:
        item = resources.get(full)
        if isinstance(item, BufferView) and item.family == system.key:
            buffer = resources.take(full)
            if buffer is not None:
                spent.append(buffer)
    pool.updates.clear()
    pool.batch = None
    return old


def _place_in_batch(system: EmitterHost, batch: Batch, k: int, pool: Pool) -> None:
    """Member k's views into the arenas, published under its own names, and its records."""
    name = pool.entity.name
    layout = batch.layout
    for key, (offset, size) in layout.regions(k).items():
        if key not in emitter_layout.RECORDS:
            pool.buffers[key] = system.resources.view(f"{batch.name}/{key}", key, offset, size,
                                                      owner=name)
    system.records.place(pool, (batch.page, k))   # packing a step writes the page's rows
    for field_name, value in layout.record_fields(k).items():
        pool.param_record[field_name] = value
    pool.batch, pool.member = batch, k
    # its looks and sprite look came along on the GPU (MOVED_STATE); its static fields and
    # sprite look are packed into the batch's records at the next step
    pool.dirty, pool.record_keys = True, {}


def _copy_state(encoder, old: dict[str, BufferView], new: dict[str, BufferView]) -> None:
    for key, source in old.items():
        target = new.get(key)
        if target is not None:
            size = min(source.size, target.size) // 4 * 4
            if size:
                encoder.copy_buffer_to_buffer(source.buffer, source.offset, target.buffer,
                                              target.offset, size)


def _finish_batch(system: EmitterHost, batch: Batch) -> None:
    """The batch's records arena, its shared passes, each member's own passes and readback,
    and the uniforms a render before the next step reads."""
    _place_records(system, batch)
    _build_passes(system, batch)
    for pool in batch.members:
        system.place_member(pool)
    system.resources.write(batch.sim.buffers["params"], batch.page.params.tobytes())


def rewire(system: EmitterHost, batch: Batch) -> None:
    """The links into some members changed (events.refresh): their records laid out again, and
    a new spawn pass (it reads events where any member receives them; passes.with_new_spawn)."""
    _place_records(system, batch)
    lead = batch.members[0]
    one_pass = batch.sim.one_pass
    passes = emitter_step.with_new_spawn(system, lead, batch.sim, batch.passes, batch.updates)
    batch.passes = [member_writes(batch, p) for p in passes]
    if one_pass:   # (the update passes were made again)
        batch.updates = {lead.variant: next(p for p in batch.passes
                                            if p.name.endswith(":emitter:update"))}


def _place_records(system: EmitterHost, batch: Batch) -> None:
    """The batch's records arena (made anew): each member that events spawn into gets a region
    of it, 256-byte aligned, as its ``<e>/event_records`` view (its first record goes into its
    inbox, ``records_base``); the others keep their own one-record buffers. Records live for a
    step (the sources' write passes fill them before the spawn reads them): nothing is copied."""
    events, resources = system.events, system.resources
    name = f"{batch.name}/event_records"
    old = resources.take(name) if name in resources else None
    align = VIEW_ALIGNMENT // EVENT_RECORD.itemsize   # records a region is a multiple of
    regions: dict[int, tuple[int, int]] = {}
    total = 0
    for k, pool in enumerate(batch.members):
        quota = events.records_quota(pool.entity.name)
        if quota and k not in batch.dead:
            regions[k] = (total, quota)
            total += math.ceil(quota / align) * align
    arena = resources.buffer(batch.name, "event_records", max(total, align) * EVENT_RECORD.itemsize,
                             STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST,
                             family=system.key,
                             what=f"the event records of batch {batch.name}'s members")
    batch.sim.buffers["event_records"] = arena
    batch.records_bases = {k: base for k, (base, _) in regions.items()}
    for k, pool in enumerate(batch.members):
        if k in batch.dead:
            continue   # (its entity is gone, and its views with it)
        if k in regions:
            base, quota = regions[k]
            events.drop_records(pool)   # its own, or its view into the arena made before
            pool.buffers["event_records"] = resources.view(
                name, "event_records", base * EVENT_RECORD.itemsize,
                quota * EVENT_RECORD.itemsize, owner=pool.entity.name)
        else:
            events.own_records(pool)   # (kept, or made again after it stopped receiving)
        events.records_moved(pool.entity.name)
    if old is not None:
        old.destroy()


def _build_passes(system: EmitterHost, batch: Batch) -> None:
    """The batch's shared simulation passes, its features' render passes (culling's) and its
    alpha sort."""
    lead = batch.members[0]
    batch.updates.clear()
    passes = emitter_step.simulation_passes(system, lead, batch.sim, batch.updates)
    alphas, segment = batch.layout.alpha
    b, c = batch.sim.buffers, lead.component
    passes += features.render_passes(system, lead, batch.sim)   # (culling's, before the sort)
    if alphas:
        sort = emitter_passes.alpha_sort(system, batch.name, features.sort_inputs(c, b),
                                         segment, len(batch.members) - alphas, alphas)
        passes += features.sort_passes(c, b, sort)
    batch.passes = [member_writes(batch, p) for p in passes]
    batch.updates[lead.variant] = batch.passes[0]


def member_writes(batch: Batch, p: Pass) -> Pass:
    """``p`` declaring, beside each arena it writes, every member's view of it: the frame graph
    then orders each reader of ``<e>/particles`` (a trail's sampling) after it."""
    members: dict[int, list[str]] = {}   # arena buffer -> its members' views
    for pool in batch.members:
        for view in pool.buffers.values():
            members.setdefault(id(view.buffer), []).append(view.name)
    written = {id(a.buffer) for a in batch.sim.buffers.values() if a.name in p.writes}
    extra = [name for buffer in written for name in members.get(buffer, ())]
    return replace(p, writes=tuple(dict.fromkeys((*p.writes, *extra))))


# a batch's emitters draw in runs (systems/emitter/passes.py)
draw_runs = emitter_passes.draw_runs
