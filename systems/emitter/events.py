"""GPU events and sub-emitters: the wiring between emitter pools (systems/emitter/system.py keeps
the pools; this module adds what events need).

An emitter with ``on_death``, ``on_collision`` or ``on_age`` is a *source*; the emitter each names
is a *target*; a source and one of its event kinds is a *link*. Each step, all on the GPU:

  SIMULATE  <s>:emitter:update              also marks each slot's events of the step (bit masks
                                            and per-block counts in <s>/event_marks)
            <s>:emitter:events:scan:*       ranks them in slot order: one prefix scan over the
                                            block counts of every kind the source sends
            <s>:emitter:events:tally        link by link: the link's records and births in
                                            the target's inbox (<t>/event_links) and budget
                                            (<t>/counters), after the links tallied before it
            <s>:emitter:events:write        each event's record (where the parent was, its
                                            velocity) at its rank in the target's records
                                            (<t>/event_records)
            (one tally and one write for the links whose targets share buffers: a target
            alone, or the targets of one batch, bound through its arenas; with several such
            groups, <s>:emitter:events:<t or batch>:tally and :write per group)
            <s>:emitter:spawn ...           the source's own births (reusing dead slots) after
            <t>:emitter:count, spawn        the target's births: its host budget first, then
                                            `count` per record, link after link, lowest free
                                            slots first (emitter/spawn.wgsl)

Nothing comes back to the CPU on the way: the budget a target gives births from is the host's
(rate, bursts, scripts) plus what the tallies add. Pools run sources before targets (``ordered``),
so the events of step N are born in the target at the end of step N and first move at step
N + 1; a chain a -> b -> c takes a step per level. The links into one target are tallied in
scene order of their sources, then death, collision, age, and every rank comes from a scan in
slot order, so two runs give the same bytes. A link stores at most min(source capacity,
ceil(target capacity / count)) records (more could not be born); the true event count is still
counted. Prewarm runs an emitter alone: it sends and receives no events.

The counts per kind reach ``stats()`` through the counters readback (1-2 steps late), and from
the never-cleared totals scripts get ``on_event(ctx, "death:<source>", {"count": n})``.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.core import wgsl
from emberfx.core.errors import SceneError
from emberfx.core.frame_graph import Folded, Folding, Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.systems.emitter import color as particle_color
from emberfx.systems.emitter import features
from emberfx.systems.emitter.component import EVENT_KINDS, MAX_EVENT_LINKS, sub_emitter_problem
from emberfx.systems.emitter.event_marks import KIND_INDEX, kinds_sent
from emberfx.systems.emitter.shader_names import SPAWN
from emberfx.systems.emitter.structs import BLOCK, COUNTERS

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Batch, Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

INBOX = struct_dtype("emitter/event_types.wgsl", "EventInbox")
RECORD = struct_dtype("emitter/event_types.wgsl", "EventRecord")
assert COUNTERS.fields is not None   # a struct
COUNTERS_CLEARED = int(COUNTERS.fields["event_totals"][1])
"""bytes of the counters each step's clear covers (from word 1): all but the event totals"""
assert wgsl.int_constant("emitter/event_types.wgsl", "MAX_EVENT_LINKS") == MAX_EVENT_LINKS
assert set(KIND_INDEX) == set(EVENT_KINDS)
FAMILY = "emitter_events"   # the records buffers: remade when the links change, not the pool
STORAGE = wgpu.BufferUsage.STORAGE


@dataclass(frozen=True)
class Link:
    """A source's events of one kind spawning into a target."""
    source: str
    kind: str
    target: str
    index: int   # in the target's inbox.links
    quota: int   # records it may store per step


