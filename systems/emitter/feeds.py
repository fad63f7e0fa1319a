"""An emitter feeding a gas: ``feeds = { gas = "fire", density = 0.5, temperature = 2.0 }``.

The gas family does the work (systems/gas/coupling.py): each step it splats the emitter's
alive particles inside its box into integer accumulators and adds them to its cells at the
start of its next step. It binds the emitter's ``<e>/particles`` by resource name, so the
emitter's passes stay as they are; the FeedsFeature below only keeps a feeding emitter out of
batches, so that the buffer the gas binds is the emitter's own and moves only when the emitter
is rebuilt (which the gas hears of: the world changed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from emberfx.model.components import Tracked, live, rebuild
from emberfx.systems.emitter.feature import EmitterFeature

FEED_MAX = 1000.0
"""the most a particle may add per second of each quantity: a cell's fixed-point sum is 32-bit
(at 65536 units per unit it holds less than 65536 units a step; more wraps round), so a few
thousand particles may share one cell at this rate and a step of 1/60 s"""
Amount = Annotated[float, msgspec.Meta(ge=0.0, le=FEED_MAX)]


@dataclass(slots=True)
class Feeds(Tracked):
    """What each alive particle inside the gas's box adds to the cell it lies in, per second."""
    gas: str = rebuild("")
    """the gas entity fed"""
    density: Amount = live(0.0)
    """smoke per particle per second (density units / s)"""
    temperature: Amount = live(0.0)
    """heat per particle per second (temperature units / s)"""
    fuel: Amount = live(0.0)
    """fuel per particle per second; it burns where the gas is hotter than its `ignition`"""

    def __post_init__(self):
        if not self.gas:
            raise ValueError("gas: expected the name of a gas entity, found none")


class FeedsFeature(EmitterFeature):
    """A feeding emitter runs alone (its particles are its own buffer, not a batch's)."""
    name = "feeds"

    def applies(self, component) -> bool:
        return component.feeds is not None

    def batch_key(self, component, resolve) -> tuple | None:
        return None
