"""The trail system: ribbons behind another family's particles, bound by resource name.

A trail names a source entity; its passes bind what that entity's emitter publishes in the
resource registry (``<source>/particles``, ``<source>/alive_list``, ``<source>/draw_args``) by
name, so this module imports nothing of the emitter's: it reads the Particle layout from
shaders/emitter/types.wgsl, as any shader including it does.

  SIMULATE  <t>:trail:sample    every `every` steps: each slot's position into its ring of the
                                last `length` samples; a newly born particle fills its ring
                                (after the emitter's update and spawn: they write the particles)
  PREPARE   <t>:trail:prepare   drawIndirect args: one ribbon per entry of the source's alive list
  RENDER    <t>:trail:draw      camera-facing ribbons, additive, through the alive list

The source's buffers are remade whenever the emitter is rebuilt (a new capacity, a hot reload)
or go when it is deleted. The Engine tells every system ``world_changed`` after spawns,
deletions and rebuilds, before the next frame graph is built; the trail then compares the
``<source>/particles`` the registry holds with the one its passes bind and, when they differ,
makes its ring again for the new pool (or, with no source, has no passes and draws nothing until
an emitter of that name appears again).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.blocks.sprites import sprite_pipeline
from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.readback import read_array
from emberfx.core.resources import BufferView
from emberfx.core.system import EntityRef, StepInfo, System
from emberfx.model.colors import linear_color
from emberfx.model.registry import set_system
from emberfx.systems.trails.component import Trail

PARAMS = struct_dtype("trails/types.wgsl", "TrailParams")
LOOKS = struct_dtype("trails/types.wgsl", "TrailLooks")
TRAIL_SAMPLES = wgsl.int_constant("trails/types.wgsl", "TRAIL_SAMPLES")
PARTICLE = struct_dtype("emitter/types.wgsl", "Particle")   # the source's record, read-only
GROUP = wgsl.workgroup_size("trails/sample.wgsl")[0]
POINT_BYTES = 16   # one vec4f per sample


@dataclass
class _Ring:
    """One trail entity: its component and, while its source exists, the rings and passes."""
    entity: EntityRef
    component: Trail
    source: BufferView | None = None   # the <source>/particles the passes bind
    capacity: int = 0
    buffers: dict[str, BufferView] = field(default_factory=dict)
    passes: list[Pass] = field(default_factory=list)
    head: int = 0                # ring index of the newest sample
    samples: int = 0             # samples taken since the ring was made
    steps_pending: int = 0       # steps since the newest sample
    seconds_pending: float = 0.0
    sampling: bool = False       # this step samples
    looks_key: tuple | None = None
    record: np.ndarray = field(default_factory=lambda: np.zeros((), PARAMS))


class TrailSystem(System):
    key = "trail"

    def __init__(self, gpu, shared):
        super().__init__(gpu, shared)
        self.rings: dict[str, _Ring] = {}

    # lifecycle ---------------------------------------------------------------------------------
    def add(self, entity: EntityRef, component: Trail) -> None:
        ring = _Ring(entity, component)
        self.rings[entity.name] = ring
        try:
            self._bind(ring)
        except Exception:
            del self.rings[entity.name]
            raise

    def remove(self, entity: EntityRef) -> None:
        del self.rings[entity.name]   # the registry releases its buffers

    def world_changed(self) -> None:
        """Entities were spawned, deleted or rebuilt: a trail whose source's particle buffer is
        not the one it binds (remade, or gone) makes its ring again."""
        for ring in self.rings.values():
            if self.resources.get(f"{ring.component.source}/particles") is not ring.source:
                self._bind(ring)

    def _bind(self, ring: _Ring) -> None:
        """Release what the ring had and, if the source publishes particles, make the ring's
        buffers and passes for its pool (the ring starts empty: every alive particle is new)."""
        name, c = ring.entity.name, ring.component
        self.resources.release(name, self.key)
        ring.source, ring.capacity, ring.buffers, ring.passes = None, 0, {}, []
        ring.head, ring.samples, ring.steps_pending, ring.seconds_pending = 0, 0, 0, 0.0
        ring.looks_key = None
        source = self.resources.get(f"{c.source}/particles")
        if not isinstance(source, BufferView):
            return   # no source now: nothing to draw until it appears
        capacity = source.size // PARTICLE.itemsize
        storage = wgpu.BufferUsage.STORAGE
        try:
            b = {"params": self.buffer(ring.entity, "trail_params", PARAMS.itemsize, storage),
                 "points": self.buffer(ring.entity, "trail_points",
                                       capacity * c.length * POINT_BYTES, storage,
                                       what=f"entity '{name}': trail.length = {c.length} x the "
                                            f"{capacity:,} slots of '{c.source}'"),
                 "sampled": self.buffer(ring.entity, "trail_sampled", capacity * 8, storage),
                 "args": self.buffer(ring.entity, "trail_args", 16,
                                     storage | wgpu.BufferUsage.INDIRECT),
                 "looks": self.buffer(ring.entity, "trail_looks", LOOKS.itemsize, storage)}
            ring.buffers, ring.capacity = b, capacity
            ring.passes = self._passes(ring)
        except Exception:
            self.resources.release(name, self.key)
            ring.buffers, ring.capacity, ring.passes = {}, 0, []
            raise
        ring.source = source
        self._write_params(ring)
        self._write_looks(ring)

    def _passes(self, ring: _Ring) -> list[Pass]:
        name, source, b = ring.entity.name, ring.component.source, ring.buffers
        grid = self.gpu.grid(math.ceil(ring.capacity / GROUP))

        def groups():   # only on the steps that sample
            return grid if ring.sampling else (0, 0, 0)

        draw = sprite_pipeline(self.device, "trails/draw.wgsl", "additive",
                               self.shared.scene_format, self.shared.depth_format)
        return [
            self.build.compute(f"{name}:trail:sample", Phase.SIMULATE, "trails/sample.wgsl",
                               groups, {"params": b["params"],
                                        "particles": f"{source}/particles",
                                        "points": b["points"], "sampled": b["sampled"]},
                               does=f"pushes each {source} particle's position into its ring "
                                    f"of samples (on sampling steps)"),
            self.build.compute(f"{name}:trail:prepare", Phase.PREPARE, "trails/prepare.wgsl",
                               (1, 1, 1), {"params": b["params"],
                                           "source_args": f"{source}/draw_args",
                                           "draw_args": b["args"]},
                               does=f"the ribbons' drawIndirect arguments from {source}'s alive "
                                    f"count"),
            self.build.draw(f"{name}:trail:draw", "trails/draw.wgsl", draw,
                            {"frame": "frame", "params": b["params"],
                             "particles": f"{source}/particles",
                             "alive_list": f"{source}/alive_list", "points": b["points"],
                             "sampled": b["sampled"], "looks": b["looks"]},
                            indirect=(b["args"], 0),
                            does="a ribbon through each particle's samples, additive "
                                 "(drawIndirect)"),
        ]

    # per frame ---------------------------------------------------------------------------------
    def passes(self) -> list[Pass]:
        return [p for ring in self.rings.values() for p in ring.passes]

    def before_step(self, step: StepInfo) -> None:
        for ring in self.rings.values():
            if ring.source is None:
                continue
            ring.steps_pending += 1
            ring.seconds_pending += step.dt
            ring.sampling = ring.samples == 0 or ring.steps_pending >= ring.component.every
            elapsed = ring.seconds_pending
            if ring.sampling:
                ring.head = (ring.head + 1) % ring.component.length
                ring.samples += 1
                ring.steps_pending, ring.seconds_pending = 0, 0.0
            self._write_params(ring, step.dt, elapsed)
            self._write_looks(ring)

    def _write_params(self, ring: _Ring, dt: float | None = None, elapsed: float = 0.0) -> None:
        c, rec = ring.component, ring.record
        dt = self.shared.fixed_dt if dt is None else dt
        rec["capacity"] = ring.capacity
        rec["length"] = c.length
        rec["head"] = ring.head
        rec["vertices"] = 6 * (c.length - 1)
        rec["elapsed"] = elapsed
        rec["tolerance"] = 0.5 * dt
        rec["since_sample"] = ring.seconds_pending
        self.resources.write(ring.buffers["params"], rec.tobytes())

    def _write_looks(self, ring: _Ring) -> None:
        """Rebake colour and width over the trail when they changed (live edits)."""
        c = ring.component
        key = (tuple(c.colors()), c.width, tuple(c.width_curve))
        if key == ring.looks_key:
            return
        ring.looks_key = key
        self.resources.write(ring.buffers["looks"], bake_looks(c))

    # inspection --------------------------------------------------------------------------------
    def state(self, entity: EntityRef) -> dict[str, np.ndarray]:
        """``points`` (capacity, length, 3): each source slot's positions at the last ``length``
        samples, newest first (capacity 0 while the source does not exist)."""
        ring = self.rings[entity.name]
        length = ring.component.length
        if ring.source is None:
            return {"points": np.zeros((0, length, 3), np.float32)}
        ring_order = read_array(self.device, ring.buffers["points"], np.float32,
                                ring.capacity * length * 4).reshape(ring.capacity, length, 4)
        newest_first = (ring.head - np.arange(length)) % length
        return {"points": np.ascontiguousarray(ring_order[:, newest_first, :3])}

    def stats(self, entity: EntityRef, readback: dict[str, bytes]) -> dict:
        ring = self.rings[entity.name]
        return {"trail_source": ring.component.source if ring.source is not None else None,
                "trail_samples": ring.samples}


set_system("trail", TrailSystem)


def bake_looks(c: Trail) -> bytes:
    """Colour (interpolated in linear light) and width (world units) at TRAIL_SAMPLES evenly
    spaced points from the newest sample to the oldest."""
    t = np.linspace(0.0, 1.0, TRAIL_SAMPLES)
    colors = np.array([linear_color(text) for text in c.colors()])
    stops = np.linspace(0.0, 1.0, len(colors)) if len(colors) > 1 else np.zeros(1)
    record = np.zeros((), LOOKS)
    record["color"] = np.stack([np.interp(t, stops, colors[:, k]) for k in range(4)], axis=1)
    curve = c.width_curve
    width = c.width * np.interp(t, np.linspace(0.0, 1.0, len(curve)), curve)
    record["width"] = width.reshape(-1, 4)
    return record.tobytes()