class EventWiring:
    """The links between one EmitterHost's pools, and the buffers and passes they need."""

    def __init__(self, system: EmitterHost):
        self.system = system
        self.links: list[Link] = []
        self.into: dict[str, list[Link]] = {}          # target -> its links, in tally order
        self.sources: dict[str, None] = {}             # pools that send events
        self.pending: set[str] = set()                 # pools made since the last refresh
        self.scans: dict[str, PrefixScan] = {}         # source -> the scan of its block counts
        self.scan_passes: dict[str, list[Pass]] = {}   # source -> that scan's passes
        self.link_passes: dict[str, list[Pass]] = {}   # source -> its tally and write passes
        self.seen: dict[str, np.ndarray] = {}          # source -> event totals scripts heard of
        # what the records and spawn pass of a pool, and the link passes of a source, were
        # made for (the pools' identities change when they are rebuilt)
        self.inbox_keys: dict[str, tuple] = {}
        self.link_keys: dict[str, tuple] = {}
        # serial numbers of each pool and records buffer as made (never reused, unlike id())
        self.made: dict[str, int] = {}
        self.records_made: dict[str, int] = {}
        self._serials = itertools.count()
        self.early_targets: set[str] = set()   # prewarming pools events spawn into
        self.inboxes: dict[str, tuple[tuple, np.ndarray]] = {}   # target -> (key, its record)

    # a pool's own part, made with the pool (its event marks: emitter/event_marks.py; its
    # inbox, ``event_links``, where it is placed: alone, or a view into its batch's arena) -----
    def attach(self, pool: Pool) -> None:
        """A new pool: the scan of its event counts (a source), a placeholder records buffer
        (no links into it until the next refresh) and, for a prewarm, whether events will
        spawn into it (its unset `rate` is then none already)."""
        name, c = pool.entity.name, pool.component
        kinds = kinds_sent(c)
        if kinds:
            blocks = math.ceil(c.capacity / BLOCK)
            self.scan_passes.pop(name, None)
            self.scans[name] = PrefixScan(self.system.build, f"{name}:emitter:events",
                                          pool.buffers["event_marks"], len(kinds) * blocks)
        self._make_records(pool, 1)
        self.into.pop(name, None)
        self.pending.add(name)
        if kinds:
            self.sources[name] = None
        self.made[name] = next(self._serials)
        self.inbox_keys[name] = (self.made[name], ())
        if c.prewarm > 0.0 and any(spawn.emitter == name for _, other in
                                   self.system.query("emitter")
                                   for _, spawn in other.sub_emitters()):
            self.early_targets.add(name)

    def forget(self, name: str) -> None:
        self.system.resources.release(name, FAMILY)
        for table in (self.scans, self.scan_passes, self.link_passes,
                      self.link_keys, self.seen, self.inbox_keys, self.into, self.made,
                      self.records_made, self.sources, self.inboxes):
            table.pop(name, None)
        self.pending.discard(name)

    def is_target(self, name: str) -> bool:
        """Whether events spawn into the pool (its unset `rate` is then none)."""
        return name in self.into or name in self.early_targets

    def spawn_pass(self, pool: Pool, sim: Simulation) -> Pass:
        """The ordered spawn (emitter/spawn.wgsl) over ``sim`` (the pool's buffers, or its
        batch's arenas), reading the budgets from the counters and, where events spawn into an
        emitter, its births from its inbox and records (a batch's inbox and records arenas)."""
        b = sim.buffers   # (alone: the pool's own buffers)
        members = pool.batch.members if pool.batch is not None else [pool]
        tuning = self.system.tuning   # blocks per workgroup: one below spawn_grouped_from
        per_group = (tuning.spawn_blocks_per_group if sim.blocks >= tuning.spawn_grouped_from
                     else 1)
        return self.system.build.compute(
            f"{sim.name}:emitter:spawn", Phase.SIMULATE, pool.shader(SPAWN),
            self.system.gpu.grid(math.ceil(sim.blocks / per_group)),
            {"emitters": b["params"], "particles": b["particles"], "free_mask": b["free_mask"],
             "free_offset": b["block_free"], "alive_list": b["alive_list"],
             "block_owner": b["block_owner"], "budget": b["counters"],
             "inboxes": b["event_links"], "event_records": b["event_records"],
             **features.part_bindings(pool, SPAWN), **features.bindings(pool.component, SPAWN, b)},
            constants={"EVENT_TARGET": any(self.into.get(m.entity.name) for m in members),
                       "BLOCKS_PER_GROUP": per_group},
            does="births to the lowest free slots (the host's budget, then event records), and "
                 "the alive list")

    def records_quota(self, name: str) -> int:
        """Records the links into pool ``name`` may store in a step."""
        return sum(link.quota for link in self.into.get(name, ()))

    def own_records(self, pool: Pool) -> None:
        """Records of the pool's own (a pool alone, or a batched one no events reach), unless
        it has them already; a view into a batch's records arena is replaced."""
        view = pool.buffers.get("event_records")
        if view is None or view.family != FAMILY:
            self._make_records(pool, self.records_quota(pool.entity.name))

    def drop_records(self, pool: Pool) -> None:
        """Forget the pool's records: its own buffer is destroyed; a view into its batch's
        records arena only loses its name (the arena is the batch's)."""
        old = pool.buffers.pop("event_records", None)
        pool.buffers.pop(particle_color.EVENT_BUFFER, None)   # (of the same family)
        if old is not None and old.family == FAMILY:
            self.system.resources.release(pool.entity.name, FAMILY)
        elif old is not None:
            self.system.resources.take(old.name)

    def _make_records(self, pool: Pool, count: int) -> None:
        name = pool.entity.name
        self.drop_records(pool)
        pool.buffers["event_records"] = self.system.resources.buffer(
            name, "event_records", max(1, count) * RECORD.itemsize,
            STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC, family=FAMILY,
            what=f"entity '{name}': the event records of its sub-emitter links")
        particle_color.make_event_colors(self.system.resources, pool, count, FAMILY)
        self.records_made[name] = next(self._serials)

    def records_moved(self, name: str) -> None:
        """Pool ``name``'s inbox, records or counters are new views (it joined a batch, or its
        batch laid out its records again): the link passes into it bind them anew."""
        self.records_made[name] = next(self._serials)

    # the links -------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Bring the links up to the pools and their sub-emitter fields (after a rebuild, spawn
        or delete): a target whose links changed gets new records and a new spawn pass, a source
        whose links or targets changed new link passes. Only sources, targets and the pools
        made since the last call are looked at, so a spawn that touches no link costs the same
        in a world of any size."""
        pools = self.system.pools
        looked_at = set(self.into) | self.pending
        self.into, self.links, self.early_targets = {}, [], set()
        for name in sorted((n for n in self.sources if n in pools),
                           key=lambda n: pools[n].entity.index):
            pool = pools[name]
            for kind, spawn in pool.component.sub_emitters():
                target = pools.get(spawn.emitter)
                if target is None or target.component.allocation != "ordered":
                    continue   # gone, or refused when it was added (check_links)
                into = self.into.setdefault(spawn.emitter, [])
                if len(into) == MAX_EVENT_LINKS:
                    continue   # refused when a scene loads; possible only after deletions
                quota = min(pool.component.capacity,
                            math.ceil(target.component.capacity / spawn.count))
                link = Link(name, kind, spawn.emitter, len(into), quota)
                into.append(link)
                self.links.append(link)
        made = self.made
        rewired: dict[int, Batch] = {}   # batches whose members' links changed
        for name in sorted(looked_at | set(self.into)):
            target = pools.get(name)
            if target is None:
                continue
            into = self.into.get(name, [])
            inbox_key = (made[name], tuple((link.source, made[link.source], link.kind,
                                            link.quota) for link in into))
            if self.inbox_keys.get(name) != inbox_key:
                self.inbox_keys[name] = inbox_key
                if target.batch is not None:
                    rewired[id(target.batch)] = target.batch
                    continue
                self._make_records(target, self.records_quota(name))
                if target.component.allocation == "ordered":
                    self.system.replace_spawn(target)
        for batch in rewired.values():
            self.system.rewire_batch(batch)
        self.pending.clear()
        by_source: dict[str, list[Link]] = {}
        for link in self.links:
            by_source.setdefault(link.source, []).append(link)
        for name in [n for n in self.link_passes if n not in by_source]:
            del self.link_passes[name], self.link_keys[name]
        for name, links in by_source.items():
            link_key = tuple((made[name], link.kind, link.index, made[link.target],
                              self.records_made[link.target]) for link in links)
            if self.link_keys.get(name) != link_key:
                self.link_passes[name] = self._link_passes(name, links)
                self.link_keys[name] = link_key

    def _link_passes(self, source_name: str, links: list[Link]) -> list[Pass]:
        """The tally and write passes of a source's links (emitter/event_tally.wgsl and
        event_write.wgsl): one of each for the links whose targets share buffers (a target
        alone, whose own inbox, counters and records they bind; or the targets of one batch,
        whose arenas they bind, each target by its place in it), in the order of the links."""
        pools = self.system.pools
        source = pools[source_name]
        s = source.buffers
        groups: dict[str, list[Link]] = {}   # the targets' batch, or the target alone
        for link in links:
            batch = pools[link.target].batch
            groups.setdefault(batch.name if batch is not None else link.target, []).append(link)
        sent = sum(1 << KIND_INDEX[k] for k in kinds_sent(source.component))
        compute = self.system.build.compute
        passes = []
        for key, group in groups.items():
            first = pools[group[0].target]
            t = first.batch.sim.buffers if first.batch is not None else first.buffers
            constants = {"SENT": sent, "LINKS": len(group)}
            for k, link in enumerate(group):
                target = pools[link.target]
                constants.update({f"KIND{k}": KIND_INDEX[link.kind], f"LINK{k}": link.index,
                                  f"MEMBER{k}": target.member if target.batch is not None else 0})
            prefix = (f"{source_name}:emitter:events" if len(groups) == 1
                      else f"{source_name}:emitter:events:{key}")
            # a target carrying colour: the records' colours too (systems/emitter/color.py)
            shader, colors, color_constants = particle_color.event_write(
                source, first, [getattr(source.component, f"on_{link.kind}").inherit_color
                                for link in group])
            passes.append(compute(
                f"{prefix}:tally", Phase.SIMULATE, "emitter/event_tally.wgsl", (1, 1, 1),
                {"params": s["params"], "event_marks": s["event_marks"],
                 "event_total": self.scans[source_name].total, "source_counters": s["counters"],
                 "target_counters": t["counters"], "inboxes": t["event_links"]},
                constants=constants,
                does="per link: the events' records and births in the target's inbox and budget",
                folded=(Folded(Phase.CLEAR, Folding.HOST_WRITE,
                               f"{t['event_links'].name}: each target's inbox, reset to the "
                               f"host's budget"),)))
            passes.append(compute(
                f"{prefix}:write", Phase.SIMULATE, shader,
                self.system.gpu.grid(math.ceil(source.component.capacity / BLOCK)),
                {"params": s["params"], "particles": s["particles"],
                 "event_marks": s["event_marks"], "inboxes": t["event_links"],
                 "records": t["event_records"], **colors},
                constants={**constants, **color_constants},
                does="each event's record (the parent's position and velocity) in the target's "
                     "records"))
        return passes

    def ordered(self) -> list[Pool]:
        """The pools, sources before their targets, otherwise in the order they were made."""
        pools = self.system.pools
        if not self.links:
            return list(pools.values())
        return [pools[name] for name in _sources_first(list(pools), self.links)]

    def with_events(self, pool: Pool) -> list[Pass]:
        """The pool's passes with, for a source, its event passes after its update."""
        name = pool.entity.name
        scan = self.scans.get(name)
        if scan is None:
            return pool.passes
        passes = self.scan_passes.get(name)
        if passes is None:   # made once: the same Pass objects let the frame graph reuse its plan
            passes = self.scan_passes[name] = scan.passes()
        extra = passes + self.link_passes.get(name, [])
        at = next(i for i, p in enumerate(pool.passes) if p.name.endswith(":emitter:update")) + 1
        return [*pool.passes[:at], *extra, *pool.passes[at:]]

    # each step -------------------------------------------------------------------------------
    def write_inbox(self, pool: Pool, host_budget: int) -> None:
        """A lone target's inbox for the step (inbox_record), written to its own buffer."""
        record = self.inbox_record(pool, host_budget)
        if record is not None:
            self.system.resources.write(pool.buffers["event_links"], record.tobytes())

    def inbox_record(self, pool: Pool, host_budget: int, records_base: int = 0
                     ) -> np.ndarray | None:
        """A target's inbox for the step, or None when no events spawn into it: its host budget
        (ranked first), where its records start in the buffer its spawn binds, and its links'
        count, quota and velocity share; the tallies fill in the rest on the GPU. The links'
        part is packed again only when what it is packed from changed (the inbox is written
        every step: the tallies of the last step are in the buffer)."""
        name = pool.entity.name
        links = self.into.get(name)
        if not links:
            return None
        pools = self.system.pools
        spawns = [(link, getattr(pools[link.source].component, f"on_{link.kind}"))
                  for link in links]
        key = tuple((link.index, link.quota, spawn.count, spawn.inherit_velocity)
                    for link, spawn in spawns)
        packed = self.inboxes.get(name)
        if packed is None or packed[0] != key:
            record = np.zeros((), INBOX)
            record["link_count"] = len(links)
            for link, spawn in spawns:
                row = record["links"][link.index]
                row["count"], row["quota"], row["inherit"] = spawn.count, link.quota, \
                    spawn.inherit_velocity
            packed = self.inboxes[name] = (key, record)
        record = packed[1]
        record["host_budget"], record["records_base"] = host_budget, records_base
        return record

    # what comes back -------------------------------------------------------------------------
    @staticmethod
    def stats(pool: Pool, counters: np.void) -> dict:
        """The events a source sent in the step read back, and since it was made, by kind."""
        kinds = kinds_sent(pool.component)
        if not kinds:
            return {}
        return {"events": {k: int(counters["events"][KIND_INDEX[k]]) for k in kinds},
                "events_total": {k: int(counters["event_totals"][KIND_INDEX[k]])
                                 for k in kinds}}

    def script_events(self, readback: dict[str, bytes]) -> list[tuple[str, dict]]:
        """("<kind>:<source>", {"count": n}) for the events sent since the last call, from the
        never-cleared totals of the newest readback (so skipped readbacks lose none)."""
        out = []
        pools = self.system.pools
        for name in sorted((n for n in self.sources if n in pools),
                           key=lambda n: pools[n].entity.index):
            data = readback.get(name)
            if data is None:
                continue
            kinds = kinds_sent(pools[name].component)
            totals = np.frombuffer(data, COUNTERS)[0]["event_totals"].astype(np.int64)
            seen = self.seen.get(name, np.zeros_like(totals))
            self.seen[name] = totals
            for kind in kinds:
                k = KIND_INDEX[kind]
                count = int((totals[k] - seen[k]) % (1 << 32))
                if count:
                    out.append((f"{kind}:{name}", {"count": count}))
        return out


