"""Render pipelines shared by several systems (made by core/pipelines.py): camera-facing sprites
(shaders/common/sprite.wgsl) for every particle draw, and computed textures shown filling the
view or as a world quad (shaders/common/texture_quad.wgsl) for Life and fractal layers."""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.core.frame_graph import GEOMETRY_TARGET, SCENE_TARGET, RenderQueue
from emberfx.core.pipelines import RenderKey, render_pipeline

# common/sprite.wgsl's sprite_corner(0..5) are two triangles sharing corners 0 and 2: drawn
# through these indices, the GPU may shade each of the four corners once instead of six vertices
# (the same triangles, their vertices in the same order, so the same pixels)
SPRITE_INDICES = np.array([0, 1, 2, 0, 2, 5], np.uint32)
SPRITE_INDEX_BUFFER = "~sprites/indices"


def sprite_indices(resources, family: str):
    """The registry's index buffer of SPRITE_INDICES (made on first use), for indexed sprite
    draws: drawIndexedIndirect arguments (6, instances, 0, 0, first instance)."""
    view = resources.get(SPRITE_INDEX_BUFFER)
    if view is None:
        owner, key = SPRITE_INDEX_BUFFER.split("/")
        view = resources.buffer(owner, key, SPRITE_INDICES.nbytes,
                                wgpu.BufferUsage.INDEX | wgpu.BufferUsage.COPY_DST, family=family)
        resources.write(view, SPRITE_INDICES.tobytes())
    return view


def sprite_pipeline(device, shader: str, blend: str, color_format: str, depth_format: str,
                    fragment: str = "fs"):
    """The pipeline drawing ``shader``'s vs_main with the fragment entry <fragment>_<blend>:
    common/sprite.wgsl's fs_<blend> by default, or the shader's own (emitter/draw.wgsl's
    fs_textured_<blend>) following the same premultiplied convention."""
    return render_pipeline(device, RenderKey(
        shader, color_format, blend=None if blend == "opaque" else blend,
        # sprites test depth (hidden behind opaque geometry); only opaque ones write it
        depth_format=depth_format, depth_write=blend == "opaque", depth_compare="less",
        fragment_entry=f"{fragment}_{blend}", label=f"{shader}:{blend}"))


def sprite_queue(blend: str, soft: float = 0.0) -> int:
    """The render queue of a sprite draw: opaque sprites write depth as geometry does, into the
    depth resolved from the geometry's; soft ones read the opaque depth, so they come last."""
    if blend == "opaque":
        return RenderQueue.OPAQUE_SPRITES
    if soft > 0.0:
        return RenderQueue.SOFT
    return RenderQueue.ALPHA if blend == "alpha" else RenderQueue.TRANSPARENT


QUAD_BLENDS = ("opaque", "additive")
"""how a texture quad meets what is behind it: "opaque" covers it; "additive" adds the image's
light to it (black adds nothing), drawn with the transparent particles"""


def quad_queue(mode: str, blend: str = "opaque") -> int:
    """The render queue of a texture quad: "fill" is the background, "quad" opaque geometry; an
    additive one is drawn with the additive particles, after all opaque geometry."""
    if blend == "additive":
        return RenderQueue.TRANSPARENT
    return RenderQueue.BACKGROUND if mode == "fill" else RenderQueue.OPAQUE


def quad_target(blend: str = "opaque") -> str:
    """The render target of a texture quad: opaque ones are geometry, additive ones are drawn
    into the scene's target as sprites are."""
    return SCENE_TARGET if blend == "additive" else GEOMETRY_TARGET


def texture_quad_pipeline(device, mode: str, color_format: str, depth_format: str,
                          sample_count: int = 1, blend: str = "opaque"):
    """common/texture_quad.wgsl: mode "fill" draws behind everything (depth always, no write),
    "quad" is ordinary opaque geometry; both into the geometry target of ``sample_count``
    samples. An "additive" quad adds its colours to the scene's target (one sample) without
    writing depth; as a world quad it is hidden behind opaque geometry."""
    if blend not in QUAD_BLENDS:
        raise ValueError(f"texture quad: expected a blend of {', '.join(QUAD_BLENDS)}, "
                         f"found {blend!r}")
    additive = blend == "additive"
    return render_pipeline(device, RenderKey(
        "common/texture_quad.wgsl", color_format, blend="additive" if additive else None,
        depth_format=depth_format, depth_write=mode == "quad" and not additive,
        depth_compare="less" if mode == "quad" else "always",
        sample_count=1 if additive else sample_count,
        label=f"texture_quad:{mode}:{blend}"))
