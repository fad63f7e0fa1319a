"""Particle lights, an emitter feature: ``emit_light = { intensity, range, max_lights }`` makes
the emitter's brightest alive particles into point lights each render, chosen on the GPU, which
light meshes, cloth, colliders and lit particles like the scene's [entity.point_light] lights
(runtime/core/point_lights.py). A light sits at its particle's centre, with the emitter's
``range``, and its colour is the particle's colour over life x alpha x ``intensity``, so the
lights flicker and fade with the particles.

Brightness is the Rec. 709 luminance of the colour over life times its alpha. The brightest
``max_lights`` are found without reading anything back (emitter/light_types.wgsl): a histogram
of brightness over LIGHT_BINS logarithmic bins (1/32 octave each), the bin at which
``max_lights`` are reached counted down from the brightest, then every particle above that bin
and the first of its own (in alive-list order) that still fit are written to the lights, each
at its rank in alive-list order (counts per block of BLOCK entries, a PrefixScan, a workgroup
scan): the same state gives the same lights in the same order, so the image is the same bytes.
The lights made are min(particles with a brightness above 0, max_lights); of the particles in
the last bin taken (within about 2 % of each other's brightness) the first in the alive list
are taken.

What the feature adds, and where (emitter/features.py lists the features):
  applies      ``emit_light`` is set
  batch key    none: such an emitter runs alone (its passes read its own buffers)
  simulation   ``light_select`` (the histogram, the threshold, the count made and the slots of
               the particles made lights), ``light_params`` (EmitLightParams, uniform) and
               ``light_blocks`` (two counts per block, and their PrefixScan)
  upload       ``light_params`` each step (intensity and range are live)
  step passes  RENDER <e>:emitter:light_clear, light_histogram, light_threshold (reserves the
               room in "lights/count"), light_mark, light_blocks:scan:*, light_append (writes
               "lights/list": the renderer then culls the lights into its tiles)
  state        ``light_count`` (lights made at the last render) and ``light_slots`` (their
               particles' slots, ascending)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated

import msgspec
import numpy as np
import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.point_lights import COUNTS, LIGHT_ORDER, LIGHTS
from emberfx.core.readback import read_buffer
from emberfx.model.components import Tracked, live, rebuild
from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.structs import BLOCK

if TYPE_CHECKING:
    from emberfx.systems.emitter.batches import Simulation
    from emberfx.systems.emitter.host import EmitterHost
    from emberfx.systems.emitter.pool import Pool

TYPES = "emitter/light_types.wgsl"
HISTOGRAM, THRESHOLD, MARK, APPEND = (
    "emitter/light_histogram.wgsl", "emitter/light_threshold.wgsl", "emitter/light_mark.wgsl",
    "emitter/light_append.wgsl")
LIGHT_CAPACITY = wgsl.int_constant("common/point_light_types.wgsl", "LIGHT_CAPACITY")
LIGHT_BINS = wgsl.int_constant(TYPES, "LIGHT_BINS")
SELECT_HEADER = 4 * (LIGHT_BINS + 4)   # bytes of LightSelect before its slots
PARAMS = struct_dtype(TYPES, "EmitLightParams")


@dataclass(slots=True)
class EmitLight(Tracked):
    """The emitter's brightest particles as point lights (emitter/emit_light.py)."""
    intensity: Annotated[float, msgspec.Meta(ge=0.0)] = live(1.0)
    """a light's colour is its particle's colour over life x alpha x intensity (linear)"""
    range: Annotated[float, msgspec.Meta(gt=0.0)] = live(1.0)
    """world units: the distance at which a particle's light has faded to nothing"""
    max_lights: Annotated[int, msgspec.Meta(ge=1, le=LIGHT_CAPACITY)] = rebuild(128)
    """the most particles made lights each render (the brightest); all lights of a scene, its
    point_light entities included, share room for LIGHT_CAPACITY (1024)"""


def emit_light(component) -> EmitLight:
    """The emitter's ``emit_light`` table (asked only of emitters the feature applies to)."""
    light = component.emit_light
    assert light is not None
    return light


class EmitLightFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "emit_light"

    def applies(self, component) -> bool:
        return component.emit_light is not None

    def batch_key(self, component, resolve) -> tuple | None:
        return None

    def simulation(self, system: EmitterHost, pool: Pool, sim: Simulation) -> None:
        count = emit_light(pool.component).max_lights
        storage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        sim.buffers["light_select"] = system.resources.buffer(
            sim.name, "light_select", SELECT_HEADER + 4 * count, storage, family=system.key)
        sim.buffers["light_params"] = system.resources.buffer(
            sim.name, "light_params", PARAMS.itemsize,
            wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST, family=system.key)
        sim.buffers["light_blocks"] = system.resources.buffer(
            sim.name, "light_blocks", 8 * blocks_of(pool), storage, family=system.key)
        sim.parts[self.name] = PrefixScan(system.build, f"{sim.name}:emitter:light_blocks",
                                          sim.buffers["light_blocks"], 2 * blocks_of(pool))
        self.upload(system, pool, [])

    def upload(self, system: EmitterHost, pool: Pool, acting: list) -> None:
        light = emit_light(pool.component)
        record = np.zeros((), PARAMS)
        record["intensity"], record["range"] = light.intensity, light.range
        record["max_lights"] = light.max_lights
        system.resources.write(pool.buffers["light_params"], record.tobytes())

    def step_passes(self, system: EmitterHost, pool: Pool, sim: Simulation,
                    passes: list[Pass]) -> list[Pass]:
        prefix = f"{sim.name}:emitter:light_"
        kept = [p for p in passes if not p.name.startswith(prefix)]
        return kept + light_passes(system, pool, sim)

    def state(self, device, pool: Pool) -> dict[str, np.ndarray]:
        count = emit_light(pool.component).max_lights
        data = np.frombuffer(read_buffer(device, pool.buffers["light_select"]), np.uint32)
        made = int(data[LIGHT_BINS + 2])
        return {"light_count": np.array(made, np.uint32),
                "light_slots": np.sort(data[LIGHT_BINS + 4:LIGHT_BINS + 4 + min(made, count)])}


def light_passes(system: EmitterHost, pool: Pool, sim: Simulation) -> list[Pass]:
    """The emitter's clear, histogram, threshold, mark, scan and append passes (RENDER phase,
    each with the lights' queue hint, before every draw)."""
    b, name = sim.buffers, sim.name
    grid = system.gpu.grid(blocks_of(pool))
    particles = {"emitters": b["params"], "particles": b["particles"],
                 "alive_list": b["alive_list"], "alive_totals": b["alive_total"],
                 "looks": b["looks"], "light_select": b["light_select"]}
    scan = sim.parts[EmitLightFeature.name]
    assert isinstance(scan, PrefixScan)
    made = [
        system.build.clear(f"{name}:emitter:light_clear", Phase.RENDER, b["light_select"], 0,
                           SELECT_HEADER, does="zeroes the brightness histogram"),
        system.build.compute(
            f"{name}:emitter:light_histogram", Phase.RENDER, HISTOGRAM, grid, particles,
            does="counts the alive particles per brightness bin"),
        system.build.compute(
            f"{name}:emitter:light_threshold", Phase.RENDER, THRESHOLD, (1, 1, 1),
            {"light_params": b["light_params"], "light_select": b["light_select"],
             "light_counts": COUNTS},
            does="the bin where the brightest max_lights particles end; their room reserved"),
        system.build.compute(
            f"{name}:emitter:light_mark", Phase.RENDER, MARK, grid,
            {**particles, "light_blocks": b["light_blocks"]},
            does="counts per block the particles above the threshold bin and in it"),
        *scan.passes(Phase.RENDER),
        system.build.compute(
            f"{name}:emitter:light_append", Phase.RENDER, APPEND, grid,
            {**particles, "light_blocks": b["light_blocks"], "light_params": b["light_params"],
             "point_lights": LIGHTS},
            does="the brightest particles written to the point lights, in alive-list order")]
    return [replace(p, order=LIGHT_ORDER) for p in made]


def blocks_of(pool: Pool) -> int:
    """Blocks of BLOCK alive-list entries in the emitter's pool."""
    return max(1, -(-pool.component.capacity // BLOCK))
