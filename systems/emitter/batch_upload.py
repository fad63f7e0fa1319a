"""What the host writes each step for a lone emitter and for a batch of emitters, and what it
reads back (batches.py forms the batches and their arenas; records.py the lone emitters' pages).

A step packs every member's records into the batch's host arrays and writes each arena once:
params, the cleared counters (the budget word), the inboxes of the members events spawn into
(when any), and the forces and sprite looks when they changed. The counters come back in one
region for all members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from emberfx.core.system import Readback, StepInfo
from emberfx.systems.emitter import features
from emberfx.systems.emitter.looks import pack_sprite_look, sprite_look_key
from emberfx.systems.emitter.params import COUNTERS, forces_bytes, pack_params, pack_step
from emberfx.systems.forces.forces import MAX_FORCES, pack_forces
from emberfx.systems.forces.forces import arrange as arrange_forces

if TYPE_CHECKING:
    from emberfx.core.resources import BufferView
    from emberfx.systems.emitter.batches import Batch
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool


def upload_lone(system: EmitterHost, pool: Pool, step: StepInfo, start: float,
            in_scene: list | None = None) -> None:
    """A lone pool's step: what its component alone decides is packed again only after an
    edit (``pool.dirty``); the forces and its look are written only when they changed. Its
    params record is a row of a page that records.upload writes for every pool at once."""
    c, full = pool.component, pool.dirty
    pool.dirty = False
    acting = system.forces_on(pool, in_scene)
    budget, forces = pack_step(pool, step, start, acting, full,
                               system.events.is_target(pool.entity.name))
    write, b = system.resources.write, pool.buffers
    if pool.contacts is not None:
        pool.contacts.write_step(c, acting)
    packed = forces_bytes(pool, forces, step)
    if packed != pool.written_forces:
        write(b["forces"], packed)
        pool.written_forces = packed
    if full:   # the look is the component's alone: looked at after an edit only
        look_key = sprite_look_key(c)
        if look_key != pool.look_key:   # (a script moving the emitter leaves it)
            look = pack_sprite_look(c)
            if look != pool.written_look:
                write(b["sprite_look"], look)
                pool.written_look = look
            pool.look_key = look_key
    features.upload(system, pool)
    if full:
        system.write_looks(pool)
    system.records.set_cleared(pool, budget)   # the budget, and zero counts (no clear pass)
    system.events.write_inbox(pool, budget)



def upload_step(system: EmitterHost, batch: Batch, step, start: float, in_scene: list) -> None:
    """One step's records of every member, packed into the batch's arrays and written with one
    write per arena. What a member's component alone decides is packed only after an edit
    (``pool.dirty``); the step's frame, time, budgets and the forces (once per distinct
    ``affected_by``) go in as columns."""
    params, events, bases = batch.params, system.events, batch.records_bases
    budgets = np.zeros(len(batch.members), np.uint32)
    forces_of: dict = {}   # affected_by -> (force records, accelerate_end, kill_start)
    for k, pool in enumerate(batch.members):
        if k in batch.dead:
            continue
        c = pool.component
        name = pool.entity.name
        budget, velocity = pool.births.step(c, start, step.dt, events.is_target(name))
        budgets[k] = budget
        if k in bases:
            inbox = events.inbox_record(pool, budget, bases[k])
            if inbox is not None:
                batch.inboxes[k] = inbox
        acting = None if c.affected_by is None else tuple(c.affected_by)
        found = forces_of.get(acting)
        if found is None:
            arranged, accelerate_end, kill_start = arrange_forces(
                system.forces_on(pool, in_scene)[:MAX_FORCES])
            found = forces_of[acting] = (pack_forces(arranged, step.frame * step.dt),
                                         accelerate_end, kill_start, len(arranged))
        records, accelerate_end, kill_start, count = found
        if pool.dirty:
            pack_params(pool.param_record, c, entity=pool.entity.index, frame=step.frame,
                        seed=step.seed, dt=step.dt, budget=budget, force_count=count)
            look = pack_sprite_look(c)
            batch.sprites[k, :len(look)] = np.frombuffer(look, np.uint8)
            system.write_looks(pool)
            pool.dirty = False
        if c.inherit_velocity:
            params["inherit"][k, :3] = [c.inherit_velocity * u for u in velocity]
        row = params[k]
        row["force_count"], row["accelerate_end"], row["kill_start"] = (
            count, accelerate_end, kill_start)
        if count:
            batch.forces[k * MAX_FORCES:k * MAX_FORCES + len(records)] = records
    params["budget"], params["frame"], params["seed"] = budgets, step.frame, step.seed
    params["h"], params["time"] = step.dt, start
    batch.counters[:, 0] = budgets   # the budget word; the other counts start at zero
    b, write = batch.sim.buffers, system.resources.write
    write(b["params"], params.tobytes())
    write(b["counters"], batch.counters.tobytes())
    if bases:   # (the tallies of the last step are in it: written every step)
        write(b["event_links"], batch.inboxes.tobytes())
    for key, array in (("forces", batch.forces), ("sprite_look", batch.sprites)):
        data = array.tobytes()
        if batch.written.get(key) != data:
            write(b[key], data)
            batch.written[key] = data


def counters_readback(owner: str, counters: BufferView, members: int) -> Readback:
    """The Counters records of a simulation's ``members`` emitters (a lone pool: 1; a batch:
    every member's, side by side) as one region, copied back once per step."""
    return Readback(owner, "emitter", counters.name, counters.buffer, counters.offset,
                    members * COUNTERS.itemsize)
