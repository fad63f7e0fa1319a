"""The post-processing system: edge_detect, bloom and tonemap passes on the scene's HDR image.

Effects run in the order the scene declares them, in the POST phase after everything is drawn
and before frame/present.wgsl writes the output. An HDR storage texture cannot be read and
written in one pass, so the effects alternate between the scene image and a scratch image
(scene -> scratch -> scene ...); after an odd number of effects one copy (`post:copy`) brings
the result back into the scene image that the present pass reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx import wgsl
from emberfx.colors import linear_color
from emberfx.frame_graph import CopyTexture, Dispatch, Pass, Phase
from emberfx.layout import struct_dtype
from emberfx.registry import set_system
from emberfx.system import EntityRef, Priority, StepInfo, System
from emberfx.systems.post_component import Bloom, EdgeDetect, Tonemap

EDGE = struct_dtype("post/edge_types.wgsl", "EdgeSettings")
TONEMAP = struct_dtype("post/tonemap.wgsl", "TonemapSettings")
BLOOM = struct_dtype("post/bloom_types.wgsl", "BloomSettings")
GROUP = wgsl.workgroup_size("post/tonemap.wgsl")   # every post pass's (16 x 16 pixels)
HDR = "rgba16float"
CHAIN = ("scene/color", "post/scratch")


@dataclass
class _Effect:
    entity: EntityRef
    component: EdgeDetect | Bloom | Tonemap
    key: str
    uniforms: list = field(default_factory=list)   # settings buffers, made in add
    written: list = field(default_factory=list)    # the bytes last written to each
    # per parity (0: scene -> scratch, 1: scratch -> scene): (pass name, pipeline, group, grid)
    dispatches: tuple[list, list] = field(default_factory=lambda: ([], []))


def edge_settings(c: EdgeDetect) -> bytes:
    rec = np.zeros((), EDGE)
    rec["color"] = linear_color(c.color)
    rec["strength"] = c.strength
    rec["edges_only"] = int(c.mode == "edges")
    return rec.tobytes()


def tonemap_settings(c: Tonemap) -> bytes:
    rec = np.zeros((), TONEMAP)
    rec["exposure"], rec["inverse_gamma"] = c.exposure, 1.0 / c.gamma
    rec["aces"] = int(c.operator == "aces")
    return rec.tobytes()


def bloom_settings(c: Bloom, horizontal: int) -> bytes:
    rec = np.zeros((), BLOOM)
    rec["threshold"], rec["intensity"] = c.threshold, c.intensity
    rec["radius"], rec["horizontal"] = c.radius, horizontal
    return rec.tobytes()


def settings_of(c) -> list[bytes]:
    if isinstance(c, EdgeDetect):
        return [edge_settings(c)]
    if isinstance(c, Tonemap):
        return [tonemap_settings(c)]
    return [bloom_settings(c, 1), bloom_settings(c, 0)]


class PostSystem(System):
    """Every GPU object is made in add (and again for a new scene image, after a resize):
    passes() only picks each effect's bind groups for its place in the scene/scratch chain."""
    key = "post"
    priority = Priority.POST

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.effects: list[_Effect] = []
        self._textures: dict = {}
        self._bound_to = None   # the scene image the effects' bind groups read and write
        self._sampler = self.device.create_sampler(mag_filter="linear", min_filter="linear")

    def add(self, entity: EntityRef, component) -> None:
        key = {EdgeDetect: "edge_detect", Bloom: "bloom", Tonemap: "tonemap"}[type(component)]
        effect = _Effect(entity, component, key)
        prefix = f"{entity.name}:post:{key}"
        sizes = [16 * 4] if key != "bloom" else [16, 16]
        names = ["settings"] if key != "bloom" else ["settings1", "settings0"]
        effect.uniforms = [self.uniform_buffer(f"{prefix}/{n}", size)
                           for n, size in zip(names, sizes)]
        self._write_settings(effect)
        self.effects.append(effect)
        scene = self.shared.scene_texture
        if scene is not None:
            if self._bound_to is scene:
                self._bind(effect, scene)
            else:
                self._bind_all(scene)

    def remove(self, entity: EntityRef) -> None:
        for effect in self.effects:
            if effect.entity.name == entity.name:
                for buffer in effect.uniforms:
                    buffer.destroy()
        self.effects = [e for e in self.effects if e.entity.name != entity.name]

    def rebuild(self, entity: EntityRef, component) -> None:
        pass   # nothing is sized by a component field

    def before_step(self, step: StepInfo) -> None:
        for effect in self.effects:
            self._write_settings(effect)

    def _write_settings(self, effect: _Effect) -> None:
        """The effect's uniforms, rewritten only after a live edit changed them."""
        data = settings_of(effect.component)
        if data != effect.written:
            for buffer, record in zip(effect.uniforms, data):
                self.device.queue.write_buffer(buffer, 0, record)
            effect.written = data

    def _scratch(self, name: str, size: tuple[int, int]):
        key = (name, size)
        if key not in self._textures:
            self._textures[key] = self.device.create_texture(
                label=f"post/{name}", size=(*size, 1), format=HDR,
                usage=(wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING
                       | wgpu.TextureUsage.COPY_SRC))
        return self._textures[key]

    def _group(self, pipeline, resources: list, label: str):
        entries = []
        for i, res in enumerate(resources):
            if isinstance(res, wgpu.GPUBuffer):
                entries.append({"binding": i, "resource": {"buffer": res}})
            elif isinstance(res, wgpu.GPUTexture):
                entries.append({"binding": i, "resource": res.create_view()})
            else:
                entries.append({"binding": i, "resource": res})
        return self.device.create_bind_group(label=label, layout=pipeline.get_bind_group_layout(0),
                                             entries=entries)

    def _bind_all(self, scene) -> None:
        self._textures.clear()   # sized for the old scene image
        for effect in self.effects:
            self._bind(effect, scene)
        self._bound_to = scene

    def _bind(self, effect: _Effect, scene) -> None:
        """The effect's bind groups for both places it may take in the chain, on ``scene``."""
        w, h = scene.size[:2]
        full = (math.ceil(w / GROUP[0]), math.ceil(h / GROUP[1]), 1)
        half_size = (max(1, w // 2), max(1, h // 2))
        half = (math.ceil(half_size[0] / GROUP[0]), math.ceil(half_size[1] / GROUP[1]), 1)
        temp = self._scratch("temp", (w, h))
        prefix = f"{effect.entity.name}:post:{effect.key}"
        for parity, (source, target) in enumerate(((scene, temp), (temp, scene))):
            if effect.key in ("edge_detect", "tonemap"):
                pipeline = self.gpu.compute_pipeline(f"post/{effect.key}.wgsl")
                group = self._group(pipeline, [effect.uniforms[0], source, target], prefix)
                effect.dispatches[parity][:] = [(prefix, pipeline, group, full)]
                continue
            settings = effect.uniforms
            a, b = self._scratch("bloom_a", half_size), self._scratch("bloom_b", half_size)
            extract = self.gpu.compute_pipeline("post/bloom_extract.wgsl")
            blur = self.gpu.compute_pipeline("post/bloom_blur.wgsl")
            combine = self.gpu.compute_pipeline("post/bloom_combine.wgsl")
            effect.dispatches[parity][:] = [
                (f"{prefix}_extract", extract,
                 self._group(extract, [settings[0], source, a], prefix), half),
                (f"{prefix}_blur_x", blur, self._group(blur, [settings[0], a, b], prefix), half),
                (f"{prefix}_blur_y", blur, self._group(blur, [settings[1], b, a], prefix), half),
                (f"{prefix}_combine", combine,
                 self._group(combine, [settings[0], source, a, self._sampler, target], prefix),
                 full),
            ]

    def passes(self) -> list[Pass]:
        scene = self.shared.scene_texture
        if scene is None or not self.effects:
            return []
        size = (scene.size[0], scene.size[1])
        if self._bound_to is not scene:
            # The engine made a new scene image (a resize) and tells systems nothing of its
            # targets: the one case where new bind groups are made here.
            self._bind_all(scene)
        out = []
        for parity, effect in enumerate(self.effects):
            for name, pipeline, group, grid in effect.dispatches[parity % 2]:
                # every step of the chain reads and writes both images, so the frame graph keeps
                # them in declaration order (and the present pass, a pure reader, after them)
                out.append(Pass(name, Phase.POST, Dispatch(pipeline, (group,), grid),
                                reads=CHAIN, writes=CHAIN))
        if len(self.effects) % 2:   # an odd number of effects: the result is in the scratch image
            temp = self._scratch("temp", size)
            out.append(Pass("post:copy", Phase.POST, CopyTexture(temp, scene),
                            reads=CHAIN, writes=CHAIN))
        return out

    def uploaded(self) -> set[str]:
        return {"post/scratch"}


for _key in ("edge_detect", "bloom", "tonemap"):
    set_system(_key, PostSystem)
