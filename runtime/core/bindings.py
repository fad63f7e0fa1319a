"""Named bindings: a pass binds registry resources to the variable names its WGSL declares.

    pass_ = builder.compute("fountain:emitter:update", Phase.SIMULATE, "emitter/update.wgsl",
                            grid, {"params": "fountain/params", "particles": "fountain/particles",
                                   ...})

Each name is matched to a ``@group(g) @binding(b) var<...> name`` declaration of the shader
(wgsl.bindings reads them as layout.py reads structs), so there are no positional lists. Every
declared binding must be given, and nothing else. The declaration's address space and access
mode give the pass's reads and writes: ``var<uniform>``, ``var<storage, read>`` and sampled
textures are read; ``var<storage, read_write>`` is read and written; a ``write`` storage texture
is written. The frame graph orders passes and checks hazards from those, not from a second list.

Bind group layouts are explicit, built from the same declarations and cached per device, so a
pipeline's layout never depends on which bindings an entry point happens to use, and bind groups
of one layout fit every pipeline made from that shader (override variants included).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import wgpu

from emberfx.core import wgsl
from emberfx.core.errors import EmberError
from emberfx.core.frame_graph import (
    ClearBuffer,
    CopyBuffer,
    Dispatch,
    Draw,
    Folded,
    Pass,
    Phase,
    target_writes,
)
from emberfx.core.resources import BufferView, Resources, TextureResource
from emberfx.core.shader_cache import shader_cache

if TYPE_CHECKING:
    from emberfx.core.gpu import GpuContext

COMPUTE = "compute"
RENDER = "render"


class BindingError(EmberError):
    """A pass binds names its shader does not declare, misses one, or binds the wrong kind."""


# layouts -------------------------------------------------------------------------------------
_LAYOUTS: dict[tuple, Any] = shader_cache()   # (device id, shader, stage[, "pipeline"])


def _entry(binding: wgsl.Binding, stage: str) -> dict:
    stages = wgpu.ShaderStage
    if stage == COMPUTE:
        visibility = stages.COMPUTE
    elif binding.writes:   # a vertex shader may not write storage
        visibility = stages.FRAGMENT
    else:
        visibility = stages.VERTEX | stages.FRAGMENT
    entry: dict[str, Any] = {"binding": binding.index, "visibility": visibility}
    if binding.kind == "uniform":
        entry["buffer"] = {"type": "uniform"}
    elif binding.kind == "storage":
        entry["buffer"] = {"type": "storage" if binding.writes else "read-only-storage"}
    elif binding.kind in ("texture", "depth-texture"):
        dimension, scalar, multisampled = wgsl.sampled_texture_type(binding)
        sample = {"f32": "float", "u32": "uint", "i32": "sint", "depth": "depth"}[scalar]
        entry["texture"] = {"sample_type": sample, "view_dimension": dimension,
                            "multisampled": multisampled}
    elif binding.kind == "storage-texture":
        dimension, texel = wgsl.storage_texture_format(binding)
        access = {"write": "write-only", "read": "read-only", "read_write": "read-write"}
        entry["storage_texture"] = {"access": access[binding.access], "format": texel,
                                    "view_dimension": dimension.replace("_", "-")}
    else:
        comparison = binding.type.startswith("sampler_comparison")
        entry["sampler"] = {"type": "comparison" if comparison else "filtering"}
    return entry


def group_layouts(device, shader: str, stage: str = COMPUTE) -> tuple:
    """The explicit bind group layouts of ``shader``, one per group index 0..max (cached)."""
    key = (id(device), shader, stage)
    layouts = _LAYOUTS.get(key)
    if layouts is None:
        declared = wgsl.bindings(shader).values()
        count = 1 + max((b.group for b in declared), default=-1)
        layouts = tuple(
            device.create_bind_group_layout(
                label=f"{shader}:group{g}",
                entries=[_entry(b, stage) for b in declared if b.group == g])
            for g in range(count))
        _LAYOUTS[key] = layouts
    return layouts


def pipeline_layout(device, shader: str, stage: str = COMPUTE):
    """The pipeline layout made of ``shader``'s explicit bind group layouts (cached)."""
    key = (id(device), shader, stage, "pipeline")
    layout = _LAYOUTS.get(key)
    if layout is None:
        layout = _LAYOUTS[key] = device.create_pipeline_layout(
            label=shader, bind_group_layouts=list(group_layouts(device, shader, stage)))
    return layout


