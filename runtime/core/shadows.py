"""Shadows from the scene's directional light: the shadow map, the light's orthographic box, and
what caster and receiver passes bind.

The shadow map is a depth-only image (resource ``shadow/map``, render target ``shadow``) drawn in
the RENDER phase before the scene: each caster family adds a draw of its geometry seen from the
light (``caster_draw``: shader ``<family>/shadow.wgsl``, target ``shadow``, order SHADOW_ORDER),
which writes ``shadow/map``, and each lit draw that receives binds ``shadow_map`` and
``shadow_sampler`` (``receiver_bindings``) and so reads ``shadow/map``: the frame graph orders
every receiver after every caster. A frame that draws into a map clears it with its first draw;
one that does not clears it only when an earlier frame left casters in it (``ShadowMap.clears``),
so a scene with no casting particles begins no pass for the opacity layers.

The light's box (``light_box``) is orthographic along the light: its x and y span the casters'
bounding spheres seen from the light (a shadow falls along the light, so it never leaves that
footprint), its depth spans them from the one nearest the light to the farthest. A receiver
outside the box in x or y is lit; one beyond the far side compares as far as the far side
(common/shadow.wgsl). The box's centre snaps to whole texels and its size to steps of an
eighth of an octave, so a moving caster does not make still shadow edges shimmer.
``shadow_extent`` replaces the fitted half-size.

Casters are what systems report from ``System.shadow_casters()``: bounding spheres (centre,
radius) in world units. Closed solids draw their back faces into the map (cull front), so a
solid's lit side never compares against itself; two-sided cloth draws both faces.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, RenderQueue, RenderTarget
from emberfx.core.pipelines import RenderKey, render_pipeline
from emberfx.core.point_lights import light_bindings

SHADOW_TARGET = "shadow"          # the render target name of the shadow map's draws
SHADOW_MAP = "shadow/map"         # its registry name: what casters write and receivers read
SHADOW_FORMAT = "depth32float"
OPACITY_TARGET = "shadow_opacity"   # the particles' opacity layers (emitter/opacity.wgsl)
OPACITY_MAP = "shadow/opacity"
OPACITY_FORMAT = "rgba16float"      # one channel per layer: four slabs of the box's depth
OPACITY_SCALE = wgsl.int_constant("common/shadow.wgsl", "SHADOW_OPACITY_SCALE")   # coarser
TARGETS = (SHADOW_TARGET, OPACITY_TARGET)   # cleared each frame, drawn or not
SHADOW_ORDER = RenderQueue.BACKGROUND - 100   # before anything that may read the map
SIZE_STEP = 2.0 ** (1.0 / 8.0)    # the box's half-size is a whole power of this
OFF_RESOLUTION = 16               # the map's size while shadows are off (casters still draw)
MARGIN_TEXELS = 2.0               # texels of room around the casters, beyond the PCF kernel
CLEAR = (0.0, 0.0, 0.0, 0.0)      # no depth drawn, no opacity

_SAMPLERS: dict[int, wgpu.GPUSampler] = {}


def comparison_sampler(device) -> wgpu.GPUSampler:
    """The one comparison sampler of the receivers (bilinear PCF: each lookup blends the 2 x 2
    comparisons around it), made once per device."""
    sampler = _SAMPLERS.get(id(device))
    if sampler is None:
        sampler = _SAMPLERS[id(device)] = device.create_sampler(
            label="shadow", mag_filter="linear", min_filter="linear", compare="less-equal",
            address_mode_u="clamp-to-edge", address_mode_v="clamp-to-edge")
    return sampler


def receiver_bindings(device) -> dict:
    """What a receiving draw binds besides its own: the map, the comparison sampler, the
    particles' opacity layers and the point lights of its pixel's tile (core/point_lights.py)."""
    return {"shadow_map": SHADOW_MAP, "shadow_sampler": comparison_sampler(device),
            "shadow_opacity": OPACITY_MAP, **light_bindings()}


def caster_pipeline(device, shader: str, *, closed: bool) -> wgpu.GPURenderPipeline:
    """The depth-only pipeline of ``shader`` into the shadow map: back faces of a ``closed``
    solid (counter-clockwise outside), both faces otherwise."""
    return render_pipeline(device, RenderKey(
        shader, (), depth_format=SHADOW_FORMAT, depth_write=True, depth_compare="less",
        cull_mode="front" if closed else "none", label=f"{shader}:shadow"))


def caster_draw(build, name: str, shader: str, bindings, *, closed: bool, **draw) -> Pass:
    """A draw of a caster's geometry into the shadow map (``build``: a PassBuilder;
    ``draw``: its draw arguments, e.g. index, indirect, pick)."""
    pipeline = caster_pipeline(build.gpu.device, shader, closed=closed)
    made = build.draw(name, shader, pipeline, bindings, target=SHADOW_TARGET,
                      order=SHADOW_ORDER, **draw)
    return replace(made, writes=(*made.writes, SHADOW_MAP))


class ShadowMap:
    """The depth map's texture (registered as ``shadow/map``) at one resolution, the opacity
    layers' (``shadow/opacity``) OPACITY_SCALE times coarser, and their render targets by name."""

    def __init__(self, device, resources, resolution: int):
        self.resolution = resolution
        usage = wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.TEXTURE_BINDING
        self.texture = device.create_texture(
            label=SHADOW_MAP, size=(resolution, resolution, 1), format=SHADOW_FORMAT,
            usage=usage)
        coarse = max(1, resolution // OPACITY_SCALE)
        self.opacity = device.create_texture(
            label=OPACITY_MAP, size=(coarse, coarse, 1), format=OPACITY_FORMAT, usage=usage)
        resources.adopt(SHADOW_MAP, self.texture)
        resources.adopt(OPACITY_MAP, self.opacity)
        # whether each target may hold something other than its clear value (a new depth
        # texture holds zeros: everything in front of it; new opacity layers hold none)
        self.holding = {SHADOW_TARGET: True, OPACITY_TARGET: False}
        self.targets = {
            SHADOW_TARGET: RenderTarget(None, CLEAR, self.texture.create_view(),
                                        depth_format=SHADOW_FORMAT),
            OPACITY_TARGET: RenderTarget(self.opacity.create_view(), CLEAR,
                                         color_format=OPACITY_FORMAT)}

    def clears(self, drawn: frozenset[str]) -> tuple[str, ...]:
        """The targets a frame drawing into ``drawn`` must clear with a pass of their own: the
        ones it does not draw into (a target drawn into is cleared by its first draw) that may
        hold an earlier frame's casters. Called once per frame that renders."""
        found = tuple(t for t in TARGETS if t not in drawn and self.holding[t])
        for target in TARGETS:
            self.holding[target] = target in drawn
        return found

    def destroy(self) -> None:
        self.texture.destroy()
        self.opacity.destroy()


def light_basis(direction) -> np.ndarray:
    """(3, 3) rows: the light's right, up and forward (away from the light) world axes."""
    forward = -np.asarray(direction, np.float64)
    forward /= np.linalg.norm(forward)
    hint = np.array([0.0, 1.0, 0.0]) if abs(forward[1]) < 0.99 else np.array([1.0, 0.0, 0.0])
    right = np.cross(forward, hint)   # as a camera looking along ``forward`` sees it
    right /= np.linalg.norm(right)
    return np.stack([right, np.cross(right, forward), forward])


def light_box(direction, casters, resolution: int, softness: float,
              extent: float | None = None) -> tuple[np.ndarray, float] | None:
    """The light's view-projection (4 x 4, world -> clip, column vectors, depth 0 at the near
    side) for ``casters`` [(centre, radius), ...], and the world size of one texel; None when
    nothing casts."""
    if not casters:
        return None
    basis = light_basis(direction)
    centres = np.array([c for c, _ in casters], np.float64) @ basis.T   # light space
    radii = np.array([r for _, r in casters], np.float64)[:, None]
    low, high = (centres - radii).min(0), (centres + radii).max(0)
    middle = 0.5 * (low + high)
    if extent is None:
        half = 0.5 * float(np.max(high[:2] - low[:2]))
        half *= 1.0 + 2.0 * (MARGIN_TEXELS + softness) / resolution
        half = SIZE_STEP ** math.ceil(math.log(max(half, 1e-6), SIZE_STEP))
    else:
        half = float(extent)
        low[2], high[2] = min(low[2], middle[2] - half), max(high[2], middle[2] + half)
    texel = 2.0 * half / resolution
    middle[:2] = np.round(middle[:2] / texel) * texel
    near, far = low[2] - texel, high[2] + texel
    projection = np.diag([1.0 / half, 1.0 / half, 1.0 / (far - near), 1.0])
    projection[:2, 3] = -middle[:2] / half
    projection[2, 3] = -near / (far - near)
    view = np.eye(4)
    view[:3, :3] = basis
    return projection @ view, texel


_NO_BOX = np.eye(4)
_NO_BOX.flags.writeable = False   # the light_view_proj of a frame where nothing casts


def map_resolution(light) -> int:
    """The shadow map's size for the scene's ``light``."""
    return light.shadow_resolution if light.shadows else OFF_RESOLUTION


def frame_fields(light, casters, resolution: int) -> tuple[np.ndarray, tuple]:
    """common/frame.wgsl's light_view_proj (as WGSL stores it: column-major) and shadow fields
    for ``light`` and the casters' bounding spheres."""
    box = light_box(light.unit_direction(), casters, resolution, light.softness,
                    light.shadow_extent) if light.shadows and casters else None
    if box is None:
        return _NO_BOX, (0.0, 0.0, 1.0 / resolution, 0.0)
    matrix, texel = box
    return matrix.T, (1.0, float(light.softness), 1.0 / resolution, texel)
