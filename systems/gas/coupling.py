"""A gas coupled with particles, both ways:

- **Velocity out.** While a ``[entity.force_field] kind = "vector_field"`` names the gas as its
  ``source``, the gas writes its velocity at its cells' centres after each step's projection
  into ``<gas>/centres`` (gas/centres.wgsl), three floats per cell in a vector volume's layout;
  the emitters such a field acts on copy it into their volumes on the GPU
  (systems/emitter/gas_fields.py) and sample it each substep.
- **Smoke in.** An emitter with ``feeds = { gas, density, temperature, fuel }`` feeds the gas:
  after the emitter's step (PREPARE phase) a splat pass per feeding emitter adds each alive
  particle inside the box to the accumulators of the cell holding it (nearest cell), in fixed
  point with integer atomics (``<gas>/feed``, FEED_SCALE units per unit: WebGPU has no float
  atomics, and integer sums do not depend on the order, so runs stay byte-identical); the
  gas's next step starts by adding them to its cells and zeroing them (gas/feed.wgsl).
  A particle adds ``amount`` x ``fixed_dt`` per step, rounded once to the fixed point.

  SIMULATE  <gas>:gas:feed               the last step's splats into the cells (first)
  SIMULATE  <gas>:gas:centres            the projected velocity at the cells' centres (last)
  PREPARE   <gas>:gas:splat:<emitter>    each feeding emitter's alive particles, splatted

The emitters' buffers are bound by resource name (``<emitter>/particles``), as a trail binds
them: this module imports nothing of the emitter family, and rewires when an emitter's
particles are remade, come or go (``refresh``, from the gas system's ``world_changed``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import wgpu

from emberfx.core import wgsl
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView
from emberfx.core.system import EntityRef, System

FEED = "gas/feed.wgsl"
SPLAT = "gas/splat.wgsl"
FEED_SCALE = float(wgsl.constant(FEED, "FEED_SCALE"))
"""fixed-point units per unit of density, temperature or fuel in the accumulators"""
FEED_PARAMS = struct_dtype(SPLAT, "FeedParams")
PARTICLE = struct_dtype("emitter/types.wgsl", "Particle")   # the feeders' records, read-only
GROUP = 64   # the coupling passes: one cell or slot an invocation
AMOUNTS = ("density", "temperature", "fuel")


def fixed_amounts(feeds, dt: float) -> tuple[int, int, int]:
    """What one particle of an emitter feeding with ``feeds`` adds in a step of ``dt``, in
    fixed point: round(amount x dt x FEED_SCALE) per quantity."""
    d, t, f = (int(round(getattr(feeds, k) * dt * FEED_SCALE)) for k in AMOUNTS)
    return d, t, f


@dataclass
class _Feeder:
    name: str          # the emitter entity
    particles: BufferView
    capacity: int
    params: BufferView
    written: bytes = b""


@dataclass
class Coupling:
    """One gas entity's coupling: what it publishes and who feeds it."""
    system: System     # the gas system (its buffers, passes and world query)
    entity: EntityRef
    centres: BufferView | None = None
    feed: BufferView | None = None
    feeders: list[_Feeder] = field(default_factory=list)

    # what the world asks for ------------------------------------------------------------------
    def _consumed(self) -> bool:
        """Whether a force field samples the gas's velocity."""
        return any(getattr(c, "source", None) == self.entity.name
                   for _, c in self.system.query("force_field"))

    def _wanted_feeders(self) -> list[tuple[str, BufferView, int]]:
        """(emitter, its particles, its slots) of each emitter feeding the gas now, in scene
        order; an emitter whose particles are not made (yet) is left out."""
        out = []
        for ref, c in self.system.query("emitter"):
            feeds = getattr(c, "feeds", None)
            if feeds is None or feeds.gas != self.entity.name:
                continue
            view = self.system.resources.get(f"{ref.name}/particles")
            if isinstance(view, BufferView):
                out.append((ref.name, view, min(c.capacity, view.size // PARTICLE.itemsize)))
        return out

    def refresh(self, cells: int) -> bool:
        """Bring the buffers in step with the world; True when the passes must be made again."""
        changed = False
        s, what = self.system, f"entity '{self.entity.name}': gas coupling of {cells:,} cells"
        storage = wgpu.BufferUsage.STORAGE
        if self._consumed() != (self.centres is not None):
            if self.centres is None:
                self.centres = s.buffer(self.entity, "centres", 12 * cells, storage, what=what)
            else:
                self._drop(self.centres)
                self.centres = None
            changed = True
        wanted = self._wanted_feeders()
        known = [(f.name, f.particles, f.capacity) for f in self.feeders]
        if [(n, id(v), k) for n, v, k in wanted] != [(n, id(v), k) for n, v, k in known]:
            for f in self.feeders:
                self._drop(f.params)
            self.feeders = [
                _Feeder(name, view, capacity,
                        s.buffer(self.entity, f"feed_params:{name}", FEED_PARAMS.itemsize,
                                 storage))
                for name, view, capacity in wanted]
            if self.feeders and self.feed is None:
                self.feed = s.buffer(self.entity, "feed", 12 * cells, storage, what=what)
            elif not self.feeders and self.feed is not None:
                self._drop(self.feed)
                self.feed = None
            changed = True
        return changed

    def _drop(self, view: BufferView) -> None:
        """Forget a buffer (freed once nothing holds it: a frame may still be using it)."""
        self.system.resources.take(view.name)

    # passes -------------------------------------------------------------------------------------
    def first_passes(self, buffers: dict, cells: int) -> list[Pass]:
        """SIMULATE passes that start the gas's step: the last step's splats added."""
        if self.feed is None:
            return []
        e = self.entity.name
        return [self.system.build.compute(
            f"{e}:gas:feed", Phase.SIMULATE, FEED, self.system.gpu.grid(math.ceil(cells / GROUP)),
            {"params": buffers["params"], "feed": self.feed, "scalars": buffers["scalars"]},
            does="what the feeding emitters splatted last step, into the cells; zeroed")]

    def last_passes(self, buffers: dict, cells: int) -> list[Pass]:
        """SIMULATE passes after the projection: the velocity published at the centres."""
        if self.centres is None:
            return []
        e = self.entity.name
        return [self.system.build.compute(
            f"{e}:gas:centres", Phase.SIMULATE, "gas/centres.wgsl",
            self.system.gpu.grid(math.ceil(cells / GROUP)),
            {"params": buffers["params"], "velocity": buffers["velocity"],
             "centres": self.centres},
            does="each cell's velocity at its centre, for the force fields sampling the gas")]

    def splat_passes(self) -> list[Pass]:
        """PREPARE passes: each feeding emitter's alive particles into the accumulators."""
        assert self.feed is not None or not self.feeders
        e = self.entity.name
        return [self.system.build.compute(
            f"{e}:gas:splat:{f.name}", Phase.PREPARE, SPLAT,
            self.system.gpu.grid(max(1, math.ceil(f.capacity / GROUP))),
            {"feed_params": f.params, "particles": f.particles, "feed": self.feed},
            does=f"{f.name}'s alive particles inside the box into the feed accumulators")
            for f in self.feeders]

    # per step -----------------------------------------------------------------------------------
    def write_step(self, gas, dt: float) -> None:
        """Each feeder's FeedParams for this step (the amounts are live fields)."""
        if not self.feeders:
            return
        emitters = {ref.name: c for ref, c in self.system.query("emitter")}
        for f in self.feeders:
            c = emitters.get(f.name)
            feeds = getattr(c, "feeds", None)
            rec = np.zeros((), FEED_PARAMS)
            rec["lower"] = (*gas.lower, gas.edge)
            rec["cells"] = (*gas.resolution, f.capacity)
            rec["amounts"] = ((*fixed_amounts(feeds, dt), 0) if feeds is not None
                              and feeds.gas == self.entity.name else (0, 0, 0, 0))
            data = rec.tobytes()
            if data != f.written:
                self.system.resources.write(f.params, data)
                f.written = data
