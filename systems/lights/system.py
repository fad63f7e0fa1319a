"""The point-light system: the scene's ``[entity.point_light]`` lights at the start of the
renderer's light list (runtime/core/point_lights.py).

Their records (common/point_lights.wgsl PointLight) are packed on the host whenever a light is
added, removed or edited, written to the system's own buffer ``lights/scene`` and their count to
``lights/count``'s ``scene`` word; each render the pass ``scene:lights:upload`` copies the
records to the start of ``lights/list`` (its write of the list is what makes the renderer cull
the lights into tiles). At most LIGHT_CAPACITY lights: the first ones in scene order.
"""

from __future__ import annotations

import numpy as np
import wgpu

from emberfx.core.frame_graph import CopyBuffer, Pass, Phase
from emberfx.core.point_lights import (
    COUNTS,
    LIGHT_CAPACITY,
    LIGHT_ORDER,
    LIGHTS,
    POINT_LIGHT,
    pack_lights,
)
from emberfx.core.system import EntityRef, System
from emberfx.model.colors import linear_color
from emberfx.model.registry import set_system
from emberfx.systems.lights.component import PointLight

SCENE_LIGHTS = "lights/scene"   # the scene lights' records, copied into lights/list


class PointLightSystem(System):
    key = "point_light"

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.lights: dict[str, tuple[EntityRef, PointLight]] = {}
        self.records = self.device.create_buffer(
            label=SCENE_LIGHTS, size=LIGHT_CAPACITY * POINT_LIGHT.itemsize,
            usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
            | wgpu.BufferUsage.COPY_DST)
        self.resources.adopt(SCENE_LIGHTS, self.records)
        self.dirty = True
        self._pass: tuple[int, Pass] | None = None

    def add(self, entity: EntityRef, component: PointLight) -> None:
        self.lights[entity.name] = (entity, component)
        self.dirty = True

    def remove(self, entity: EntityRef) -> None:
        self.lights.pop(entity.name, None)
        self.dirty = True
        if not self.lights and COUNTS in self.resources:
            # the list's scene part is empty now, even if this system never draws again (the
            # world released); the emitters' lights start at 0
            self.resources.write(COUNTS, bytes(4))

    def edited(self, entity: EntityRef, component: PointLight) -> None:
        self.lights[entity.name] = (entity, component)
        self.dirty = True

    def shown(self) -> list[PointLight]:
        """The lights in the list, in scene order."""
        ordered = sorted(self.lights.values(), key=lambda item: item[0].index)
        return [c for _, c in ordered][:LIGHT_CAPACITY]

    def passes(self) -> list[Pass]:
        count = len(self.shown())
        if count == 0:
            return []
        if self._pass is None or self._pass[0] != count:
            size = count * POINT_LIGHT.itemsize
            copy = Pass("scene:lights:upload", Phase.RENDER,
                        CopyBuffer(self.records, self.resources.buffer_view(LIGHTS).buffer, size),
                        reads=(SCENE_LIGHTS,), writes=(LIGHTS,), order=LIGHT_ORDER,
                        does=f"the scene's {count} point light{'s' if count > 1 else ''} to the "
                             f"start of {LIGHTS}")
            self._pass = (count, copy)
        return [self._pass[1]]

    def before_draw(self) -> None:
        if not self.dirty:
            return
        self.dirty = False
        shown = self.shown()
        if shown:
            data = pack_lights(np.array([c.position for c in shown], np.float64),
                               np.array([linear_color(c.color)[:3] for c in shown]),
                               np.array([c.intensity for c in shown], np.float64),
                               np.array([c.range for c in shown], np.float64))
            self.resources.write(SCENE_LIGHTS, data)
        self.resources.write(COUNTS, np.array([len(shown)], np.uint32).tobytes())

    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        _, c = self.lights[entity.name]
        return {"position": np.array(c.position, np.float32),
                "color": np.array(linear_color(c.color)[:3], np.float32) * c.intensity,
                "range": np.array(c.range, np.float32)}


set_system("point_light", PointLightSystem)
