"""The wgpu calls of a frame graph's unchanging work, worked out once and replayed every frame.

A frame's passes are the same objects frame after frame. Deciding for each pass, each frame,
which pipeline and bind groups still need setting, whether its workgroup counts are fixed, and
building the argument tuples cost more Python time than the wgpu calls themselves (about 1 us
each through wgpu-py on a small CPU). So a run of consecutive compute passes is compiled once
into a ComputeRun: its commands in order, with fixed arguments where they are fixed and a small
function where something is picked when the frame is encoded (a bind group given as a function
for ping-pong state, counts given as a function, repeats). A real wgpu-native pass receives
them through the C functions (native_calls.py). The pipeline and bind groups already in effect
are left out, as frame_graph's ``_Encoding`` does while it records; a group picked at encode
time counts as unknown afterwards, so the next pass sets its own. Buffer clears and copies
compile into calls taking the command encoder.

The operations are read through their fields only (``Dispatch``, ``ClearBuffer`` and
``CopyBuffer`` of passes.py), so this module imports nothing of the graph.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from functools import partial
from operator import methodcaller
from typing import Any

from emberfx.core import native_calls

_UNKNOWN = object()   # a bind group picked when the frame is encoded
_UNSET = object()     # no pipeline set yet in this compute pass


def compute_calls(ops: Sequence) -> ComputeRun:
    """The calls that record ``ops`` (Dispatch operations, in order) into one compute pass."""
    steps: list[tuple] = []   # ("fixed", kind, args) or ("picked", function, args)
    pipeline: object = _UNSET
    bound: dict[int, object] = {}
    for op in ops:
        counts = op.groups
        if op.indirect is None and not callable(counts) and not all(counts):
            continue   # fixed counts with a zero: the pass records nothing
        if op.pipeline is not pipeline:
            steps.append(("fixed", "set_pipeline", (op.pipeline,)))
            pipeline = op.pipeline
            bound = {}   # bind groups of auto layouts belong to one pipeline
        picked = []
        for index, group in enumerate(op.bind_groups):
            if callable(group):
                picked.append((index, group))
            elif bound.get(index) is not group:
                steps.append(("fixed", "set_bind_group", (index, group)))
                bound[index] = group
        if callable(op.repeat) or op.repeat != 1:
            steps.append(("picked", _repeated, (tuple(picked), op.repeat, counts, op.indirect)))
        else:
            steps.extend(("picked", _set_picked_group, (index, pick)) for index, pick in picked)
            if op.indirect is not None:
                steps.append(("fixed", "dispatch_indirect", tuple(op.indirect)))
            elif callable(counts):
                steps.append(("picked", _dispatch_counted, (counts,)))
            else:
                steps.append(("fixed", "dispatch", _three(counts)))
        for index, _ in picked:
            bound[index] = _UNKNOWN
    return ComputeRun(steps)


class ComputeRun:
    """A compute run's commands, compiled once and replayed into each frame's compute pass:
    ``run(compute)``. Into a wgpu-native pass they go through the C functions
    (native_calls.py), with the fixed ones' handles looked up once; into anything else (native
    calls switched off, a test's recorder) through the pass's methods."""

    def __init__(self, steps: list[tuple]):
        self.steps = steps
        # a replay's (function, arguments) pairs, each called as function(target, *arguments)
        self._wrapped = [self._compiled(step, native_calls.Wrapped) for step in steps]
        self._native: list[tuple[Callable, tuple]] | None = None

    @staticmethod
    def _compiled(step: tuple, api) -> tuple[Callable, tuple]:
        form, what, args = step
        if form == "fixed":
            if api is native_calls.Native:
                return native_calls.resolved(what, args)
            return getattr(api, what), args
        return partial(what, api), args

    def __call__(self, compute) -> None:
        handle = native_calls.native_target(compute)
        if handle is None:
            target, steps = compute, self._wrapped
        else:
            if self._native is None:   # the objects stay alive: self.steps holds them
                self._native = [self._compiled(s, native_calls.Native) for s in self.steps]
            target, steps = handle, self._native
        for function, args in steps:
            function(target, *args)


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


def _three(counts) -> tuple[int, int, int]:
    """Workgroup counts as three Python ints (a system may compute them with numpy; one given
    fewer than three means 1 for the rest, as dispatch_workgroups takes them)."""
    x, y, z = (*counts, 1, 1)[:3]
    return int(x), int(y), int(z)


def _set_picked_group(api, target, index: int, pick: Callable) -> None:
    api.set_bind_group(target, index, pick())


def _dispatch_counted(api, target, counts: Callable) -> None:
    groups = counts()
    if all(groups):
        api.dispatch(target, *_three(groups))


def _repeated(api, target, picked: tuple, repeat, counts, indirect) -> None:
    """A dispatch issued ``repeat`` times in a row; a group given as a function is called with
    the repeat index and set only when it differs from the previous repeat's."""
    current: dict[int, object] = {}
    for k in range(repeat() if callable(repeat) else repeat):
        for index, pick in picked:
            group = pick(k)
            if current.get(index) is not group:
                api.set_bind_group(target, index, group)
                current[index] = group
        if indirect is not None:
            api.dispatch_indirect(target, *indirect)
        else:
            groups = counts() if callable(counts) else counts
            if all(groups):
                api.dispatch(target, *_three(groups))
