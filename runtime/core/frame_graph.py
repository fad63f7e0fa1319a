"""The frame graph: Pass descriptions in, one ordered and validated encoding out.

Systems never encode by hand. They describe passes (name, phase, what they read and write, and
one operation); the graph orders them by phase, then by read-after-write edges (stable by the order
the systems declared them), checks that every read has an earlier writer or an upload, and encodes
consecutive compute work into a single GPUComputePass (WebGPU orders and synchronises dispatches
inside one pass, and each begin/end costs Python time) and consecutive draws to one target into a
single GPURenderPass; a compute pass among draws that it shares no resource with runs before
them (frame_order.py), so they stay one render pass. Sorting and checking happen once per
distinct pass list, and the wgpu calls of the compute runs, clears and copies are compiled once
per graph and replayed each frame (frame_plan.py). With EMBERFX_DEBUG_GROUPS=1 (and always
while profiling) every operation runs inside a debug group named like the pass, so GPU captures
read ``fountain:emitter:update``; by default they are left out, as engines' release builds do,
because they cost a third of the Python time of encoding a frame.

With a profiler that stamps on the GPU (profiler.PassProfiler), every compute and render pass gets
a GPU pass of its own instead, because WebGPU only stamps at pass boundaries; without one the
encoding is the shared one above.
"""

from __future__ import annotations

import operator
import os
from collections import Counter
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING

from emberfx.core import frame_order, frame_plan, native_calls
from emberfx.core.bundles import draw_key
from emberfx.core.errors import FrameGraphError
from emberfx.core.passes import (
    DRAWING_PHASES,
    GEOMETRY_TARGET,
    SCENE_TARGET,
    SIMULATION_PHASES,
    ClearBuffer,
    CopyBuffer,
    CopyTexture,
    Dispatch,
    Draw,
    Folded,
    Folding,
    Operation,
    Pass,
    PassTable,
    Phase,
    RenderQueue,
    RenderTarget,
    pass_table,
    target_writes,
)

if TYPE_CHECKING:
    import wgpu

# the pass descriptions (passes.py) are imported from here by systems and runtime alike
__all__ = ["DRAWING_PHASES", "GEOMETRY_TARGET", "SCENE_TARGET", "SIMULATION_PHASES",
           "ClearBuffer", "CopyBuffer", "CopyTexture", "Dispatch", "Draw", "Folded", "Folding",
           "FrameGraph", "FrameGraphError", "Operation", "Pass", "PassTable", "Phase",
           "RenderQueue", "RenderTarget", "pass_table", "target_writes"]

DEBUG_GROUPS = os.environ.get("EMBERFX_DEBUG_GROUPS") == "1"   # name every pass in GPU captures


