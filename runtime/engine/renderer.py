"""The Engine's renderer: its render targets, the frame graph built from the systems' passes,
the frame uniform, and the present pass that turns the HDR scene target into the output format.

Simulation and drawing are separate submissions: the Engine's ``step`` encodes the simulation
phases of the graph built here; ``draw`` encodes RENDER and POST for the current state.
"""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.bindings import RENDER, PassBuilder, pipeline_layout
from emberfx.core.bundles import BundleCache
from emberfx.core.frame_graph import DRAWING_PHASES, FrameGraph, Pass, Phase, RenderTarget
from emberfx.core.layout import struct_dtype
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
    present pipelines and the draws recorded once as render bundles and replayed."""

    def __init__(self, device, shared: SharedResources, background, world, telemetry):
        self.device = device
        self.shared = shared
        self.background = background   # linear RGBA the scene target is cleared to
        self.world = world
        self.telemetry = telemetry
        self.bundles: BundleCache | None = BundleCache(device)   # None: draws encoded directly
        self._graphs: dict[str, FrameGraph] = {}
        self._stale_graphs: dict[str, FrameGraph] = {}   # replaced ones, to reuse their order
        self._build = PassBuilder(shared.resources.gpu, shared.resources)
        self._present_pipelines: dict[str, wgpu.GPURenderPipeline] = {}   # by output format
        self._present: dict[str, Pass] = {}   # by output format; they bind the scene target
        self._frame_record = np.zeros((), FRAME)
        self._frame_key: tuple | None = None
        self.size = (0, 0)
        self.scene_texture: wgpu.GPUTexture | None = None
        self.depth_texture: wgpu.GPUTexture | None = None
        self.output_texture: wgpu.GPUTexture | None = None

    def make_targets(self, size: tuple[int, int]) -> None:
        """Render targets of ``size`` (at start, and when the size or background changed)."""
        if self.bundles is not None:
            self.bundles.clear()   # they hold bind groups of the old targets
        self.size = size
        w, h = size
        usage = (wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING
                 | wgpu.TextureUsage.COPY_DST | wgpu.TextureUsage.STORAGE_BINDING)
        shared = self.shared
        self.scene_texture = self.device.create_texture(
            label="scene/color", size=(w, h, 1), format=shared.scene_format, usage=usage)
        shared.resources.adopt("scene/color", self.scene_texture)
        # particles collide with what was drawn: emitters bind "scene/depth" as a texture
        self.depth_texture = self.device.create_texture(
            label="scene/depth", size=(w, h, 1), format=shared.depth_format,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING)
        shared.resources.adopt("scene/depth", self.depth_texture)
        shared.drawn_view = None   # nothing drawn into the new target yet
        self.output_texture = self.device.create_texture(
            label="output", size=(w, h, 1), format=OUTPUT_FORMAT,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        self._scene_target = RenderTarget(self.scene_texture.create_view(), self.background,
                                          self.depth_texture.create_view(),
                                          shared.scene_format, shared.depth_format)
        self._present.clear()
        for system in self.world.system_objects():   # those binding "scene/color" bind the new one
            system.targets_changed()
        self.invalidate_graphs()

    # the frame graph ---------------------------------------------------------------------------
    def invalidate_graphs(self) -> None:
        """Ask the systems for their passes again before the next encode."""
        self._stale_graphs.update(self._graphs)
        self._graphs.clear()

    def graph(self, output_format: str) -> FrameGraph:
        graph = self._graphs.get(output_format)
        if graph is None:
            systems = self.world.system_objects()
            passes = [p for s in systems for p in s.passes()]
            passes += self.telemetry.readback_passes()
            passes.append(self._present_pass(output_format))
            # the frame uniform, the cleared scene target, and every persistent resource
            # "scene/depth" holds what the last render drew (particles' depth collisions)
            uploaded = ({"frame", "scene/color", "scene/depth"}
                        | self.shared.resources.persistent())
            graph = FrameGraph(passes, uploaded, previous=self._stale_graphs.get(output_format))
            self._graphs[output_format] = graph
        return graph

    def _present_pass(self, output_format: str) -> Pass:
        """The draw of the scene target into the output (frame/present.wgsl); its pipeline is
        kept per output format, its binding of "scene/color" until new targets are made."""
        present = self._present.get(output_format)
        if present is None:
            shader = "frame/present.wgsl"
            pipeline = self._present_pipelines.get(output_format)
            if pipeline is None:
                module = wgsl.create_module(self.device, shader)
                pipeline = self._present_pipelines[output_format] = (
                    self.device.create_render_pipeline(
                        label=f"scene:frame:present:{output_format}",
                        layout=pipeline_layout(self.device, shader, RENDER),
                        vertex={"module": module, "entry_point": "vs_main"},
                        primitive={"topology": "triangle-list"},
                        fragment={"module": module, "entry_point": "fs_main",
                                  "constants": {"ENCODE_SRGB": not output_format.endswith("-srgb")},
                                  "targets": [{"format": output_format}]}))
            present = self._present[output_format] = self._build.draw(
                "scene:frame:present", shader, pipeline, {"scene": "scene/color"},
                target="output", phase=Phase.POST, vertices=3)
        return present

    # drawing -----------------------------------------------------------------------------------
    def write_frame_uniform(self, camera, clock, light: Light | None = None) -> None:
        # The camera and light part is recomputed only when they or the size changed (most
        # frames only the clock moves); the record is kept and rewritten whole.
        light = light if light is not None else Light()
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
        self._frame_record["time"] = clock.time
        self._frame_record["frame"] = clock.steps
        self.device.queue.write_buffer(self.shared.frame_uniform, 0,
                                       self._frame_record.tobytes())

    def draw(self, texture, camera, clock, light: Light | None = None) -> None:
        """Render the current state into ``texture``, whose size is the targets' size, lit by
        ``light`` (the scene's [light]; None: the default)."""
        self.write_frame_uniform(camera, clock, light)
        encoder = self.device.create_command_encoder(label="emberfx:draw")
        self.encode(encoder, texture, DRAWING_PHASES)
        self.device.queue.submit([encoder.finish()])
        self.telemetry.submitted()

    def encode(self, encoder, texture, phases=None) -> None:
        if phases is None or Phase.RENDER in phases:
            for system in self.world.system_objects():
                system.before_draw()
        targets = {"scene": self._scene_target,
                   "output": RenderTarget(texture.create_view(), (0.0, 0.0, 0.0, 1.0),
                                          color_format=texture.format)}
        self.graph(texture.format).encode(encoder, targets, phases=phases,
                                          clear_targets=("scene",),
                                          profiler=self.telemetry.profiler,
                                          bundles=self.bundles)
        if phases is None or Phase.RENDER in phases:   # the depth target now holds this view
            self.shared.drawn_view = (self._frame_record["view_proj"].T.copy(), self.size)

    def read_output(self) -> np.ndarray:
        """The output texture as an (h, w, 4) uint8 array (a blocking read)."""
        w, h = self.size
        data = self.device.queue.read_texture(
            {"texture": self.output_texture, "origin": (0, 0, 0), "mip_level": 0},
            {"offset": 0, "bytes_per_row": w * 4, "rows_per_image": h}, (w, h, 1))
        return np.frombuffer(data, np.uint8).reshape(h, w, 4).copy()

    def release(self) -> None:
        """The targets, the frame uniform and the cached pipelines and draws go now, not when
        the caller drops its last reference to the Engine."""
        if self.bundles is not None:
            self.bundles.clear()
        self._present.clear()
        self._present_pipelines.clear()
        self._graphs.clear()
        self._stale_graphs.clear()
        for resource in (self.scene_texture, self.depth_texture, self.output_texture,
                         self.shared.frame_uniform):
            if resource is not None:
                resource.destroy()
