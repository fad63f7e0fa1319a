"""The frame graph's order and its check: passes sorted by phase, then by their read-after-write
edges, stable by declaration order; every read has an earlier writer or an upload.

The passes are read through their fields only (``name``, ``phase``, ``reads``, ``writes``,
``order`` of passes.Pass), so this module imports nothing of the graph.
"""

from __future__ import annotations

import dataclasses
import heapq
from bisect import bisect_left
from collections import defaultdict

from emberfx.core.errors import FrameGraphError


def sorted_passes(passes: list) -> list:
    """Phase first; inside a phase, a pass that only reads a resource runs after every pass of
    that phase that writes it, and one that modifies it after the writers declared before it;
    otherwise declaration order (Kahn's algorithm, smallest index first).
    When two passes each read what the other writes (a read-before-write hazard, e.g. computing
    sort keys from a list that the sort then rewrites), the one declared first runs first.
    The writers of each resource are indexed once, so the cost grows with the number of edges,
    not with passes squared: a world of thousands of entities re-sorts in milliseconds."""
    ordered: list = []
    groups: dict = defaultdict(list)
    for p in passes:
        groups[p.phase].append(p)
    for phase in sorted(groups):
        group = groups[phase]
        writers: dict[str, list[int]] = defaultdict(list)   # ascending pass indices
        for j, writer in enumerate(group):
            for res in writer.writes:
                writers[res].append(j)
        after: list[set[int]] = []
        for i, reader in enumerate(group):
            deps: set[int] = set()
            for res in reader.reads:
                found = writers.get(res)
                if not found:
                    continue
                if res in reader.writes:
                    # a read-modify-write pass follows only the writers declared before it, so
                    # that chains of them keep declaration order
                    deps.update(found[:bisect_left(found, i)])
                else:   # a pure reader follows every writer
                    deps.update(found)
            deps.discard(i)
            after.append(deps)
        for i, deps in enumerate(after):   # mutual: declaration order decides
            for j in [j for j in deps if j > i and i in after[j]]:
                deps.discard(j)
        pending = [len(deps) for deps in after]
        users: list[list[int]] = [[] for _ in group]
        for k, deps in enumerate(after):
            for i in deps:
                users[i].append(k)
        ready = [(group[i].order, i) for i, n in enumerate(pending) if n == 0]
        heapq.heapify(ready)
        while ready:
            _, i = heapq.heappop(ready)
            ordered.append(group[i])
            for k in users[i]:
                pending[k] -= 1
                if pending[k] == 0:
                    heapq.heappush(ready, (group[k].order, k))
        stuck = [group[i].name for i, n in enumerate(pending) if n > 0]
        if stuck:
            raise FrameGraphError(f"passes in phase {phase.name} wait on each other in a cycle: "
                                  + ", ".join(stuck))
    return ordered


def in_declared_order(passes: list) -> list:
    """``passes`` with each read of a resource that one of them writes declared as a
    modification too, so that they run in the order given: for a chain that writes and reads
    the same resources more than once a frame (substeps, solver iterations, a snapshot taken
    before an update and again after it). sorted_passes runs a pure reader after every writer
    of its phase, but a modifying pass after the writers declared before it."""
    written = {res for p in passes for res in p.writes}
    return [dataclasses.replace(p, writes=tuple(dict.fromkeys(
        (*p.writes, *(res for res in p.reads if res in written))))) for p in passes]


def check_reads(order: list, uploaded: set[str]) -> None:
    written = set(uploaded)
    for p in order:
        for res in p.reads:
            if res not in written:
                raise FrameGraphError(
                    f"pass '{p.name}' reads '{res}' but no earlier pass writes it and it is not "
                    f"uploaded; declare a writer in an earlier phase or mark it uploaded")
        written.update(p.writes)


def compute_before_draws(order: list, is_compute, is_draw, touched) -> list:
    """Within each phase, a compute pass that follows a run of draws sharing no resource with it
    moves before that run, keeping the order among the passes moved and among the draws: the
    draws around it then share one render pass, and the compute work the compute pass before
    them (each GPU pass begun and ended costs tens of microseconds of Python time on some
    hosts, and a render pass loads and stores its target). ``touched(p)`` gives a pass's
    (reads, writes) as sets, a draw's including what it writes without declaring (its target's
    depth); nothing moves past a pass it reads from, writes for or writes with."""
    out: list = []
    for p in order:
        start = len(out)
        if is_compute(p):
            while start > 0 and out[start - 1].phase == p.phase and is_draw(out[start - 1]):
                start -= 1
        if start < len(out):
            reads, writes = touched(p)
            if all(not (writes & (r | w) or reads & w)
                   for r, w in (touched(d) for d in out[start:])):
                out.insert(start, p)
                continue
        out.append(p)
    return out
