"""The wgpu calls of a frame graph's unchanging work, worked out once and replayed every frame.

A frame's passes are the same objects frame after frame. Deciding for each pass, each frame,
which pipeline and bind groups still need setting, whether its workgroup counts are fixed, and
building the argument tuples cost more Python time than the wgpu calls themselves (about 1 us
each through wgpu-py on a small CPU). So a run of consecutive compute passes is compiled once into
a list of calls, each taking the open GPUComputePassEncoder: ``operator.methodcaller`` where the
arguments are fixed, a small function where something is picked when the frame is encoded (a
bind group given as a function for ping-pong state, counts given as a function, repeats). The
pipeline and bind groups already in effect are left out, as frame_graph's ``_Encoding`` does
while it records; a group picked at encode time counts as unknown afterwards, so the next pass
sets its own. Buffer clears and copies compile the same way, into calls taking the command
encoder.

The operations are read through their fields only (``Dispatch``, ``ClearBuffer`` and
``CopyBuffer`` of passes.py), so this module imports nothing of the graph.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from functools import partial
from operator import methodcaller
from typing import Any

_UNKNOWN = object()   # a bind group picked when the frame is encoded
_UNSET = object()     # no pipeline set yet in this compute pass


def compute_calls(ops: Sequence) -> list[Callable]:
    """The calls that record ``ops`` (Dispatch operations, in order) into one compute pass."""
    calls: list[Callable] = []
    pipeline: object = _UNSET
    bound: dict[int, object] = {}
    for op in ops:
        counts = op.groups
        if op.indirect is None and not callable(counts) and not all(counts):
            continue   # fixed counts with a zero: the pass records nothing
        if op.pipeline is not pipeline:
            calls.append(methodcaller("set_pipeline", op.pipeline))
            pipeline = op.pipeline
            bound = {}   # bind groups of auto layouts belong to one pipeline
        picked = []
        for index, group in enumerate(op.bind_groups):
            if callable(group):
                picked.append((index, group))
            elif bound.get(index) is not group:
                calls.append(methodcaller("set_bind_group", index, group))
                bound[index] = group
        if callable(op.repeat) or op.repeat != 1:
            calls.append(partial(_repeated, tuple(picked), op.repeat, counts, op.indirect))
        else:
            calls.extend(partial(_set_picked_group, index, pick) for index, pick in picked)
            calls.append(_dispatch_call(counts, op.indirect))
        for index, _ in picked:
            bound[index] = _UNKNOWN
    return calls


def grouped_by_pipeline(run: list, touched: Callable[[Any], tuple[frozenset, frozenset]]
                        ) -> list:
    """Consecutive dispatches reordered so that those of one pipeline follow each other where
    what they read and write allows: each pipeline set is a wgpu call, and the bind groups of
    auto layouts are set again after it (the emitters' passes share pipelines). A dispatch
    keeps its place after every earlier one that writes what it touches or touches what it
    writes, so the results are those of the graph's order; among those ready, the earliest one
    of the pipeline in effect goes first, otherwise the earliest. ``run``: passes with a
    Dispatch ``op``; ``touched(pass)``: what it reads and what it writes."""
    pipelines = [id(getattr(p.op, "pipeline", None)) for p in run]   # (all are Dispatches)
    after: list[list[int]] = [[] for _ in run]   # i -> the dispatches that wait for i
    waiting = [0] * len(run)
    writer: dict[str, int] = {}                  # resource -> its last writer so far
    readers: dict[str, list[int]] = {}           # resource -> who read it since that write
    for j, p in enumerate(run):
        reads, writes = touched(p)
        before = {writer[r] for r in reads | writes if r in writer}
        before.update(i for w in writes for i in readers.get(w, ()))
        before.discard(j)
        for i in before:
            after[i].append(j)
        waiting[j] = len(before)
        for r in reads - writes:
            readers.setdefault(r, []).append(j)
        for w in writes:
            writer[w], readers[w] = j, []
    ready = [j for j, n in enumerate(waiting) if n == 0]
    of_pipeline: dict[int, list[int]] = {}
    for j in ready:
        heapq.heappush(of_pipeline.setdefault(pipelines[j], []), j)
    heapq.heapify(ready)
    done = [False] * len(run)
    out: list = []
    pipeline = -1
    while len(out) < len(run):
        same = of_pipeline.get(pipeline, [])
        while same and done[same[0]]:
            heapq.heappop(same)
        pool = same if same else ready
        while done[pool[0]]:
            heapq.heappop(pool)
        j = heapq.heappop(pool)
        done[j] = True
        out.append(run[j])
        pipeline = pipelines[j]
        for k in after[j]:
            waiting[k] -= 1
            if waiting[k] == 0:
                heapq.heappush(ready, k)
                heapq.heappush(of_pipeline.setdefault(pipelines[k], []), k)
    return out


def encoder_call(op) -> Callable:
    """The call that records a ClearBuffer (it has ``buffer``) or CopyBuffer operation."""
    if hasattr(op, "buffer"):
        return methodcaller("clear_buffer", op.buffer, op.offset, op.size)
    return methodcaller("copy_buffer_to_buffer", op.source, op.source_offset, op.destination,
                        op.destination_offset, op.size)


def _dispatch_call(counts, indirect) -> Callable:
    if indirect is not None:
        return methodcaller("dispatch_workgroups_indirect", *indirect)
    if callable(counts):
        return partial(_dispatch_counted, counts)
    return methodcaller("dispatch_workgroups", *counts)


def _set_picked_group(index: int, pick: Callable, compute) -> None:
    compute.set_bind_group(index, pick())


def _dispatch_counted(counts: Callable, compute) -> None:
    groups = counts()
    if all(groups):
        compute.dispatch_workgroups(*groups)


def _repeated(picked: tuple, repeat, counts, indirect, compute) -> None:
    """A dispatch issued ``repeat`` times in a row; a group given as a function is called with
    the repeat index and set only when it differs from the previous repeat's."""
    current: dict[int, object] = {}
    for k in range(repeat() if callable(repeat) else repeat):
        for index, pick in picked:
            group = pick(k)
            if current.get(index) is not group:
                compute.set_bind_group(index, group)
                current[index] = group
        if indirect is not None:
            compute.dispatch_workgroups_indirect(*indirect)
        else:
            groups = counts() if callable(counts) else counts
            if all(groups):
                compute.dispatch_workgroups(*groups)
