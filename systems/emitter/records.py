"""The per-step records of the emitters that run alone, kept in shared pages.

Every step the host writes each lone emitter's params (EmitterParams, bound as a uniform and as
``emitters``) and the cleared part of its counters (the budget word, then zero counts). Written
emitter by emitter that is two queue.write_buffer calls each, and each call costs several
microseconds through wgpu-py. So those two records are views into pages of PAGE_RECORDS records
of the system's, one page buffer per kind, and a step packs every lone pool's records into the
page's host arrays and writes each page at once:

  ~lone<n>/params      RECORD bytes per record; ``<e>/params`` is record k's view
  ~lone<n>/counters    RECORD bytes per record; ``<e>/counters`` is record k's view

A counters record past its cleared part holds the event totals the GPU keeps (emitter/types.wgsl
Counters): the page's counters write stops short of each event source's totals. Event sources
take a page's records from the top down and the others from the bottom up, so a page with one
source (or none) costs one write per kind; each further source costs one more. Pages never
move: a view stays valid for its pool's life in it, a freed record is reused, and an empty page
is released. The bytes each emitter's passes see are the same as with buffers of its own.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import wgpu

from emberfx.core.layout import record_view
from emberfx.core.resources import BufferView
from emberfx.systems.emitter.events import COUNTERS_CLEARED, kinds_sent
from emberfx.systems.emitter.params import PARAMS, RECORD

if TYPE_CHECKING:
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

PAGE_RECORDS = 16                 # records per page: 4 KiB per kind
KINDS = ("params", "counters")
_USAGE = {"params": wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.STORAGE,
          "counters": wgpu.BufferUsage.STORAGE}
_serials = itertools.count()


@dataclass
class Page:
    """PAGE_RECORDS records of each kind and their host copies."""
    name: str                                  # the registry owner of its buffers
    buffers: dict[str, BufferView]             # kind -> the whole page buffer
    params: np.ndarray                         # (PAGE_RECORDS,) EmitterParams
    counters: np.ndarray                       # (PAGE_RECORDS, RECORD // 4) u32, cleared parts
    users: list[Pool | None] = field(default_factory=lambda: [None] * PAGE_RECORDS)

    def used(self) -> int:
        """Records up to the last one in use."""
        return max((k + 1 for k, pool in enumerate(self.users) if pool is not None), default=0)


class LoneRecords:
    """The pages of one EmitterHost."""

    def __init__(self, system: EmitterHost):
        self.system = system
        self.pages: list[Page] = []
        self.places: dict[int, tuple[Page, int]] = {}   # id(pool) -> its page and record

    def place(self, pool: Pool) -> None:
        """Give the pool a record in a page (a new page when all are full): its ``params`` and
        ``counters`` views, published under its own names, and ``param_record`` becomes the
        page's host row (packing a step writes the page's array)."""
        self.free(pool)
        # event sources from the top of a page down, the others from the bottom up: the
        # sources' totals then lie past every other record's cleared part
        order = range(PAGE_RECORDS - 1, -1, -1) if kinds_sent(pool.component) else \
            range(PAGE_RECORDS)
        page, k = next(((p, k) for p in self.pages for k in order if p.users[k] is None),
                       (None, 0))
        if page is None:
            page, k = self._new_page(), order[0]
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
        if page.used():
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

    def set_cleared(self, pool: Pool, budget: int) -> None:
        """The pool's counters for the step: its budget, and zero counts."""
        page, k = self.places[id(pool)]
        page.counters[k, 0] = budget

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
            for k in range(used):
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

    def _new_page(self) -> Page:
        name = f"~lone{next(_serials)}"
        system = self.system
        buffers = {kind: system.resources.buffer(
            name, kind, PAGE_RECORDS * RECORD,
            _USAGE[kind] | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST,
            family=system.key, what=f"the lone emitters' {kind} records")
            for kind in KINDS}
        page = Page(name, buffers, np.zeros(PAGE_RECORDS, PARAMS),
                    np.zeros((PAGE_RECORDS, RECORD // 4), np.uint32))
        self.pages.append(page)
        return page