@dataclass
class FrameGraph:
    passes: list[Pass]
    order: list[Pass] = field(init=False)

    def __init__(self, passes: list[Pass], uploaded: set[str] | frozenset[str] = frozenset(),
                 previous: FrameGraph | None = None):
        """``uploaded``: resources with contents before the frame starts (created with data,
        zero-initialised state, or written by queue.write_buffer). ``previous``: the graph this
        one replaces; when the passes have the same names, phases, reads, writes and order hints
        in the same order, its sorted order is reused (scripts edit live fields every frame, and
        sorting and checking cost more than encoding a frame); when they are the very same Pass
        objects, its compiled encodings are reused too and nothing is compared field by field."""
        self.passes = list(passes)
        uploaded = frozenset(uploaded)
        if (previous is not None and previous.shape[1] == uploaded
                and len(previous.passes) == len(self.passes)
                and all(map(operator.is_, previous.passes, self.passes))):
            self.shape: tuple = previous.shape
            self._permutation: list[int] = previous._permutation
            self.order = previous.order
            # the passes of each phase set encode() was asked for, in order: a frame encodes
            # the same two sets (simulation, drawing) every time
            self._of_phases: dict[frozenset | None, list[Pass]] = previous._of_phases
            # by phase set: the encoding compiled once (frame_plan.py), replayed every frame
            self._plans: dict[frozenset | None, list[tuple]] = previous._plans
            self._names_of_phases: dict[frozenset | None, frozenset[str]] = \
                previous._names_of_phases
            self._drawn_of_phases: dict[frozenset | None, frozenset[str]] = \
                previous._drawn_of_phases
            return
        self.shape = (tuple((p.name, p.phase, tuple(p.reads), tuple(p.writes), p.order,
                             type(p.op), getattr(p.op, "target", None))
                            for p in self.passes), uploaded)
        self._of_phases = {}
        self._plans = {}
        self._names_of_phases = {}
        self._drawn_of_phases = {}
        if previous is not None and previous.shape == self.shape:
            self._permutation = previous._permutation
            self.order = [self.passes[i] for i in self._permutation]
            return
        duplicates = sorted(n for n, k in Counter(p.name for p in self.passes).items() if k > 1)
        if duplicates:
            raise FrameGraphError(f"pass names must be unique; repeated: {', '.join(duplicates)}")
        self.order = frame_order.compute_before_draws(
            frame_order.sorted_passes(self.passes), is_compute=lambda p: isinstance(p.op, Dispatch),
            is_draw=lambda p: isinstance(p.op, Draw), touched=_touched)
        position = {id(p): i for i, p in enumerate(self.passes)}
        self._permutation = [position[id(p)] for p in self.order]
        frame_order.check_reads(self.order, set(uploaded))

    def names(self) -> list[str]:
        return [p.name for p in self.order]

    def encode(self, encoder, targets: dict[str, RenderTarget], phases=None,
               clear_targets: tuple[str, ...] = (), profiler=None, bundles=None,
               compute=None, keep_compute: bool = False):
        """Record the passes (of ``phases``, default all) into ``encoder``. ``clear_targets`` are
        cleared when the RENDER phase starts even if nothing draws into them (the background).
        ``profiler`` (a PassProfiler) times each compute and render pass; whoever submits the
        encoder then calls ``profiler.submitted()``. ``bundles`` (a bundles.BundleCache) replays
        the consecutive draws into a target whose formats are known from one render bundle.
        Without a profiler or debug groups, the compute runs, clears and copies replay the calls
        compiled for them once (frame_plan.py) instead of being worked out pass by pass.
        ``compute``: a compute pass of ``encoder`` left open by the encode before (a held step,
        submission.py); the first compute run records into it, and anything else ends it first.
        ``keep_compute``: when the last work recorded is a compute run (and nothing profiles or
        labels it), leave its pass open and return it, for the next encode; otherwise None."""
        encoding = _Encoding(encoder, targets, profiler, bundles)
        # a target drawn into clears itself with its first draw
        drawn = self.drawn_targets(phases)
        pending_clears = [name for name in clear_targets if name not in drawn]
        if profiler is None and not DEBUG_GROUPS:
            for kind, item in self._plan(phases):
                if kind is _COMPUTE_RUN:
                    encoding._end_render()
                    if compute is None:
                        compute = encoder.begin_compute_pass(label="emberfx:compute")
                    item(compute)   # a frame_plan.ComputeRun
                    continue   # ended by the next work that is not compute, or kept
                if compute is not None:
                    compute.end()
                    compute = None
                if kind is _ENCODER_CALLS:
                    encoding._end_render()
                    for call in item:
                        call(encoder)
                else:
                    pending_clears = _open_pending_targets(encoding, pending_clears, item)
                    encoding.add(item)
        else:
            if compute is not None:
                compute.end()
                compute = None
            for p in self._passes_of(phases):
                pending_clears = _open_pending_targets(encoding, pending_clears, p)
                encoding.add(p)
        if compute is not None and (pending_clears or not keep_compute):
            compute.end()
            compute = None
        for name in pending_clears:
            encoding.begin_target(name)
        encoding.close()
        if profiler is not None:
            profiler.encoded(encoder)
        return compute

    def _plan(self, phases) -> list[tuple]:
        """The passes of ``phases`` as (kind, item): a run of consecutive dispatches as the
        calls recording them into one compute pass, a run of buffer clears and copies as the
        calls recording them, and any other pass (draws, texture copies) as itself."""
        key = None if phases is None else frozenset(phases)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        plan = []
        for kind, run in groupby(self._passes_of(phases), key=_plan_kind):
            if kind is _COMPUTE_RUN:
                ordered = [p for _, same in groupby(run, key=lambda p: p.phase)
                           for p in frame_plan.grouped_by_pipeline(list(same), _touched)]
                plan.append((kind, frame_plan.compute_calls([p.op for p in ordered])))
            elif kind is _ENCODER_CALLS:
                plan.append((kind, [frame_plan.encoder_call(p.op) for p in run]))
            else:
                plan.extend((kind, p) for p in run)
        self._plans[key] = plan
        return plan

    def _passes_of(self, phases) -> list[Pass]:
        key = None if phases is None else frozenset(phases)
        found = self._of_phases.get(key)
        if found is None:
            found = self._of_phases[key] = [p for p in self.order
                                            if key is None or p.phase in key]
        return found

    def resource_names(self, phases=None) -> frozenset[str]:
        """The resources the passes of ``phases`` read or write (the same object while the
        passes are the same ones)."""
        key = None if phases is None else frozenset(phases)
        found = self._names_of_phases.get(key)
        if found is None:
            found = self._names_of_phases[key] = frozenset(
                name for p in self._passes_of(phases) for name in (*p.reads, *p.writes))
        return found

    def drawn_targets(self, phases=None) -> frozenset[str]:
        """The render targets the passes of ``phases`` draw into."""
        key = None if phases is None else frozenset(phases)
        found = self._drawn_of_phases.get(key)
        if found is None:
            found = self._drawn_of_phases[key] = frozenset(
                p.op.target for p in self._passes_of(phases) if isinstance(p.op, Draw))
        return found

    def compute_pass_count(self, phases=None, profiler=None) -> int:
        """How many GPUComputePasses encode() begins (consecutive compute work shares one,
        unless ``profiler`` splits them to stamp each)."""
        split = _splits_passes(profiler)
        count, previous = 0, None
        for p in self.order:
            if phases is not None and p.phase not in phases:
                continue
            if p.kind == "compute" and (previous != "compute" or split):
                count += 1
            previous = p.kind
        return count


