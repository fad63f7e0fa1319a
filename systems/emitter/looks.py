"""How an emitter's sprites look beyond colour and size over life: the texture, the flipbook and
the orientation (align, axis, stretch, rotation). The fields live on the Emitter component; this
module holds the Flipbook table, the checks that need the image, and the packing of the draw
shader's SpriteLook uniform (shaders/emitter/draw.wgsl). No GPU calls here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import numpy as np

from emberfx.core import wgsl
from emberfx.core.layout import struct_dtype
from emberfx.model.components import Tracked, live

DRAW, DRAW_SOFT = "emitter/draw.wgsl", "emitter/draw_soft.wgsl"   # the sprites' draw shaders
SPRITE_LOOK = struct_dtype(DRAW, "SpriteLook")
ALIGN_MODES = wgsl.enum_constants(DRAW, "ALIGN")
FLIPBOOK_MODES = wgsl.enum_constants(DRAW, "FLIPBOOK")
MAX_FRAMES = 4096
"""columns x rows at most: more frames than texels on a side of the largest textures"""


@dataclass(slots=True)
class Flipbook(Tracked):
    """``flipbook = { columns = 8, rows = 8, fps = 24.0, mode = "over_life" }``: the texture is a
    grid of columns x rows frames, numbered row by row from the top left."""
    columns: Annotated[int, msgspec.Meta(ge=1, le=MAX_FRAMES)] = live(1)
    rows: Annotated[int, msgspec.Meta(ge=1, le=MAX_FRAMES)] = live(1)
    fps: Annotated[float, msgspec.Meta(gt=0.0, le=1e6)] = live(24.0)
    """frames per second in mode "fps\""""
    mode: Literal["over_life", "fps"] = live("over_life")
    """over_life: frame = age / lifetime x N, held at the last; fps: frame = age x fps, wrapping"""
    interpolate: bool = live(False)
    """blend each frame into the next by the fraction of the frame position"""
    random_start: bool = live(False)
    """fps mode: each particle starts at a random frame position"""

    def __post_init__(self):
        if self.columns * self.rows > MAX_FRAMES:
            raise ValueError(f"columns: expected columns x rows <= {MAX_FRAMES}, found "
                             f"{self.columns} x {self.rows}")


def check_texture_files(component, resolve) -> None:
    """The scene loader's check of the emitter's texture: a built-in name or an image pillow
    reads, whose size the flipbook grid divides. ValueError "texture: expected ..., found ..."
    or "flipbook: ..." (the device's size limit is checked when the engine uploads it)."""
    from emberfx.blocks.textures import TextureError, image_size

    try:
        width, height = image_size(component.texture, resolve)
    except TextureError as exc:
        raise ValueError(f"texture: {exc}") from None
    book = component.flipbook
    if book is not None and (width % book.columns or height % book.rows):
        raise ValueError(f"flipbook: expected a grid that divides the image '{component.texture}' "
                         f"({width} x {height} texels), found columns = {book.columns}, "
                         f"rows = {book.rows}")


def textured(component) -> bool:
    """Whether the draw samples a texture; the default "dot" without a flipbook is drawn
    analytically (common/sprite.wgsl), the same picture without a texture fetch."""
    return component.texture != "dot" or component.flipbook is not None


def step_identity(record: np.ndarray, params: np.ndarray | None) -> None:
    """Copy the step's frame, timestep, seed and entity from the EmitterParams record into a
    draw's look record (SpriteLook, MeshLook): birth keys read them there."""
    if params is not None:
        for name in ("frame", "h", "seed", "entity"):
            record[name] = params[name]


def sprite_look_key(component) -> tuple:
    """What ``pack_sprite_look`` reads, to compare: equal keys give the same record (a script
    that moves an emitter every step edits none of it)."""
    c, book = component, component.flipbook
    return (c.axis, c.rotation_deg, c.angular_velocity_deg, c.align, c.stretch, c.soft,
            None if book is None else (book.columns, book.rows, book.mode, book.interpolate,
                                       book.fps, book.random_start))


def pack_sprite_look(component) -> bytes:
    """The SpriteLook record of the emitter's draw: the component's alone (birth keys read the
    step's identity from the emitter's params), so it is written only after an edit."""
    c = component
    record = np.zeros((), SPRITE_LOOK)
    axis = np.asarray(c.axis, np.float64)
    record["axis"] = (*(axis / math.hypot(*axis)), 0.0)   # (no BLAS call: params.py says why)
    rot, spin = (tuple(math.radians(v) for v in pair)
                 for pair in (c.rotation_deg, c.angular_velocity_deg))
    record["rotation"] = (*rot, *spin)
    book = c.flipbook
    if book is None:
        record["columns"], record["rows"] = 1, 1
        record["flipbook"] = FLIPBOOK_MODES["none"]
    else:
        record["columns"], record["rows"] = book.columns, book.rows
        record["flipbook"] = FLIPBOOK_MODES[book.mode]
        record["interpolate"] = int(book.interpolate)
        record["fps"] = book.fps
        record["random_start"] = int(book.random_start)
    record["align"] = ALIGN_MODES[c.align]
    record["stretch"] = c.stretch
    record["soft"] = c.soft
    return record.tobytes()
