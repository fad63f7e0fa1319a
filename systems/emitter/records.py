"""The per-step records of every emitter, kept in pages.

Every step the host writes each emitter's params (EmitterParams, bound as a uniform and as
``emitters``) and the cleared part of its counters (the budget word, then zero counts). Written
emitter by emitter that is two queue.write_buffer calls each, and each call costs several
microseconds through wgpu-py. So those two records are rows of pages, one page buffer per kind,
and a step packs every emitter's records into the pages' host arrays and writes each page at
once. A batch's page holds one record per member and is its ``params`` and ``counters`` arena
(batches.py); the emitters that run alone share pages of PAGE_RECORDS records:

  ~lone<n>/params      RECORD bytes per record; ``<e>/params`` is record k's view
  ~lone<n>/counters    RECORD bytes per record; ``<e>/counters`` is record k's view

A counters record past its cleared part holds the event totals the GPU keeps (emitter/types.wgsl
Counters): the page's counters write stops short of each event source's totals. Event sources
take a shared page's records from the top down and the others from the bottom up, so a page
with one source (or none) costs one write per kind; each further source costs one more. Pages
never move: a view stays valid for its emitter's life in it, a freed record of a shared page is
reused, and an empty shared page is released (a batch's page goes with the batch, and a
member that left keeps its last record there, which the batch idles). The bytes each emitter's
passes see are the same as with buffers of its own.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core.layout import FieldPacker, record_view
from emberfx.core.resources import BufferView
from emberfx.systems.emitter.event_marks import kinds_sent
from emberfx.systems.emitter.events import COUNTERS_CLEARED
from emberfx.systems.emitter.structs import PARAMS, RECORD

if TYPE_CHECKING:
    from emberfx.core.system import StepInfo
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

PAGE_RECORDS = 16                 # records per page: 4 KiB per kind
STEP_PACK = FieldPacker(PARAMS, ("budget", "frame", "seed", "h", "time", "force_count",
                                 "accelerate_end", "kill_start"))
COLUMNS_FROM = 8
"""emitters of a page from which a step's fields are set a column at a time (numpy's cost per
call outweighs packing each record alone below this)"""
KINDS = ("params", "counters")
_USAGE = {"params": wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.STORAGE,
          "counters": wgpu.BufferUsage.STORAGE}
_serials = itertools.count()


@dataclass
class Page:
    """Records of each kind and their host copies."""
    name: str                                  # the registry owner of its buffers
    buffers: dict[str, BufferView]             # kind -> the whole page buffer
    params: np.ndarray                         # (records,) EmitterParams
    counters: np.ndarray                       # (records, RECORD // 4) u32, cleared parts
    users: list[Pool | None]
    batch: bool = False                        # a batch's: every record is written each step

    def used(self) -> int:
        """Records up to the last one in use."""
        if self.batch:
            return len(self.users)
        return max((k + 1 for k, pool in enumerate(self.users) if pool is not None), default=0)


class RecordPages:
    """The pages of one EmitterHost."""

    def __init__(self, system: EmitterHost):
        self.system = system
        self.pages: list[Page] = []
        self.places: dict[int, tuple[Page, int]] = {}   # id(pool) -> its page and record

    def place(self, pool: Pool, place: tuple[Page, int] | None = None) -> None:
        """Give the pool a record: ``place`` (its batch's page and its index there) or one in
        a shared page (a new page when all are full). Its ``params`` and ``counters`` views are
        published under its own names, and ``param_record`` becomes the page's host row
        (packing a step writes the page's array)."""
        self.free(pool)
        if place is not None:
            page, k = place
        else:
            # event sources from the top of a page down, the others from the bottom up: the
            # sources' totals then lie past every other record's cleared part
            order = range(PAGE_RECORDS - 1, -1, -1) if kinds_sent(pool.component) else \
                range(PAGE_RECORDS)
            found = next(((p, k) for p in self.pages if not p.batch for k in order
                          if p.users[k] is None), None)
            page, k = found if found is not None else (self._new_page(), order[0])
        page.users[k] = pool
        self.places[id(pool)] = (page, k)
        resources, name = self.system.resources, pool.entity.name
        for kind in KINDS:
            pool.buffers[kind] = resources.view(page.buffers[kind].name, kind, k * RECORD,
                                                RECORD, owner=name)
        page.params[k] = pool.param_record
        pool.param_record = record_view(page.params, k)
        page.counters[k] = 0

    def free(self, pool: Pool, spent: list | None = None) -> None:
        """The pool's record is free again (its views are the caller's to forget). A page left
        empty is released, or its buffers go to ``spent`` when work not yet submitted may still
        read them (the caller destroys those after submitting)."""
        place = self.places.pop(id(pool), None)
        if place is None:
            return
        page, k = place
        page.users[k] = None
        record = np.zeros((), PARAMS)
        record[()] = pool.param_record   # the pool keeps its values, no longer the page's row
        pool.param_record = record
        if page.batch or page.used():
            return
        self.pages.remove(page)
        resources = self.system.resources
        if spent is None:
            resources.release(page.name, self.system.key)
            return
        for view in page.buffers.values():
            buffer = resources.take(view.name)
            if buffer is not None:
                spent.append(buffer)

    def holds(self, pool: Pool) -> bool:
        return id(pool) in self.places

    def set_step(self, step: StepInfo, start: float, rows: list[tuple[Pool, int, int, tuple]],
                 page: Page | None = None) -> None:
        """The step's own fields of each of ``rows``' pools, (pool, k, budget, (force_count,
        accelerate_end, kill_start)), set a column at a time per page with the step's frame,
        seed, h and time (``start``), and its counters: the budget, and zero counts (no clear
        pass). ``page``: the batch page all of them are in, each at its k; None: each pool's
        own place."""
        if page is not None:
            groups = [(page, [(k, budget, *fields) for _, k, budget, fields in rows])]
        else:
            by_page: dict[int, tuple[Page, list]] = {}
            for pool, _, budget, fields in rows:
                place, k = self.places[id(pool)]
                by_page.setdefault(id(place), (place, []))[1].append((k, budget, *fields))
            groups = list(by_page.values())
        for place, entries in groups:
            if len(entries) < COLUMNS_FROM:
                for k, budget, count, end, kill in entries:
                    STEP_PACK.pack(record_view(place.params, k), {
                        "budget": budget, "frame": step.frame, "seed": step.seed, "h": step.dt,
                        "time": start, "force_count": count, "accelerate_end": end,
                        "kill_start": kill})
                    place.counters[k, 0] = budget
                continue
            ks, budgets, counts, ends, kills = (np.array(column) for column in zip(*entries))
            params = place.params
            params["budget"][ks], params["force_count"][ks] = budgets, counts
            params["accelerate_end"][ks], params["kill_start"][ks] = ends, kills
            params["frame"][ks], params["seed"][ks] = step.frame, step.seed
            params["h"][ks], params["time"][ks] = step.dt, start
            place.counters[ks, 0] = budgets

    def upload(self) -> None:
        """Write every page's params and the counters' cleared parts, each page with one write
        per kind (and one more per event source before its last used record)."""
        write = self.system.resources.write
        for page in self.pages:
            used = page.used()
            if not used:
                continue
            write(page.buffers["params"], page.params[:used].tobytes())
            data = page.counters[:used].view(np.uint8).reshape(-1)
            start = 0
            # (no batched emitter sends events: a batch's page is written whole)
            for k in range(0 if page.batch else used):
                pool = page.users[k]
                if pool is not None and kinds_sent(pool.component) and k + 1 < used:
                    end = k * RECORD + COUNTERS_CLEARED   # the totals after it stay the GPU's
                    write(page.buffers["counters"], data[start:end].tobytes(), start)
                    start = (k + 1) * RECORD
            end = (used - 1) * RECORD + COUNTERS_CLEARED
            write(page.buffers["counters"], data[start:end].tobytes(), start)

    def upload_pool(self, pool: Pool) -> None:
        """Write one pool's params and the cleared part of its counters alone, as ``upload``
        writes them for every pool (two writes: for a path that steps one pool by itself)."""
        page, k = self.places[id(pool)]
        self.system.resources.write(pool.buffers["params"], page.params[k].tobytes())
        cleared = page.counters[k].view(np.uint8)[:COUNTERS_CLEARED]
        self.system.resources.write(pool.buffers["counters"], cleared.tobytes())

    def batch_page(self, name: str, members: int) -> Page:
        """A page of ``members`` records for batch ``name``: its ``params`` and ``counters``
        arenas, released with the batch's other buffers (``drop``)."""
        return self._new_page(name, members, f"the {members} batched emitters'", batch=True)

    def drop(self, page: Page) -> None:
        """Forget a batch's page (its buffers are released with the batch's)."""
        for pool in page.users:
            if pool is not None:
                self.places.pop(id(pool), None)
        self.pages.remove(page)

    def _new_page(self, name: str | None = None, records: int = PAGE_RECORDS,
                  what: str = "the lone emitters'", batch: bool = False) -> Page:
        name = name or f"~lone{next(_serials)}"
        system = self.system
        buffers = {kind: system.resources.buffer(
            name, kind, records * RECORD,
            _USAGE[kind] | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST,
            family=system.key, what=f"{what} {kind} records")
            for kind in KINDS}
        page = Page(name, buffers, np.zeros(records, PARAMS),
                    np.zeros((records, RECORD // 4), np.uint32), [None] * records, batch)
        self.pages.append(page)
        return page
