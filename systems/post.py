"""The post-processing system: edge_detect, bloom and tonemap passes on the scene's HDR image.

Effects run in the order the scene declares them, in the POST phase after everything is drawn
and before frame/present.wgsl writes the output. An HDR storage texture cannot be read and
written in one pass, so the effects alternate between the scene image and a scratch image
(scene -> scratch -> scene ...); after an odd number of effects one copy (`post:copy`) brings
the result back into the scene image that the present pass reads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx import wgsl
from emberfx.colors import linear_color
from emberfx.frame_graph import CopyTexture, Dispatch, Pass, Phase
from emberfx.layout import struct_dtype
from emberfx.registry import set_system
from emberfx.system import EntityRef, System
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


def edge_settings(c: EdgeDetect) -> bytes:
    rec = np.zeros((), EDGE)
    rec["color"] = linear_color(c.color)
    rec["strength"] = c.strength
    rec["edges_only"] = int(c.mode == "edges")
    return rec.tobytes()


class PostSystem(System):
    key = "post"

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.effects: list[_Effect] = []
        self._textures: dict = {}
        self._sampler = self.device.create_sampler(mag_filter="linear", min_filter="linear")

    def add(self, entity: EntityRef, component) -> None:
        key = {EdgeDetect: "edge_detect", Bloom: "bloom", Tonemap: "tonemap"}[type(component)]
        self.effects.append(_Effect(entity, component, key))

    def remove(self, entity: EntityRef) -> None:
        self.effects = [e for e in self.effects if e.entity.name != entity.name]

    def rebuild(self, entity: EntityRef, component) -> None:
        pass   # nothing is sized by a component field

    def _scratch(self, name: str, size: tuple[int, int]):
        key = (name, size)
        if key not in self._textures:
            self._textures = {k: t for k, t in self._textures.items() if k[1] == size}
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

    def passes(self) -> list[Pass]:
        scene = self.shared.scene_texture
        if scene is None or not self.effects:
            return []
        w, h = scene.size[:2]
        full = (math.ceil(w / GROUP[0]), math.ceil(h / GROUP[1]), 1)
        half_size = (max(1, w // 2), max(1, h // 2))
        half = (math.ceil(half_size[0] / GROUP[0]), math.ceil(half_size[1] / GROUP[1]), 1)
        temp = self._scratch("temp", (w, h))
        source, target = scene, temp
        out = []
        for effect in self.effects:
            prefix = f"{effect.entity.name}:post:{effect.key}"
            c = effect.component
            uniform = self.uniform_buffer(f"{prefix}/settings", 16 * 4)
            if isinstance(c, EdgeDetect):
                self.device.queue.write_buffer(uniform, 0, edge_settings(c))
                pipeline = self.gpu.compute_pipeline("post/edge_detect.wgsl")
                dispatches = [(prefix, pipeline,
                               self._group(pipeline, [uniform, source, target], prefix), full)]
            elif isinstance(c, Tonemap):
                rec = np.zeros((), TONEMAP)
                rec["exposure"], rec["inverse_gamma"] = c.exposure, 1.0 / c.gamma
                rec["aces"] = int(c.operator == "aces")
                self.device.queue.write_buffer(uniform, 0, rec.tobytes())
                pipeline = self.gpu.compute_pipeline("post/tonemap.wgsl")
                dispatches = [(prefix, pipeline,
                               self._group(pipeline, [uniform, source, target], prefix), full)]
            else:
                a, b = self._scratch("bloom_a", half_size), self._scratch("bloom_b", half_size)
                settings = []
                for horizontal in (1, 0):
                    buf = self.uniform_buffer(f"{prefix}/settings{horizontal}", 16)
                    rec = np.zeros((), BLOOM)
                    rec["threshold"], rec["intensity"] = c.threshold, c.intensity
                    rec["radius"], rec["horizontal"] = c.radius, horizontal
                    self.device.queue.write_buffer(buf, 0, rec.tobytes())
                    settings.append(buf)
                extract = self.gpu.compute_pipeline("post/bloom_extract.wgsl")
                blur = self.gpu.compute_pipeline("post/bloom_blur.wgsl")
                combine = self.gpu.compute_pipeline("post/bloom_combine.wgsl")
                dispatches = [
                    (f"{prefix}_extract", extract,
                     self._group(extract, [settings[0], source, a], prefix), half),
                    (f"{prefix}_blur_x", blur, self._group(blur, [settings[0], a, b], prefix), half),
                    (f"{prefix}_blur_y", blur, self._group(blur, [settings[1], b, a], prefix), half),
                    (f"{prefix}_combine", combine,
                     self._group(combine, [settings[0], source, a, self._sampler, target], prefix),
                     full),
                ]
            for name, pipeline, group, grid in dispatches:
                # every step of the chain reads and writes both images, so the frame graph keeps
                # them in declaration order (and the present pass, a pure reader, after them)
                out.append(Pass(name, Phase.POST, Dispatch(pipeline, (group,), grid),
                                reads=CHAIN, writes=CHAIN))
            source, target = target, source
        if source is not scene:   # an odd number of effects: the result is in the scratch image
            out.append(Pass("post:copy", Phase.POST, CopyTexture(temp, scene),
                            reads=CHAIN, writes=CHAIN))
        return out

    def uploaded(self) -> set[str]:
        return {"post/scratch"}


for _key in ("edge_detect", "bloom", "tonemap"):
    set_system(_key, PostSystem)
