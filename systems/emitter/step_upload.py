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
                start: float, in_scene: list | None, cache: dict) -> tuple[int, list, tuple]:
    """Emitter k's params record and forces for the step covering [start, start + dt) (its
    birth bookkeeping advances); returns its birth budget, the forces acting on it and their
    arrangement (the forces its update reads, accelerate_end, kill_start).
    ``cache``: the forces arranged and packed so far this step, by ``affected_by`` (an emitter
    that samples vector fields packs its own: their indices are its volumes')."""
    c = pool.component
    own = pool.contacts is not None and bool(pool.contacts.volume_index)
    key = None if c.affected_by is None else tuple(c.affected_by)
    found = None if own else cache.get(key)
    if found is None:
        acting = system.forces_on(pool, in_scene)
        order = arranged(acting)
        found = (acting, order, force_records(pool, order[0], step) if order[0] else None)
        if not own:
            cache[key] = found
    acting, order, records = found
    budget = pack_step(pool, step, start, order, pool.dirty,
                       system.events.is_target(pool.entity.name))
    if records is not None:
        count = len(order[0])
        arrays.forces[k * MAX_FORCES:k * MAX_FORCES + count] = records[:count]
    return budget, acting, order


def upload(system: EmitterHost, buffers: dict[str, BufferView], members: list[Pool],
           arrays: StepArrays, step: StepInfo, start: float, in_scene: list | None = None,
           records_bases: dict[int, int] | None = None, idle: set[int] | frozenset = frozenset()
           ) -> None:
    """One step's records of a simulation's emitters (``buffers``: its own, or a batch's
    arenas; ``records_bases``: where the event records of a batch's targets start, None for an
    emitter alone; ``idle``: deleted members, which keep their idle records)."""
    events = system.events
    cache: dict = {}
    inboxes = False
    packed: set[str] = set()   # the records some emitter's edit changed
    rows: list[tuple[Pool, int, tuple]] = []   # the step's own fields, set by the pages
    later: list[tuple[int, Pool, bool, list]] = []   # edited, or with features that upload
    for k, pool in enumerate(members):
        if k in idle:
            continue
        full = pool.dirty
        budget, acting, order = pack_member(system, pool, k, arrays, step, start, in_scene,
                                            cache)
        pool.dirty = False
        rows.append((pool, budget, order))
        if full or pool.uploading is None or pool.uploading:
            later.append((k, pool, full, acting))
        base = 0 if records_bases is None else records_bases.get(k)
        if base is not None:
            inbox = events.inbox_record(pool, budget, base)
            if inbox is not None:
                arrays.inboxes[k] = inbox
                inboxes = True
    # the params records complete before the features read them (a mesh look takes the step's
    # frame, timestep and seed from it)
    system.records.set_step(step, start, rows)
    for k, pool, full, acting in later:
        c = pool.component
        features.upload(system, pool, acting, full)
        if full:   # the records are the component's alone: looked at after an edit only
            for key, (feature, _) in features.records(c).items():
                made = feature.record_key(c, key)
                if made != pool.record_keys.get(key):   # (a script moving the emitter: none)
                    data = feature.pack_record(c, key)
                    arrays.records[key][k, :len(data)] = np.frombuffer(data, np.uint8)
                    pool.record_keys[key] = made
                    packed.add(key)
    write = system.resources.write
    if inboxes:   # (the tallies of the last step are in it: written every step)
        write(buffers["event_links"], arrays.inboxes.tobytes())
    for key in packed:
        write(buffers[key], arrays.records[key].tobytes())
    data = arrays.forces.tobytes()
    if arrays.written != data:
        write(buffers["forces"], data)
        arrays.written = data


def counters_readback(owner: str, counters: BufferView, members: int) -> Readback:
    """The Counters records of a simulation's ``members`` emitters (a lone pool: 1; a batch:
    every member's, side by side) as one region, copied back once per step."""
    return Readback(owner, "emitter", counters.name, counters.buffer, counters.offset,
                    members * COUNTERS.itemsize)
