"""Disk inflows of a fluid (``sources``): each step, each source's new particles are written by
the host into the next free slots, before the step runs. Slots fill in order and never free,
so which slot gets which particle is the same on every run.

A source's particles sit on a square lattice of spacing 2 x particle_radius across its disk
(centres within the radius), taken in turn; a step's particles are spread back along the
direction over the distance the flow moves in a step (the component caps the rate at a lattice
layer each 2 x particle_radius of flow, so that they do not start inside each other).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from emberfx.systems.fluid.component import Fluid, Source, disk_offsets


def disk_points(source: Source, particle_radius: float) -> np.ndarray:
    """(M, 3): the lattice points of the source's disk (component.disk_offsets) in the world."""
    d = np.asarray(source.direction, np.float64)
    d /= np.linalg.norm(d)
    helper = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(d, helper)
    u /= np.linalg.norm(u)
    v = np.cross(d, u)
    ab = disk_offsets(source.radius, 2.0 * particle_radius)
    return np.asarray(source.position) + np.outer(ab[:, 0], u) + np.outer(ab[:, 1], v)


@dataclass
class Inflow:
    """What the sources of one fluid have emitted: the next free slot, and per source the
    particles owed (a fraction carried to the next step) and the count emitted."""
    cursor: int
    owed: list[float] = field(default_factory=list)
    emitted: list[int] = field(default_factory=list)

    def step(self, c: Fluid, dt: float, capacity: int) -> list[tuple[int, np.ndarray]]:
        """This step's new particles: (first slot, (k, 2, 4) float32 position and velocity
        rows) per source that emits."""
        out = []
        while len(self.owed) < len(c.sources):
            self.owed.append(0.0)
            self.emitted.append(0)
        for k, source in enumerate(c.sources):
            self.owed[k] += source.rate * dt
            count = min(int(self.owed[k]), capacity - self.cursor)
            self.owed[k] -= int(self.owed[k])
            if count <= 0:
                continue
            disk = disk_points(source, c.particle_radius)
            index = self.emitted[k] + np.arange(count)
            d = np.asarray(source.direction, np.float64)
            d /= np.linalg.norm(d)
            back = source.speed * dt * (np.arange(count) // len(disk)) / max(
                1, -(-count // len(disk)))
            rows = np.zeros((count, 2, 4), np.float32)
            rows[:, 0, :3] = disk[index % len(disk)] - np.outer(back, d)
            rows[:, 0, 3] = 1.0
            rows[:, 1, :3] = d * source.speed
            rows[:, 1, 3] = c.rest_density
            out.append((self.cursor, rows))
            self.cursor += count
            self.emitted[k] += count
        return out