# bind groups ---------------------------------------------------------------------------------
Bound = BufferView | TextureResource | str | Any   # a resource, its name, or a GPUSampler


@dataclass(frozen=True)
class BoundGroups:
    """Bind groups for one or more variants of the same bindings (ping-pong state), and the
    resources the pass reads and writes through them."""
    variants: tuple[tuple[Any, ...], ...]   # variant -> bind group per group index
    reads: tuple[str, ...]
    writes: tuple[str, ...]

    def group(self, index: int, variant: int = 0):
        return self.variants[variant][index]

    def fixed(self) -> tuple:
        """The bind groups of a pass with one variant."""
        return self.variants[0]

    def chosen(self, pick: Callable[..., int]) -> tuple:
        """Bind groups given as functions: ``pick()`` (or ``pick(k)`` for the k-th repeat of a
        dispatch) names the variant when the frame is encoded."""
        return tuple((lambda *k, g=g: self.variants[pick(*k)][g])
                     for g in range(len(self.variants[0])))


def _resolve(resources: Resources, value: Bound):
    if isinstance(value, str):
        return resources[value]
    return value


def bind(gpu: GpuContext, resources: Resources, label: str, shader: str,
         variants: Mapping[str, Bound] | Sequence[Mapping[str, Bound]],
         stage: str = COMPUTE) -> BoundGroups:
    """Bind groups for ``shader`` from ``{wgsl variable: resource}`` (or a list of such maps,
    one per variant). Resources may be given by registry name or as BufferView /
    TextureResource; samplers as GPUSampler."""
    maps = [variants] if isinstance(variants, Mapping) else list(variants)
    declared = wgsl.bindings(shader)
    layouts = group_layouts(gpu.device, shader, stage)
    reads: dict[str, None] = {}
    writes: dict[str, None] = {}
    built = []
    for given in maps:
        _check_names(label, shader, declared, given)
        entries: list[list[dict]] = [[] for _ in layouts]
        for var, binding in declared.items():
            resource = _resolve(resources, given[var])
            entries[binding.group].append(
                {"binding": binding.index, "resource": _resource_entry(label, binding, resource)})
            name = getattr(resource, "name", None)
            if isinstance(resource, (BufferView, TextureResource)) and name is not None:
                if binding.reads:
                    reads[name] = None
                if binding.writes:
                    writes[name] = None
        built.append(tuple(
            gpu.device.create_bind_group(label=f"{label}:group{g}", layout=layouts[g],
                                         entries=entries[g])
            for g in range(len(layouts))))
    return BoundGroups(tuple(built), tuple(reads), tuple(writes))


