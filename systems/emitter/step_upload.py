"""What the host writes for a simulation each step, and what it reads back: one path for an
emitter alone (a simulation of one) and for a batch (layout.py lays out both).

A step packs each emitter's records: its params record and the budget word of its counters
(rows of a records page, records.py, which writes every page at once), its forces, its
features' records (the looks) and, where events spawn into it, its inbox (rows of the
simulation's StepArrays, each array written with one write when it changed). What an
emitter's component alone decides is packed again only after an edit (``pool.dirty``), and a
feature's record only when what it is packed from changed; the forces are arranged and packed
once per distinct ``affected_by``.
The counters come back in one region for all of a simulation's emitters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from emberfx.core.system import Readback, StepInfo
from emberfx.systems.emitter import features
from emberfx.systems.emitter.events import INBOX
from emberfx.systems.emitter.params import arranged, force_records, pack_step
from emberfx.systems.emitter.structs import COUNTERS
from emberfx.systems.forces.forces import FORCE, MAX_FORCES

if TYPE_CHECKING:
    from emberfx.core.resources import BufferView
    from emberfx.systems.emitter.feature import Record
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool
    from emberfx.systems.emitter.records import Page


@dataclass
class StepArrays:
    """The host copies of a simulation's per-emitter arrays that a step writes beside its
    params and counters, and the forces last written."""
    forces: np.ndarray    # MAX_FORCES Force records per emitter
    inboxes: np.ndarray   # one EventInbox per emitter (written when any is an event target)
    records: dict[str, np.ndarray]   # the features' records, (emitters, stride) bytes each
    written: bytes = b""

    @classmethod
    def of(cls, emitters: int, records: dict[str, Record]) -> StepArrays:
        return cls(np.zeros(emitters * MAX_FORCES, FORCE), np.zeros(emitters, INBOX),
                   {key: np.zeros((emitters, r.stride), np.uint8) for key, r in records.items()})


def pack_member(system: EmitterHost, pool: Pool, k: int, arrays: StepArrays, step: StepInfo,
                start: float, in_scene: list | None, cache: dict
                ) -> tuple[int, list, tuple[int, int, int]]:
    """Emitter k's params record and forces for the step covering [start, start + dt) (its
    birth bookkeeping advances); returns its birth budget, the forces acting on it and the
    step's force fields of its params record (force_count, accelerate_end, kill_start).
    ``cache``: the forces arranged and packed so far this step, by ``affected_by`` (an emitter
    that samples vector fields packs its own: their indices are its volumes')."""
    c = pool.component
    own = pool.contacts is not None and bool(pool.contacts.volume_index)
    key = None if c.affected_by is None else tuple(c.affected_by)
    found = None if own else cache.get(key)
    if found is None:
        acting = system.forces_on(pool, in_scene)
        order = arranged(acting)
        forces, accelerate_end, kill_start = order
        fields = (len(forces), len(forces) if accelerate_end is None else accelerate_end,
                  kill_start)
        found = (acting, order, fields, force_records(pool, forces, step) if forces else None)
        if not own:
            cache[key] = found
    acting, order, fields, records = found
    target = system.events.is_target(pool.entity.name)
    if pool.dirty or c.inherit_velocity:
        budget = pack_step(pool, step, start, order, pool.dirty, target)
    else:   # nothing of the component's to pack: the births alone advance
        budget = pool.births.step(c, start, step.dt, target)[0]
    if records is not None:
        arrays.forces[k * MAX_FORCES:k * MAX_FORCES + fields[0]] = records[:fields[0]]
    return budget, acting, fields


@dataclass
class Packed:
    """A simulation's step as packed, before the records pages set the step's own fields and
    its features upload (``finish``)."""
    rows: list[tuple[Pool, int, int, tuple]]   # (pool, k, budget, force fields) for set_step
    later: list[tuple[int, Pool, bool, list]]  # edited, or with features that upload
    inboxes: bool                              # some member is an event target


def pack(system: EmitterHost, members: list[Pool], arrays: StepArrays, step: StepInfo,
         start: float, in_scene: list | None, cache: dict,
         records_bases: dict[int, int] | None = None, idle: set[int] | frozenset = frozenset()
         ) -> Packed:
    """Pack one step of a simulation's emitters into ``arrays`` (``cache``: the forces
    arranged so far this step, shared by every simulation of the step; ``records_bases``:
    where the event records of a batch's targets start, None for an emitter alone; ``idle``:
    deleted members, which keep their idle records)."""
    events = system.events
    packed = Packed([], [], False)
    for k, pool in enumerate(members):
        if k in idle:
            continue
        full = pool.dirty
        budget, acting, fields = pack_member(system, pool, k, arrays, step, start, in_scene,
                                             cache)
        pool.dirty = False
        packed.rows.append((pool, k, budget, fields))
        if full or pool.uploading is None or pool.uploading:
            packed.later.append((k, pool, full, acting))
        if records_bases is None or k in records_bases:
            inbox = events.inbox_record(pool, budget,
                                        0 if records_bases is None else records_bases[k])
            if inbox is not None:
                arrays.inboxes[k] = inbox
                packed.inboxes = True
    return packed


def finish(system: EmitterHost, buffers: dict[str, BufferView], arrays: StepArrays,
           packed: Packed) -> None:
    """After the records pages set the step's own fields (a mesh look takes the step's frame,
    timestep and seed from the params record): the features' uploads, and the simulation's
    arrays written where they changed (``buffers``: its own, or a batch's arenas)."""
    changed: set[str] = set()   # the records some emitter's edit changed
    for k, pool, full, acting in packed.later:
        c = pool.component
        features.upload(system, pool, acting, full)
        if full:   # the records are the component's alone: looked at after an edit only
            for key, (feature, _) in features.records(c).items():
                made = feature.record_key(c, key)
                if made != pool.record_keys.get(key):   # (a script moving the emitter: none)
                    data = feature.pack_record(c, key)
                    arrays.records[key][k, :len(data)] = np.frombuffer(data, np.uint8)
                    pool.record_keys[key] = made
                    changed.add(key)
    write = system.resources.write
    if packed.inboxes:   # (the tallies of the last step are in it: written every step)
        write(buffers["event_links"], arrays.inboxes.tobytes())
    for key in changed:
        write(buffers[key], arrays.records[key].tobytes())
    data = arrays.forces.tobytes()
    if arrays.written != data:
        write(buffers["forces"], data)
        arrays.written = data


def upload(system: EmitterHost, buffers: dict[str, BufferView], members: list[Pool],
           arrays: StepArrays, step: StepInfo, start: float, in_scene: list | None = None,
           records_bases: dict[int, int] | None = None, idle: set[int] | frozenset = frozenset(),
           page: Page | None = None) -> None:
    """One simulation's step by itself: ``pack``, the records pages' step fields (``page``:
    a batch's page, whose record k is member k's; None: each pool's own place), ``finish``."""
    packed = pack(system, members, arrays, step, start, in_scene, {}, records_bases, idle)
    system.records.set_step(step, start, packed.rows, page)
    finish(system, buffers, arrays, packed)


def counters_readback(owner: str, counters: BufferView, members: int) -> Readback:
    """The Counters records of a simulation's ``members`` emitters (a lone pool: 1; a batch:
    every member's, side by side) as one region, copied back once per step."""
    return Readback(owner, "emitter", counters.name, counters.buffer, counters.offset,
                    members * COUNTERS.itemsize)