def _splits_passes(profiler) -> bool:
    return profiler is not None and profiler.uses_timestamps


def _touched(p: Pass) -> tuple[frozenset[str], frozenset[str]]:
    """What a pass reads and writes; a draw into target T also writes T's depth, which the
    renderer registers as "T/depth" next to "T/color" and which draws do not all declare."""
    writes = frozenset(p.writes)
    if isinstance(p.op, Draw):
        writes |= {f"{p.op.target}/color", f"{p.op.target}/depth", *target_writes(p.op.target)}
    return frozenset(p.reads), writes


_COMPUTE_RUN, _ENCODER_CALLS, _PASS = "compute run", "encoder calls", "pass"


def _plan_kind(p: Pass) -> str:
    if isinstance(p.op, Dispatch):
        return _COMPUTE_RUN
    if isinstance(p.op, (ClearBuffer, CopyBuffer)):
        return _ENCODER_CALLS
    return _PASS


def _open_pending_targets(encoding: _Encoding, pending: list[str], p: Pass) -> list[str]:
    """Before the first draw of the RENDER phase or later, or the first other pass there that
    reads a target's colour (a copy of the scene image): open the targets that must be cleared
    though nothing draws into them (``pending``), before anything may read them; what is still
    pending after ``p``."""
    is_draw = isinstance(p.op, Draw)
    if pending and p.phase >= Phase.RENDER and (
            is_draw or any(f"{name}/color" in p.reads for name in pending)):
        for name in pending:
            # the draw's own target is cleared by the draw's pass (the first into it);
            # opening it here would cost a separate, empty pass when passes are split
            if not (isinstance(p.op, Draw) and name == p.op.target):
                encoding.begin_target(name)
        return []
    return pending


