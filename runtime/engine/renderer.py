"""The Engine's renderer: its render targets, the frame graph built from the systems' passes,
the frame uniform, and the present pass that turns the frame's final HDR image into the output
format. That image is the scene target, or the one a system names (``presented_image``: post
effects alternate between the scene target and a scratch image, and no copy brings the result
back).

The Engine's ``step`` encodes the simulation phases of the graph built here; ``draw`` encodes
RENDER and POST for the current state, into a new encoder or into the one a step left open for
it (``Engine.frame()``, core/submission.py), and submits.

Solid geometry (meshes, cloth, colliders, Life and fractal quads) draws into the geometry target
(frame_graph.GEOMETRY_TARGET). With ``[render] msaa = 4`` that is a multisampled colour and depth
pair, "geometry/color" and "geometry/depth": each of its render passes resolves the colour into
"scene/color" as it ends, and the pass ``scene:frame:depth_resolve`` (frame/depth_resolve.wgsl)
writes the nearest of each pixel's depth samples into "scene/depth", which WebGPU cannot resolve.
Sprites then draw into the single-sampled scene target at one sample per pixel, tested against
that depth; post effects read and write "scene/color" as a storage texture, which a multisampled
texture cannot be. With ``msaa = 1`` the geometry target is the scene's own textures and there is
no resolve. Whichever target the frame's first draw goes into is cleared to the background: the
geometry target when something draws into it, else the scene target.

A transparent draw (``transparent=True``, for compositing) clears the scene target to (0, 0, 0, 0)
instead of the background and presents with TRANSPARENT set (frame/present.wgsl): it derives a
straight alpha for the PNG, so additive light becomes premultiplied colour over that alpha. It
has a frame graph of its own (the present pipeline differs), keyed by (format, transparent).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import wgpu

from emberfx.core.bindings import PassBuilder
from emberfx.core.bundles import BundleCache
from emberfx.core.errors import DeviceLimitError
from emberfx.core.events import TARGETS_CHANGED
from emberfx.core.frame_graph import (
    DRAWING_PHASES,
    GEOMETRY_TARGET,
    SCENE_TARGET,
    Draw,
    FrameGraph,
    Pass,
    Phase,
    RenderQueue,
    RenderTarget,
)
from emberfx.core.layout import struct_dtype
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.point_lights import PointLightBuffers
from emberfx.core.readback import read_texture
from emberfx.core.shadows import TARGETS, ShadowMap, frame_fields, map_resolution
from emberfx.core.system import SharedResources, snapshot
from emberfx.model.light import Light

FRAME = struct_dtype("common/frame.wgsl", "Frame")
OUTPUT_FORMAT = "rgba8unorm-srgb"   # what render() returns: sRGB-encoded RGBA bytes


def frame_uniform_buffer(device) -> wgpu.GPUBuffer:
    """The buffer of common/frame.wgsl's Frame, which every system may bind."""
    return device.create_buffer(label="frame", size=FRAME.itemsize,
                                usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)


