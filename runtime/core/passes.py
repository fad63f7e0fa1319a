"""What a pass is: its name, phase, what it reads and writes, and one operation (a compute
dispatch, a draw into a named render target, a buffer clear or copy, a texture copy), with a
phrase saying what it does; the phases of a frame and the render queues that order draws inside
the RENDER phase; and the render targets draws go into. Systems build these descriptions;
frame_graph.py orders, checks and records them (and re-exports every name here, which is where
systems import them from).

A phase's work need not be a pass of its own: a clear may be a host write (queue.write_buffer
before the step), a preparation may be done by the pass that computes its inputs. The pass that
depends on such work says so (``Pass.folded``, a ``Folded`` each), so ``emberfx passes`` can
list it under the passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import TYPE_CHECKING

from emberfx.core import native_calls

if TYPE_CHECKING:
    import wgpu


class Phase(IntEnum):
    CLEAR = 0
    SIMULATE = 1
    PREPARE = 2
    RENDER = 3
    POST = 4
    READBACK = 5


SIMULATION_PHASES = frozenset({Phase.CLEAR, Phase.SIMULATE, Phase.PREPARE, Phase.READBACK})
DRAWING_PHASES = frozenset({Phase.RENDER, Phase.POST})


@dataclass(frozen=True)
class Dispatch:
    """A compute dispatch: fixed workgroup counts (or a function giving them when the frame is
    encoded; (0, 0, 0) skips the work), or counts read from an indirect-args buffer.

    ``repeat`` (a count, or a function giving it when the frame is encoded) issues it that many
    times in a row (substeps), each seeing the previous one's writes; a bind group given as a
    function is then called with the repeat index k, so ping-pong state alternates. One pass for
    all of them keeps Python's per-call cost (WGPU_NOTES) low."""
    pipeline: wgpu.GPUComputePipeline
    bind_groups: tuple = ()
    groups: tuple[int, int, int] | Callable[[], tuple[int, int, int]] = (1, 1, 1)
    indirect: tuple[wgpu.GPUBuffer, int] | None = None  # (buffer, byte offset)
    repeat: int | Callable[[], int] = 1


@dataclass(frozen=True)
class Draw:
    """A draw into a named render target ("scene" or "output"); indirect when ``indirect`` is set,
    indexed when ``index`` = (index buffer, "uint32" | "uint16", index count) is (both: the
    arguments are drawIndexedIndirect's five words, and the count comes from them). With
    ``depth_read_only`` it runs in a render pass whose depth attachment is read-only, so it may
    also bind the target's depth as a texture (soft particles); such draws share passes only
    with each other."""
    pipeline: wgpu.GPURenderPipeline
    bind_groups: tuple = ()
    target: str = "scene"
    vertices: int = 3
    instances: int = 1
    indirect: tuple[wgpu.GPUBuffer, int] | None = None
    index: tuple[wgpu.GPUBuffer, str, int] | None = None
    depth_read_only: bool = False
    # further drawIndirect calls after ``indirect``, same pipeline and bind groups (the emitters
    # of a batch, each from its own first instance: systems/emitter/batches.py)
    more_indirect: tuple[tuple[wgpu.GPUBuffer, int], ...] = ()


@dataclass(frozen=True)
class ClearBuffer:
    buffer: wgpu.GPUBuffer
    offset: int = 0
    size: int | None = None


@dataclass(frozen=True)
class CopyBuffer:
    source: wgpu.GPUBuffer
    destination: wgpu.GPUBuffer
    size: int
    source_offset: int = 0
    destination_offset: int = 0


@dataclass(frozen=True)
class CopyTexture:
    """A whole-texture copy (same size and format); either side may be a function returning the
    texture when the frame is encoded (render targets are recreated on resize)."""
    source: wgpu.GPUTexture | Callable[[], wgpu.GPUTexture]
    destination: wgpu.GPUTexture | Callable[[], wgpu.GPUTexture]


Operation = Dispatch | Draw | ClearBuffer | CopyBuffer | CopyTexture


SCENE_TARGET = "scene"
"""the single-sampled scene image ("scene/color", "scene/depth"): sprites draw here, post
effects read and write it"""
GEOMETRY_TARGET = "geometry"
"""where solid geometry (meshes, cloth, colliders, texture quads) draws: multisampled with
``[render] msaa`` > 1 ("geometry/color", "geometry/depth"), its colour resolved into
"scene/color" when each of its render passes ends and its depth by frame/depth_resolve.wgsl;
the scene's own textures with msaa = 1"""



def target_writes(target: str) -> tuple[str, ...]:
    """What a draw into ``target`` declares it writes: the target's colour; a geometry draw
    also its depth (which frame/depth_resolve.wgsl reads) and the scene image its colour is
    resolved into."""
    if target == GEOMETRY_TARGET:
        return (f"{GEOMETRY_TARGET}/color", f"{GEOMETRY_TARGET}/depth", f"{SCENE_TARGET}/color")
    return (f"{target}/color",)


class RenderQueue:
    """Order hints of draws in the RENDER phase, like an engine's render queues: what fills the
    view first, then opaque geometry (which writes depth, so transparent draws are hidden behind
    it), then transparent particles (additive, then alpha-blended ones drawn back to front), and
    last soft particles, which read the opaque depth in a pass of their own. Solid geometry
    draws into the multisampled GEOMETRY_TARGET; RESOLVE brings its depth into the scene's, and
    every sprite queue comes after it."""
    BACKGROUND = -100
    OPAQUE = -10
    RESOLVE = -5   # the geometry's depth resolved into the scene's, before any sprite
    OPAQUE_SPRITES = -4   # opaque sprites test and write the resolved depth
    TRANSPARENT = 0
    ALPHA = 100
    SOFT = 200