def _repeat(op: Dispatch) -> int:
    return op.repeat() if callable(op.repeat) else op.repeat


class _Encoding:
    """Tracks the open compute or render pass while recording, so consecutive work shares it
    (or, with a stamping profiler, gives each pass its own)."""

    def __init__(self, encoder, targets: dict[str, RenderTarget], profiler=None, bundles=None):
        self.encoder = encoder
        self.targets = targets
        self.profiler = profiler
        self.split = _splits_passes(profiler)
        self.bundles = None if self.split else bundles
        self.pending_draws: list[tuple] = []   # draw_keys waiting for the target's bundle
        self.compute: wgpu.GPUComputePassEncoder | None = None
        self.render: wgpu.GPURenderPassEncoder | None = None
        self.render_target: str | None = None
        self.render_read_only = False   # whether the open render pass's depth is read-only
        self.cleared: set[str] = set()
        self.bound: dict = {}   # what the open pass encoder has set: "pipeline", group index
        # Debug groups cost two wgpu calls per pass, a third of encoding a frame; like engines'
        # release builds, emit them for GPU captures (EMBERFX_DEBUG_GROUPS=1) and while profiling.
        self.labels = DEBUG_GROUPS or profiler is not None

    def _bind(self, pass_encoder, name: str, op) -> None:
        """Open the pass's debug group and set its pipeline and bind groups. A bind group may be
        given as a function returning one, picked when the frame is encoded (ping-pong state).
        Python pays per wgpu call, so what the open pass already has set is not set again (cloth
        runs one pipeline for all its substeps); a new pipeline forgets the groups, whose auto
        layouts belong to one pipeline."""
        if self.labels:
            pass_encoder.push_debug_group(name)
        bound = self.bound
        if bound.get("pipeline") is not op.pipeline:
            pass_encoder.set_pipeline(op.pipeline)
            bound.clear()
            bound["pipeline"] = op.pipeline
        self._set_groups(pass_encoder, op, 0)

    def _set_groups(self, pass_encoder, op, k: int) -> None:
        bound = self.bound
        for index, group in enumerate(op.bind_groups):
            if callable(group):
                repeated = isinstance(op, Dispatch) and (callable(op.repeat) or op.repeat != 1)
                group = group(k) if repeated else group()
            if bound.get(index) is not group:
                pass_encoder.set_bind_group(index, group)
                bound[index] = group

    def add(self, p: Pass) -> None:
        if self.profiler is not None and isinstance(p.op, (Dispatch, Draw)):
            with self.profiler.measure(p.name) as timestamp_writes:
                self._record(p, timestamp_writes)
        else:
            self._record(p, None)

    def _record(self, p: Pass, timestamp_writes: dict | None) -> None:
        op = p.op
        if isinstance(op, Dispatch):
            self._end_render()
            if self.split:
                self._end_compute()
                self.compute = self.encoder.begin_compute_pass(label=p.name,
                                                               timestamp_writes=timestamp_writes)
                self.bound = {}
            elif self.compute is None:
                self.compute = self.encoder.begin_compute_pass(label="emberfx:compute")
                self.bound = {}
            self._bind(self.compute, p.name, op)
            for k in range(_repeat(op)):
                if k:
                    self._set_groups(self.compute, op, k)
                if op.indirect is not None:
                    self.compute.dispatch_workgroups_indirect(*op.indirect)
                else:
                    groups = op.groups() if callable(op.groups) else op.groups
                    if all(groups):
                        self.compute.dispatch_workgroups(*groups)
            if self.labels:
                self.compute.pop_debug_group()
            if self.split:
                self._end_compute()
        elif isinstance(op, Draw):
            self._end_compute()
            if (self.split or self.render is None or self.render_target != op.target
                    or self.render_read_only != op.depth_read_only):
                self._end_render()
                if op.depth_read_only and op.target not in self.cleared:
                    self.begin_target(op.target)   # a read-only pass cannot clear the depth
                    self._end_render()
                self._begin_render(op.target, p.name if self.split else None, timestamp_writes,
                                   depth_read_only=op.depth_read_only)
            assert self.render is not None   # open: reused, or just begun
            if self.bundles is not None and self.targets[op.target].bundled:
                self.pending_draws.append(draw_key(p.name, op))
                return
            self._bind(self.render, p.name, op)
            if op.indirect is not None:
                draw = self.render.draw_indirect
                if op.index is not None:   # indexed and indirect: the counts come from the GPU
                    self.render.set_index_buffer(op.index[0], op.index[1])
                    draw = self.render.draw_indexed_indirect
                draw(*op.indirect)
                for more in op.more_indirect:
                    draw(*more)
            elif op.index is not None:
                buffer, index_format, count = op.index
                self.render.set_index_buffer(buffer, index_format)
                self.render.draw_indexed(count, op.instances)
            else:
                self.render.draw(op.vertices, op.instances)
            if self.labels:
                self.render.pop_debug_group()
            if self.split:
                self._end_render()
        else:
            self._end_compute()
            self._end_render()
            if self.labels:
                self.encoder.push_debug_group(p.name)
            if isinstance(op, ClearBuffer):
                self.encoder.clear_buffer(op.buffer, op.offset, op.size)
            elif isinstance(op, CopyTexture):
                src = op.source() if callable(op.source) else op.source
                dst = op.destination() if callable(op.destination) else op.destination
                self.encoder.copy_texture_to_texture({"texture": src}, {"texture": dst}, src.size)
            else:
                self.encoder.copy_buffer_to_buffer(op.source, op.source_offset, op.destination,
                                                   op.destination_offset, op.size)
            if self.labels:
                self.encoder.pop_debug_group()

    def begin_target(self, name: str) -> None:
        """Open (and clear) a target even when no pass draws into it."""
        if name not in self.cleared:
            self._end_compute()
            self._end_render()
            self._begin_render(name)

    def _begin_render(self, name: str, label: str | None = None,
                      timestamp_writes: dict | None = None, depth_read_only: bool = False) -> None:
        target = self.targets.get(name)
        if target is None:
            raise FrameGraphError(f"draw into unknown render target '{name}'")
        clear = target.clear_color is not None and name not in self.cleared
        label = label or f"emberfx:{name}"
        # a pass that only replays bundles goes through the C functions (native_calls.py)
        descriptor = None
        if (self.bundles is not None and target.color_format is not None and not self.labels
                and timestamp_writes is None and native_calls.native_encoder(self.encoder)):
            descriptor = target.native_descriptor(clear, depth_read_only, label)
        if descriptor is not None:
            self.render = native_calls.NativeRenderPass(self.encoder, descriptor)
        else:
            colors, depth = target.attachments(clear, depth_read_only)
            self.render = self.encoder.begin_render_pass(
                label=label, color_attachments=colors, depth_stencil_attachment=depth,
                timestamp_writes=timestamp_writes)
        self.bound = {}
        self.render_target = name
        self.render_read_only = depth_read_only
        self.cleared.add(name)

    def _end_compute(self) -> None:
        if self.compute is not None:
            self.compute.end()
            self.compute = None

    def _end_render(self) -> None:
        if self.pending_draws:
            # draws are only held back inside an open render pass, with a bundle cache
            assert self.render is not None and self.render_target is not None
            assert self.bundles is not None
            target = self.targets[self.render_target]
            self.render.execute_bundles([self.bundles.bundle(
                self.pending_draws, target.color_format,
                target.depth_format if target.depth_view is not None else None, self.labels,
                depth_read_only=self.render_read_only, sample_count=target.sample_count)])
            self.pending_draws = []
        if self.render is not None:
            self.render.end()
            self.render = None
            self.render_target = None

    def close(self) -> None:
        self._end_compute()
        self._end_render()
