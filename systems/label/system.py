"""The label system: each label's text set once into a mip-mapped texture and drawn as an
additive world quad (common/texture_quad.wgsl) among the transparent particles.

  RENDER  <e>:label:draw   the text's quad, its colour added to what is behind it
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import wgpu
from PIL import Image, ImageDraw, ImageFont

from emberfx.blocks.sprites import quad_queue, quad_target, texture_quad_pipeline
from emberfx.blocks.textures import sprite_sampler, upload_with_mips
from emberfx.core.frame_graph import Pass
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView
from emberfx.core.system import EntityRef, Priority, StepInfo, System
from emberfx.model.colors import linear_color, linear_to_srgb
from emberfx.model.registry import set_system
from emberfx.systems.label.component import Label

PLACEMENT = struct_dtype("common/texture_quad.wgsl", "QuadPlacement")
LINE_PIXELS = 64
"""texels from the top of the line's box to its bottom: the text is set at this size and the
mip chain makes it smaller"""
PAD = 4   # texels of empty border round the text, so the sampler never reads past a letter


def text_image(text: str, color: str) -> np.ndarray:
    """(h, w, 4) uint8 sRGB texels of ``text``: its colour scaled by the letters' coverage
    (premultiplied, to be added), opaque black between the letters; h = LINE_PIXELS + 2 PAD."""
    font = ImageFont.load_default(size=LINE_PIXELS * 3 // 4)
    _, line_top, _, line_bottom = font.getbbox("Hg")   # a capital's top to a descender's foot
    left, _, right, _ = font.getbbox(text)
    width = math.ceil(max(right - left, 1)) + 2 * PAD
    mask = Image.new("L", (width, LINE_PIXELS + 2 * PAD))
    # the line's box centred in LINE_PIXELS
    top = PAD + (LINE_PIXELS - (line_bottom - line_top)) / 2 - line_top
    ImageDraw.Draw(mask).text((PAD - left, top), text, fill=255, font=font)
    coverage = np.asarray(mask, np.float32) / 255.0
    linear = np.asarray(linear_color(color)[:3], np.float32) * linear_color(color)[3]
    value = coverage[..., None] * linear
    image = np.empty((*coverage.shape, 4), np.uint8)
    image[..., :3] = np.round(linear_to_srgb(value) * 255)
    image[..., 3] = 255
    return image


@dataclass
class _Label:
    entity: EntityRef
    component: Label
    placement: BufferView   # the registry's placement uniform
    aspect: float       # texture width / height
    draw: Pass
    written: tuple | None = None   # the placement last written


class LabelSystem(System):
    key = "label"
    priority = Priority.SIMULATION

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.labels: dict[str, _Label] = {}

    def add(self, entity: EntityRef, component: Label) -> None:
        name = entity.name
        image = text_image(component.text, component.color)
        view = upload_with_mips(self.device, image, label=f"{name}:label")
        placement = self.buffer(entity, "placement", PLACEMENT.itemsize,
                                wgpu.BufferUsage.UNIFORM)
        pipeline = texture_quad_pipeline(self.device, "quad", self.shared.scene_format,
                                         self.shared.depth_format, blend="additive")
        draw = self.build.draw(f"{name}:label:draw", "common/texture_quad.wgsl", pipeline,
                               {"frame": "frame", "placement": f"{name}/placement",
                                "image": view, "nearest": sprite_sampler(self.device)},
                               vertices=6, order=quad_queue("quad", "additive"),
                               target=quad_target("additive"),
                               does="the label's text on its quad, added to what is behind")
        h, w = image.shape[:2]
        self.labels[name] = _Label(entity, component, placement, w / h, draw)
        self._write_placement(self.labels[name])

    def remove(self, entity: EntityRef) -> None:
        del self.labels[entity.name]   # the registry releases its placement

    def passes(self) -> list[Pass]:
        return [label.draw for label in self.labels.values()]

    def before_step(self, step: StepInfo) -> None:
        for label in self.labels.values():
            self._write_placement(label)

    def before_draw(self) -> None:
        for label in self.labels.values():
            self._write_placement(label)

    def _write_placement(self, label: _Label) -> None:
        c = label.component
        # the texture holds PAD texels round the line: the quad grows to keep the line `height`
        tall = c.height * (LINE_PIXELS + 2 * PAD) / LINE_PIXELS
        key = (tuple(c.position), tall)
        if key == label.written:
            return
        label.written = key
        placement = np.zeros((), PLACEMENT)
        placement["center"] = (*c.position, 1.0)
        placement["size"] = (tall * label.aspect, tall, 0.0, 0.0)
        self.resources.write(label.placement, placement.tobytes())

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        label = self.labels[entity.name]
        return {"text": label.component.text, "aspect": label.aspect}


set_system("label", LabelSystem)