class Folding(StrEnum):
    """How a phase's work is done without a pass of its own."""
    HOST_WRITE = "host write"      # the host writes it with queue.write_buffer before the step
    IN_PASS = "folded"             # the pass that carries the Folded does it too
    AFTER_PASSES = "copy"          # a copy the engine records after the step's passes


@dataclass(frozen=True)
class Folded:
    """Work of ``phase`` that has no pass of its own (``how``), e.g. counters cleared by a host
    write, or draw arguments written by the pass that ranks the particles."""
    phase: Phase
    how: Folding
    what: str                      # a short phrase, e.g. "the drawIndirect arguments"


@dataclass(frozen=True)
class Pass:
    name: str                      # entity:system:pass
    phase: Phase
    op: Operation
    reads: tuple[str, ...] = ()    # resource names, e.g. "fountain/particles"
    writes: tuple[str, ...] = ()
    order: int = 0                 # within a phase, lower first where dependencies allow (draws:
                                   # a RenderQueue value)
    # what it does, a short phrase (``emberfx passes`` prints it); not part of the frame's shape
    does: str = field(default="", compare=False)
    # work of another phase this pass does, or that is done for it without a pass (see Folded)
    folded: tuple[Folded, ...] = field(default=(), compare=False)

    @property
    def kind(self) -> str:
        return {Dispatch: "compute", Draw: "render", ClearBuffer: "clear",
                CopyBuffer: "copy", CopyTexture: "copy"}[type(self.op)]


@dataclass(frozen=True)
class PassTable:
    """A frame's passes in execution order, and the work of phases done without a pass of its
    own, each with the pass that carries it (None: the engine's own), by phase."""
    passes: tuple[Pass, ...]
    folded: tuple[tuple[Folded, str | None], ...]


def pass_table(passes: list[Pass], engine_folded: tuple[Folded, ...] = ()) -> PassTable:
    """The table of ``passes`` (in execution order): their own ``folded`` work, once each, and
    ``engine_folded``, the engine's."""
    carried = dict.fromkeys((f, p.name) for p in passes for f in p.folded)
    found = [*carried, *((f, None) for f in engine_folded)]
    return PassTable(tuple(passes), tuple(sorted(found, key=lambda item: item[0].phase)))


@dataclass(frozen=True)
class RenderTarget:
    """Where draws of one target name go: colour view (None: a depth-only target, such as the
    shadow map), optional depth view, clear colour; with its formats given, its draws may be
    replayed from render bundles (runtime/core/bundles.py). A multisampled target
    (``sample_count`` > 1) resolves its colour into ``resolve_view`` when each of its render
    passes ends."""
    color_view: wgpu.GPUTextureView | None
    clear_color: tuple[float, float, float, float] | None  # None: load what is there
    depth_view: wgpu.GPUTextureView | None = None
    color_format: str | None = None
    depth_format: str | None = None
    sample_count: int = 1
    resolve_view: wgpu.GPUTextureView | None = None
    _attachments: dict = field(default_factory=dict, init=False, compare=False, repr=False)
    _descriptors: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def bundled(self) -> bool:
        """Whether its formats are known, so its draws may be replayed from render bundles."""
        return self.color_format is not None or (self.color_view is None
                                                 and self.depth_format is not None)

    def attachments(self, clear: bool, depth_read_only: bool) -> tuple[list[dict], dict | None]:
        """A render pass's colour attachments and depth attachment into this target: cleared
        (``clear``) or loaded, the depth written or read-only. Each of the four is made once
        and handed out again: a frame begins several render passes, and wgpu-py reads these
        dicts without keeping or changing them."""
        key = (clear, depth_read_only)
        found = self._attachments.get(key)
        if found is None:
            colors = []
            if self.color_view is not None:
                color = {"view": self.color_view, "load_op": "clear" if clear else "load",
                         "store_op": "store"}
                if clear:
                    color["clear_value"] = self.clear_color
                if self.resolve_view is not None:
                    color["resolve_target"] = self.resolve_view
                colors.append(color)
            depth = None
            if self.depth_view is not None and depth_read_only:
                depth = {"view": self.depth_view, "depth_read_only": True}
            elif self.depth_view is not None:
                depth = {"view": self.depth_view, "depth_load_op": "clear" if clear else "load",
                         "depth_store_op": "store", "depth_clear_value": 1.0}
            found = self._attachments[key] = (colors, depth)
        return found

    def native_descriptor(self, clear: bool, depth_read_only: bool,
                          label: str) -> native_calls.RenderDescriptor | None:
        """The same render pass as ``attachments`` gives, as a C descriptor made once (for
        native_calls.NativeRenderPass); None where it cannot describe it."""
        if self.color_view is None:   # depth-only: wgpu-py's path
            return None
        key = (clear, depth_read_only, label)
        found = self._descriptors.get(key)
        if found is None:
            found = self._descriptors[key] = native_calls.RenderDescriptor(
                label, self.color_view, self.clear_color if clear else None, self.depth_view,
                depth_read_only, self.resolve_view)
        return found if found.usable else None