def _sources_first(names: list[str], links: list[Link]) -> list[str]:
    """``names`` reordered so that every link's source comes before its target, otherwise
    keeping their order (cycles are refused when a scene loads)."""
    position = {name: i for i, name in enumerate(names)}
    waiting = dict.fromkeys(names, 0)
    following: dict[str, list[str]] = {}
    for link in links:
        waiting[link.target] += 1
        following.setdefault(link.source, []).append(link.target)
    ready = [position[n] for n, w in waiting.items() if w == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        name = names[heapq.heappop(ready)]
        out.append(name)
        for target in following.get(name, []):
            waiting[target] -= 1
            if waiting[target] == 0:
                heapq.heappush(ready, position[target])
    placed = set(out)
    return out + [n for n in names if n not in placed]   # a cycle, should one slip through


def check_links(system: EmitterHost, entity, component) -> None:
    """Refuse, before a pool is made, sub-emitter links that the world with ``component`` on
    ``entity`` cannot run (a cycle, an unordered target, too many links into one emitter): the
    scene loader checks a file; this sees every emitter of the world (spawns, live edits)."""
    if component.allocation == "ordered" and not component.sub_emitters():
        return   # no link from it, and any into it is fine: nothing new to refuse
    rows = [(ref.index, ref.name, c) for ref, c in system.query("emitter")
            if ref.name != entity.name]
    rows.append((entity.index, entity.name, component))
    problem = sub_emitter_problem([(name, c) for _, name, c in sorted(rows, key=lambda r: r[0])])
    if problem is not None:
        name, field, message = problem
        raise SceneError(system.shared.scene_path, message, entity=name, field=field)