class Renderer:
    """Targets, frame graphs (one per output format, rebuilt lazily when invalidated), the
    present passes and the draws recorded once as render bundles and replayed."""

    def __init__(self, device, shared: SharedResources, background, world, telemetry,
                 light: Light | None = None):
        self.device = device
        self.shared = shared
        self.background = background   # linear RGBA the scene target is cleared to
        self.world = world
        self.telemetry = telemetry
        self.bundles: BundleCache | None = BundleCache(device)   # None: draws encoded directly
        # by (output format, transparent)
        self._graphs: dict[tuple[str, bool], FrameGraph] = {}
        self._stale_graphs: dict[tuple[str, bool], FrameGraph] = {}   # replaced: reuse order
        self._build = PassBuilder(shared.resources.gpu, shared.resources)
        # by (output format, transparent, image): the bound image's resource and the pass
        self._present: dict[tuple[str, bool, str], tuple[object, Pass]] = {}
        self._depth_resolve: tuple[object, Pass] | None = None   # by the geometry depth it reads
        # by (output format, transparent): the target its graph's first draw clears
        self._cleared: dict[tuple[str, bool], str] = {}
        self._frame_record = np.zeros((), FRAME)
        self._frame_key: tuple | None = None
        self._drawn_for: tuple | None = None   # the _frame_key shared.drawn_view was made for
        self._output: tuple[object, RenderTarget] | None = None   # the last output texture's
        self.size = (0, 0)
        self.scene_texture: wgpu.GPUTexture | None = None
        self.depth_texture: wgpu.GPUTexture | None = None
        self.output_texture: wgpu.GPUTexture | None = None
        self._multisampled: tuple[wgpu.GPUTexture, wgpu.GPUTexture] | None = None
        # by (target name, clear colour or None to load): made with the textures
        self._targets: dict[tuple[str, tuple | None], RenderTarget] = {}
        self.shadow_map: ShadowMap | None = None   # the directional light's (core/shadows.py)
        # the size make_targets makes the shadow map at: the scene's [light], then its edits
        # the light of a scene without [light] (never handed out)
        self._default_light = Light()
        self.shadow_resolution = map_resolution(light or self._default_light)
        # off: the graphs leave the casters' draws out
        self.shadows = (light or self._default_light).shadows
        # the point lights' list, counts and tiles (core/point_lights.py)
        self.point_lights = PointLightBuffers(shared.resources.gpu, shared.resources)

    @property
    def sample_count(self) -> int:
        """Samples per pixel of the geometry target (the scene's [render] msaa)."""
        return self.shared.sample_count

    def set_sample_count(self, count: int) -> None:
        """Use ``count`` samples for the geometry target from now on (its targets are made
        again when it changed; the systems' pipelines must be made again by their owner)."""
        if count != self.shared.sample_count:
            self.shared.sample_count = count
            self.make_targets(self.size)

    def make_targets(self, size: tuple[int, int]) -> None:
        """Render targets of ``size`` (at start, and when the size or background changed)."""
        self.shared.resources.submit_held()   # a held step may bind the targets destroyed here
        if self.bundles is not None:
            self.bundles.clear()   # they hold bind groups of the old targets
        self._output = None
        self.size = size
        w, h = size
        # COPY_SRC: the HDR (EXR) and depth captures read these targets back
        usage = (wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING
                 | wgpu.TextureUsage.COPY_DST | wgpu.TextureUsage.STORAGE_BINDING
                 | wgpu.TextureUsage.COPY_SRC)
        shared = self.shared
        self.scene_texture = self.device.create_texture(
            label="scene/color", size=(w, h, 1), format=shared.scene_format, usage=usage)
        shared.resources.adopt("scene/color", self.scene_texture)
        # particles collide with what was drawn: emitters bind "scene/depth" as a texture
        self.depth_texture = self.device.create_texture(
            label="scene/depth", size=(w, h, 1), format=shared.depth_format,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING
            | wgpu.TextureUsage.COPY_SRC)
        shared.resources.adopt("scene/depth", self.depth_texture)
        shared.drawn_view = None   # nothing drawn into the new target yet
        if self.shadow_map is None or self.shadow_map.resolution != self.shadow_resolution:
            if self.shadow_map is not None:
                self.shadow_map.destroy()
            self.shadow_map = ShadowMap(self.device, shared.resources, self.shadow_resolution)
        self.point_lights.make_tiles(size)
        self.output_texture = self.device.create_texture(
            label="output", size=(w, h, 1), format=OUTPUT_FORMAT,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        self._make_geometry_targets(w, h, self.scene_texture, self.depth_texture)
        self._present.clear()
        # the systems binding "scene/color" or "scene/depth" bind the new ones
        self.shared.events.dispatch_event(TARGETS_CHANGED)
        self.invalidate_graphs()

    def _make_geometry_targets(self, w: int, h: int, scene: wgpu.GPUTexture,
                               depth: wgpu.GPUTexture) -> None:
        """The multisampled geometry textures (with msaa > 1) and every RenderTarget over them
        and the scene's ``scene`` and ``depth`` textures: scene and geometry, each cleared to
        the background, to transparent black, or loaded."""
        shared = self.shared
        for texture in self._multisampled or ():
            shared.resources.take(texture.label)   # gone with msaa = 1
            texture.destroy()
        self._multisampled = None
        scene_view, depth_view = scene.create_view(), depth.create_view()
        geometry = (scene_view, depth_view, None)
        if shared.sample_count > 1:
            attachment = wgpu.TextureUsage.RENDER_ATTACHMENT
            try:
                color_samples = self.device.create_texture(
                    label="geometry/color", size=(w, h, 1), format=shared.scene_format,
                    usage=attachment, sample_count=shared.sample_count)
                # TEXTURE_BINDING: frame/depth_resolve.wgsl reads its samples
                depth_samples = self.device.create_texture(
                    label="geometry/depth", size=(w, h, 1), format=shared.depth_format,
                    usage=attachment | wgpu.TextureUsage.TEXTURE_BINDING,
                    sample_count=shared.sample_count)
            except wgpu.GPUError as exc:   # (out of memory: a validation error on wgpu-native)
                reason = str(exc).strip().splitlines()[-1].strip()
                raise DeviceLimitError(
                    f"the {shared.sample_count}x anti-aliased image at {w}x{h} does not fit "
                    f"this device ({reason}): a smaller size, or [render] msaa = 1") from None
            # frame resources: the geometry draws write them before the resolve reads them
            shared.resources.adopt("geometry/color", color_samples, persistent=False)
            shared.resources.adopt("geometry/depth", depth_samples, persistent=False)
            self._multisampled = (color_samples, depth_samples)
            geometry = (color_samples.create_view(), depth_samples.create_view(), scene_view)
        formats = (shared.scene_format, shared.depth_format)
        self._targets = {}
        for clear in (self.background, (0.0, 0.0, 0.0, 0.0), None):
            key = None if clear is None else tuple(clear)
            self._targets[SCENE_TARGET, key] = RenderTarget(scene_view, clear, depth_view,
                                                            *formats)
            self._targets[GEOMETRY_TARGET, key] = RenderTarget(
                geometry[0], clear, geometry[1], *formats, sample_count=shared.sample_count,
                resolve_view=geometry[2])

    # the frame graph ---------------------------------------------------------------------------
    def invalidate_graphs(self) -> None:
        """Ask the systems for their passes again before the next encode."""
        self._stale_graphs.update(self._graphs)
        self._graphs.clear()

    def graph(self, output_format: str, transparent: bool = False) -> FrameGraph:
        key = (output_format, transparent)
        graph = self._graphs.get(key)
        if graph is None:
            systems = self.world.system_objects()
            passes = [p for s in systems for p in s.passes()]
            if not self.shadows:   # nothing looks the maps up: their draws would be wasted
                passes = [p for p in passes if getattr(p.op, "target", None) not in TARGETS]
            if self.point_lights.lit(passes):   # the lights' reset first, their cull after
                reset, cull = self.point_lights.passes()
                passes = [reset, *passes, cull]
            else:
                self.point_lights.empty_tiles()
            geometry = any(isinstance(p.op, Draw) and p.op.target == GEOMETRY_TARGET
                           for p in passes)
            if geometry and self.sample_count > 1:
                passes.append(self._depth_resolve_pass())
            self._cleared[key] = GEOMETRY_TARGET if geometry else SCENE_TARGET
            drawn = frozenset(w for p in passes if p.phase in DRAWING_PHASES for w in p.writes)
            passes += self.telemetry.readback_passes(drawn)
            image = next((i for s in reversed(systems) if (i := s.presented_image()) is not None),
                         "scene/color")
            passes.append(self._present_pass(output_format, transparent, image))
            # the frame uniform, the cleared scene target, and every persistent resource
            # "scene/depth" holds what the last render drew (particles' depth collisions); the
            # geometry depth is cleared by its first draw, and a pass that must follow every
            # geometry draw (the water surface's depth) reads it where none draws
            uploaded = ({"frame", "scene/color", "scene/depth", f"{GEOMETRY_TARGET}/depth"}
                        | self.shared.resources.persistent())
            graph = FrameGraph(passes, uploaded, previous=self._stale_graphs.get(key))
            self._graphs[key] = graph
        return graph

    def _depth_resolve_pass(self) -> Pass:
        """The draw writing the nearest depth sample of "geometry/depth" into "scene/depth"
        (frame/depth_resolve.wgsl), after every geometry draw and before every sprite."""
        resource = self.shared.resources["geometry/depth"]
        if self._depth_resolve is not None and self._depth_resolve[0] is resource:
            return self._depth_resolve[1]
        shader, shared = "frame/depth_resolve.wgsl", self.shared
        pipeline = render_pipeline(self.device, RenderKey(
            shader, shared.scene_format, depth_format=shared.depth_format, depth_write=True,
            depth_compare="always", color_writes=False,
            constants={"SAMPLES": shared.sample_count}, label="scene:frame:depth_resolve"))
        draw = self._build.draw("scene:frame:depth_resolve", shader, pipeline,
                                {"geometry_depth": resource}, target=SCENE_TARGET,
                                vertices=3, order=RenderQueue.RESOLVE,
                                does="the nearest of each pixel's geometry depth samples into "
                                     "scene/depth")
        resolve = dataclasses.replace(draw, writes=(*draw.writes, f"{SCENE_TARGET}/depth"))
        self._depth_resolve = (resource, resolve)
        return resolve

    def _present_pass(self, output_format: str, transparent: bool = False,
                      image: str = "scene/color") -> Pass:
        """The draw of the HDR image ``image`` into the output (frame/present.wgsl); its
        pipeline comes from core/pipelines.py by output format and mode, its binding is kept
        while ``image`` names the same texture (new targets, or post effects gone and back, make
        new ones)."""
        resource = self.shared.resources[image]
        cached = self._present.get((output_format, transparent, image))
        if cached is not None and cached[0] is resource:
            return cached[1]
        shader = "frame/present.wgsl"
        constants = {"ENCODE_SRGB": not output_format.endswith("-srgb")}
        if transparent:   # the opaque pipeline keeps the shader's default
            constants["TRANSPARENT"] = True
        pipeline = render_pipeline(self.device, RenderKey(
            shader, output_format, constants=constants,
            label=f"scene:frame:present:{output_format}"))
        present = self._build.draw("scene:frame:present", shader, pipeline,
                                   {"scene": resource}, target="output", phase=Phase.POST,
                                   vertices=3,
                                   does=f"{image} into the output image, sRGB-encoded"
                                        + (", straight alpha" if transparent else ""))
        self._present[(output_format, transparent, image)] = (resource, present)
        return present

    # drawing -----------------------------------------------------------------------------------
    def write_frame_uniform(self, camera, clock, light: Light | None = None) -> None:
        # The camera and light part is recomputed only when they or the size changed (most
        # frames only the clock moves); the record is kept and rewritten whole.
        light = light if light is not None else self._default_light
        key = (snapshot(camera), self.size, snapshot(light))
        if key != self._frame_key:
            self._frame_key = key
            w, h = self.size
            view = camera.view_matrix()
            proj = camera.projection_matrix(w / h)
            rec = self._frame_record
            rec["view_proj"] = (proj @ view).T   # WGSL matrices are column-major
            rec["inverse_view_proj"] = np.linalg.inv(proj @ view).T
            rec["camera_right"] = (*view[0, :3], 0.0)
            rec["camera_up"] = (*view[1, :3], 0.0)
            eye = np.linalg.inv(view)[:3, 3]
            rec["camera_position"] = (*eye, 1.0 if camera.kind == "perspective" else 0.0)
            rec["viewport"] = (w, h)
            rec["light_direction"] = (*light.unit_direction(), 0.0)
            rec["light_color"] = (*light.linear_radiance(), light.ambient)
        # the shadow box follows the casters, which may move every frame
        casters = ([c for s in self.world.system_objects() for c in s.shadow_casters()]
                   if light.shadows else [])
        matrix, shadow = frame_fields(light, casters, self.shadow_resolution)
        self._frame_record["light_view_proj"] = matrix
        self._frame_record["shadow"] = shadow
        self._frame_record["time"] = clock.time
        self._frame_record["frame"] = clock.steps
        self.shared.resources.before_write(self.shared.frame_uniform)
        self.device.queue.write_buffer(self.shared.frame_uniform, 0,
                                       self._frame_record.tobytes())

    def draw(self, texture, camera, clock, light: Light | None = None, *,
             transparent: bool = False, phases=DRAWING_PHASES) -> None:
        """Render the current state into ``texture``, whose size is the targets' size, lit by
        ``light`` (the scene's [light]; None: the default); ``transparent``: for compositing
        (see the module's doc); ``phases``: RENDER alone leaves the scene target as drawn."""
        light = light or self._default_light
        if light.shadows != self.shadows:   # [light] changed
            self.shadows = light.shadows
            self.invalidate_graphs()
        if map_resolution(light) != self.shadow_resolution:
            self.shadow_resolution = map_resolution(light)
            self.make_targets(self.size)
        self.write_frame_uniform(camera, clock, light)
        self._before_draw(phases)
        # a step held for this draw (Engine.frame) has its passes in the encoder already, and
        # maybe its last compute pass open
        held = self.shared.resources.take_held()
        if held is None:
            encoder, compute = self.device.create_command_encoder(label="emberfx:draw"), None
        else:
            encoder, compute = held.encoder, held.compute
        self.encode(encoder, texture, phases, transparent=transparent, prepared=True,
                    compute=compute)
        if held is not None:
            held.record_last()
        self.device.queue.submit([encoder.finish()])
        if held is not None:
            held.submitted()
        self.telemetry.submitted()

    def _before_draw(self, phases) -> None:
        """The systems' writes for drawing (before the encoder: a write may submit a held
        step first)."""
        if phases is None or Phase.RENDER in phases:
            for system in self.world.system_objects():
                system.before_draw()

    def encode(self, encoder, texture, phases=None, *, transparent: bool = False,
               prepared: bool = False, compute=None) -> None:
        """Record the draw into ``encoder``; ``prepared``: the systems' before_draw ran;
        ``compute``: a compute pass of ``encoder`` left open by a held step (ended here)."""
        if not prepared:
            self._before_draw(phases)
        graph = self.graph(texture.format, transparent)
        cleared = self._cleared[(texture.format, transparent)]
        clear = (0.0, 0.0, 0.0, 0.0) if transparent else tuple(self.background)
        targets = {name: self._targets[name, clear if name == cleared else None]
                   for name in (SCENE_TARGET, GEOMETRY_TARGET)}
        targets["output"] = self._output_target(texture)
        assert self.shadow_map is not None
        targets.update(self.shadow_map.targets)
        clears: tuple[str, ...] = (cleared,)
        if phases is None or Phase.RENDER in phases:   # the maps: drawn, or emptied if stale
            clears += self.shadow_map.clears(graph.drawn_targets(phases))
        graph.encode(encoder, targets, phases=phases, clear_targets=clears,
                     profiler=self.telemetry.profiler, bundles=self.bundles, compute=compute)
        if phases is None or Phase.RENDER in phases:   # the depth target now holds this view
            # a new object only when the view changed: emitters repack their collision
            # header when it is another object (emitter/contacts.py)
            if self.shared.drawn_view is None or self._drawn_for is not self._frame_key:
                self.shared.drawn_view = (self._frame_record["view_proj"].T.copy(), self.size)
                self._drawn_for = self._frame_key

    def _output_target(self, texture) -> RenderTarget:
        """The output target of ``texture``, kept while the same texture comes back (the
        offscreen output, a bench's texture); a window's surface gives a new one each frame."""
        if self._output is None or self._output[0] is not texture:
            self._output = (texture, RenderTarget(texture.create_view(), (0.0, 0.0, 0.0, 1.0),
                                                  color_format=texture.format))
        return self._output[1]

    def read_output(self) -> np.ndarray:
        """The output texture as an (h, w, 4) uint8 array (a blocking read)."""
        w, h = self.size
        data = read_texture(self.device, self.output_texture, 4)
        return np.frombuffer(data, np.uint8).reshape(h, w, 4).copy()

    def read_scene(self) -> np.ndarray:
        """The HDR scene target as an (h, w, 4) float16 array, linear RGBA (a blocking read)."""
        w, h = self.size
        data = read_texture(self.device, self.scene_texture, 8)
        return np.frombuffer(data, np.float16).reshape(h, w, 4).copy()

    def read_depth(self) -> np.ndarray:
        """The depth target as an (h, w) float32 array of NDC depth, 1.0 where nothing was
        drawn (a blocking read)."""
        w, h = self.size
        data = read_texture(self.device, self.depth_texture, 4, aspect="depth-only")
        return np.frombuffer(data, np.float32).reshape(h, w).copy()

    def release(self) -> None:
        """The targets, the frame uniform and the cached passes and draws go now, not when
        the caller drops its last reference to the Engine."""
        if self.bundles is not None:
            self.bundles.clear()
        self._present.clear()
        self._depth_resolve = None
        self._output = None
        self._graphs.clear()
        self._stale_graphs.clear()
        for resource in (self.scene_texture, self.depth_texture, self.output_texture,
                         *(self._multisampled or ()), self.shared.frame_uniform,
                         self.shadow_map, self.point_lights):
            if resource is not None:
                resource.destroy()
