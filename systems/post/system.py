"""The post-processing system: edge_detect, bloom and tonemap passes on the scene's HDR image.

Effects run in the order the scene declares them, in the POST phase after everything is drawn
and before frame/present.wgsl writes the output. An HDR storage texture cannot be read and
written in one pass, so the effects alternate between the scene image and a scratch image
(scene -> scratch -> scene ...); the present pass reads whichever holds the result
(``presented_image``: the scratch image after an odd number of effects), so no copy brings it
back. The scene image then keeps an earlier stage; captures of it (HDR, depth) draw the RENDER
phase alone and never see post effects.

Resources: each effect's settings uniform, `<entity>/<effect>:settings` (a bloom has two,
`bloom:settings_x` and `bloom:settings_y`: its blur passes differ in direction), and the images
every effect shares, sized like the scene image: `post/scratch` and, once a bloom exists, the
half-size `post/bloom_a` and `post/bloom_b`. The shared images belong to no entity; they are made
under their own family (so no entity's release, not even one named "post", takes them) and go
when the last effect goes or the renderer makes new targets.

Every pass is made in add, for both places an effect may take in the chain, and made again when
the renderer makes new targets (``targets_changed``: a resize or a new background gives a new
"scene/color"); passes() only picks each effect's list by its position.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView, TextureResource
from emberfx.core.system import EntityRef, Priority, StepInfo, System
from emberfx.model.colors import linear_color
from emberfx.model.registry import set_system
from emberfx.systems.post.component import Bloom, EdgeDetect, Tonemap

EDGE = struct_dtype("post/edge_types.wgsl", "EdgeSettings")
TONEMAP = struct_dtype("post/tonemap.wgsl", "TonemapSettings")
BLOOM = struct_dtype("post/bloom_types.wgsl", "BloomSettings")
GROUP = wgsl.workgroup_size("post/tonemap.wgsl")   # every post pass's (16 x 16 pixels)
HDR = "rgba16float"
EFFECTS = {EdgeDetect: "edge_detect", Bloom: "bloom", Tonemap: "tonemap"}
SCENE_IMAGE = "scene/color"   # the renderer's HDR target, remade with every new target size
SHARED_OWNER = "post"         # owner of the images every effect shares
SHARED_FAMILY = "post:shared"
CHAIN = (SCENE_IMAGE, f"{SHARED_OWNER}/scratch")


@dataclass
class _Effect:
    entity: EntityRef
    component: EdgeDetect | Bloom | Tonemap
    key: str
    settings: list[BufferView]                      # registry uniforms, made in add
    written: list = field(default_factory=list)    # the bytes last written to each
    # per place in the chain (0: scene -> scratch, 1: scratch -> scene): the effect's passes
    passes: tuple[list[Pass], list[Pass]] = field(default_factory=lambda: ([], []))


def chain_step(p: Pass) -> Pass:
    """``p`` as a step of the chain. The frame graph knows one version of each resource per
    phase, so a pass that only reads the scene image would be ordered after every later step
    that writes it; the chain passes the two images back and forth many times within POST.
    Declaring that every step reads and writes both keeps the steps in declaration order (and
    the present pass, a pure reader, after them); what the step's WGSL binds stays declared."""
    return dataclasses.replace(p, reads=tuple(dict.fromkeys((*p.reads, *CHAIN))),
                               writes=tuple(dict.fromkeys((*p.writes, *CHAIN))))


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
    """Every GPU object is made in add (and again by targets_changed): passes() only picks each
    effect's list for its place in the scene/scratch chain."""
    key = "post"
    priority = Priority.POST

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.effects: list[_Effect] = []
        self._sampler = self.device.create_sampler(mag_filter="linear", min_filter="linear")

    # lifecycle ---------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component) -> None:
        key = EFFECTS[type(component)]
        uniform = wgpu.BufferUsage.UNIFORM
        if key == "bloom":
            settings = [self.buffer(entity, f"bloom:settings_{axis}", BLOOM.itemsize, uniform)
                        for axis in ("x", "y")]
        else:
            size = (EDGE if key == "edge_detect" else TONEMAP).itemsize
            settings = [self.buffer(entity, f"{key}:settings", size, uniform)]
        effect = _Effect(entity, component, key, settings)
        self._write_settings(effect)
        if SCENE_IMAGE in self.resources:   # the renderer makes its targets before any entity
            self._make_passes(effect)
        self.effects.append(effect)

    def remove(self, entity: EntityRef) -> None:
        # the registry releases the entity's settings; the shared images go with the last effect
        self.effects = [e for e in self.effects if e.entity.name != entity.name]
        if not self.effects:
            self._release_shared()

    def rebuild(self, entity: EntityRef, component) -> None:
        # Nothing is sized by a component field; a detach would also drop the entity's other
        # effects (one entity may hold edge_detect, bloom and tonemap).
        pass

    def targets_changed(self) -> None:
        """New render targets (a resize, a new background): the shared images are made again at
        the new size, and every effect's passes bind the new scene image."""
        self._release_shared()
        for effect in self.effects:
            self._make_passes(effect)

    def _release_shared(self) -> None:
        self.resources.release(SHARED_OWNER, SHARED_FAMILY)

    # per frame ---------------------------------------------------------------------------------
    def before_step(self, step: StepInfo) -> None:
        for effect in self.effects:
            self._write_settings(effect)

    def _write_settings(self, effect: _Effect) -> None:
        """The effect's uniforms, rewritten only after a live edit changed them."""
        data = settings_of(effect.component)
        if data != effect.written:
            for view, record in zip(effect.settings, data):
                self.resources.write(view, record)
            effect.written = data

    def passes(self) -> list[Pass]:
        out: list[Pass] = []
        for position, effect in enumerate(self.effects):
            out += effect.passes[position % 2]
        return out

    def presented_image(self) -> str | None:
        """The chain's last target: effect k writes the scratch image when k is even."""
        return CHAIN[len(self.effects) % 2] if self.effects else None

    # making the passes -------------------------------------------------------------------------
    def _shared_image(self, key: str, size: tuple[int, int], *,
                      persistent: bool) -> TextureResource:
        """The shared image ``post/<key>`` (made on first use after each new target size)."""
        item = self.resources.get(f"{SHARED_OWNER}/{key}")
        if isinstance(item, TextureResource):
            return item
        usage = (wgpu.TextureUsage.STORAGE_BINDING | wgpu.TextureUsage.TEXTURE_BINDING
                 | wgpu.TextureUsage.COPY_SRC)
        return self.resources.texture(SHARED_OWNER, key, size=size, format=HDR, usage=usage,
                                      persistent=persistent, family=SHARED_FAMILY)

    def _make_passes(self, effect: _Effect) -> None:
        """The effect's passes for both places it may take in the chain, on the current scene
        image."""
        scene = self.resources[SCENE_IMAGE]
        assert isinstance(scene, TextureResource)
        w, h = scene.texture.size[:2]
        # every chain step declares the scratch image read (chain_step), so it counts as
        # holding contents from the start of the frame
        scratch = self._shared_image("scratch", (w, h), persistent=True)
        full = (math.ceil(w / GROUP[0]), math.ceil(h / GROUP[1]), 1)
        name = f"{effect.entity.name}:post:{effect.key}"
        compute, settings = self.build.compute, effect.settings
        places = ((scene, scratch), (scratch, scene))
        if effect.key != "bloom":
            shader = f"post/{effect.key}.wgsl"
            lists = [[compute(name, Phase.POST, shader, full,
                              {"settings": settings[0], "source": source,
                               "output_image": target}, does=EFFECT_DOES[effect.key])]
                     for source, target in places]
        else:
            half_size = (max(1, w // 2), max(1, h // 2))
            half = (math.ceil(half_size[0] / GROUP[0]), math.ceil(half_size[1] / GROUP[1]), 1)
            # written in the frame before they are read: the frame graph checks that
            a = self._shared_image("bloom_a", half_size, persistent=False)
            b = self._shared_image("bloom_b", half_size, persistent=False)
            blur = "post/bloom_blur.wgsl"
            blur_x = compute(f"{name}_blur_x", Phase.POST, blur, half,
                             {"settings": settings[0], "source": a, "output_image": b},
                             does="the bright part blurred horizontally (Gaussian, half size)")
            blur_y = compute(f"{name}_blur_y", Phase.POST, blur, half,
                             {"settings": settings[1], "source": b, "output_image": a},
                             does="the bright part blurred vertically (Gaussian, half size)")
            lists = [[compute(f"{name}_extract", Phase.POST, "post/bloom_extract.wgsl", half,
                              {"settings": settings[0], "source": source, "output_image": a},
                              does="the image's bright part above the threshold, at half size"),
                      blur_x, blur_y,
                      compute(f"{name}_combine", Phase.POST, "post/bloom_combine.wgsl", full,
                              {"settings": settings[0], "source": source, "bloom": a,
                               "linear_sampler": self._sampler, "output_image": target},
                              does="adds the blurred bright part to the image")]
                     for source, target in places]
        first, second = ([chain_step(p) for p in passes] for passes in lists)
        effect.passes = (first, second)


# what each effect's single pass does (bloom's four passes say it themselves)
EFFECT_DOES = {"edge_detect": "Sobel edges of the luminance, over or instead of the image",
               "tonemap": "linear HDR colour into [0, 1] (exposure, ACES or Reinhard, gamma)"}

for _key in ("edge_detect", "bloom", "tonemap"):
    set_system(_key, PostSystem)