def _check_names(label: str, shader: str, declared: dict, given: Mapping) -> None:
    missing = [n for n in declared if n not in given]
    unknown = [n for n in given if n not in declared]
    if unknown:
        close = difflib.get_close_matches(unknown[0], declared, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise BindingError(f"pass '{label}': shaders/{shader} declares no binding "
                           f"'{unknown[0]}' (it declares: {', '.join(declared)}){hint}")
    if missing:
        raise BindingError(f"pass '{label}': shaders/{shader} declares "
                           f"{', '.join(repr(m) for m in missing)} but the pass binds nothing "
                           f"to it")


def _resource_entry(label: str, binding: wgsl.Binding, resource):
    is_buffer = binding.kind in ("uniform", "storage")
    is_texture = binding.kind in ("texture", "depth-texture", "storage-texture")
    if is_buffer and isinstance(resource, BufferView):
        return resource.entry()
    if is_texture and isinstance(resource, TextureResource):
        return resource.entry()
    if is_texture and isinstance(resource, wgpu.GPUTextureView):
        return resource
    if binding.kind == "sampler" and isinstance(resource, wgpu.GPUSampler):
        return resource
    raise BindingError(f"pass '{label}': binding '{binding.name}' ({binding.kind} "
                       f"{binding.type}) cannot take {type(resource).__name__} "
                       f"{getattr(resource, 'name', '')!r}")


# passes --------------------------------------------------------------------------------------
class PassBuilder:
    """Makes ``Pass`` descriptions whose reads and writes come from the shader's declarations.
    Every System has one (``self.build``)."""

    def __init__(self, gpu: GpuContext, resources: Resources):
        self.gpu = gpu
        self.resources = resources

    def pipeline(self, shader: str, constants: Mapping[str, Any] | None = None):
        """The compute pipeline of ``shader``'s ``main`` with its explicit layout (cached)."""
        return self.gpu.compute_pipeline(shader, dict(constants or {}))

    def bind(self, label: str, shader: str, variants, stage: str = COMPUTE) -> BoundGroups:
        return bind(self.gpu, self.resources, label, shader, variants, stage)

    def compute(self, name: str, phase: Phase, shader: str, groups, bindings, *,
                constants: Mapping[str, Any] | None = None, pick: Callable[..., int] | None = None,
                repeat: int | Callable[[], int] = 1, indirect: tuple[Bound, int] | None = None,
                order: int = 0, does: str = "", folded: tuple[Folded, ...] = ()) -> Pass:
        """A compute pass running ``shader`` over ``groups`` workgroups (or a function giving
        them, or indirectly from ``indirect`` = (buffer resource, byte offset)). ``bindings`` is
        one map or a list of maps chosen by ``pick`` (see BoundGroups.chosen). ``does`` and
        ``folded``: see Pass."""
        pipeline = self.pipeline(shader, constants)
        bound = self.bind(name, shader, bindings)
        reads = list(bound.reads)
        indirect_op = None
        if indirect is not None:
            view = _resolve(self.resources, indirect[0])
            indirect_op = (view.buffer, view.offset + indirect[1])
            reads.append(view.name)
        groups_op = bound.fixed() if pick is None else bound.chosen(pick)
        return Pass(name, phase, Dispatch(pipeline, groups_op, groups, indirect_op, repeat),
                    reads=tuple(dict.fromkeys(reads)), writes=bound.writes, order=order,
                    does=does, folded=folded)

    def draw(self, name: str, shader: str, pipeline, bindings, *, target: str = "scene",
             phase: Phase = Phase.RENDER, pick: Callable[[], int] | None = None,
             vertices: int = 3, instances: int = 1, indirect: tuple[Bound, int] | None = None,
             index: tuple[Bound, str, int] | None = None, order: int = 0,
             depth_read_only: bool = False, more_indirect: tuple[int, ...] = (),
             does: str = "", folded: tuple[Folded, ...] = ()) -> Pass:
        """A draw of ``pipeline`` (made with ``pipeline_layout(shader, RENDER)``) into the render
        target ``target``; it writes ``<target>/color`` (passes.target_writes).
        ``depth_read_only``: see Draw. ``more_indirect``: byte offsets of further draws'
        arguments in ``indirect``'s buffer."""
        bound = self.bind(name, shader, bindings, RENDER)
        reads = list(bound.reads)
        indirect_op = index_op = None
        more: tuple = ()
        if indirect is not None:
            view = _resolve(self.resources, indirect[0])
            indirect_op = (view.buffer, view.offset + indirect[1])
            more = tuple((view.buffer, view.offset + offset) for offset in more_indirect)
            reads.append(view.name)
        if index is not None:
            view = _resolve(self.resources, index[0])
            index_op = (view.buffer, index[1], index[2])
            reads.append(view.name)
        groups_op = bound.fixed() if pick is None else bound.chosen(pick)
        op = Draw(pipeline, groups_op, target=target, vertices=vertices, instances=instances,
                  indirect=indirect_op, index=index_op, depth_read_only=depth_read_only,
                  more_indirect=more)
        return Pass(name, phase, op, reads=tuple(dict.fromkeys(reads)),
                    writes=tuple(dict.fromkeys((*bound.writes, *target_writes(target)))),
                    order=order, does=does, folded=folded)

    def clear(self, name: str, phase: Phase, resource: Bound, offset: int = 0,
              size: int | None = None, does: str = "") -> Pass:
        """Zero ``size`` bytes (default: to the end) at ``offset`` of a buffer resource."""
        view = _resolve(self.resources, resource)
        size = view.size - offset if size is None else size
        return Pass(name, phase, ClearBuffer(view.buffer, view.offset + offset, size),
                    writes=(view.name,), does=does or f"zeroes {view.name}")

    def copy(self, name: str, phase: Phase, source: Bound, destination: Bound, size: int,
             source_offset: int = 0, destination_offset: int = 0, does: str = "") -> Pass:
        src, dst = _resolve(self.resources, source), _resolve(self.resources, destination)
        return Pass(name, phase, CopyBuffer(src.buffer, dst.buffer, size,
                                            src.offset + source_offset,
                                            dst.offset + destination_offset),
                    reads=(src.name,), writes=(dst.name,),
                    does=does or f"copies {src.name} to {dst.name}")
