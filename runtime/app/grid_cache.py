"""Grid caches: the state of each gas as one npz per sampled step.

What a grid file holds (``grid_of``): every array ``Engine.state(name)`` returns for the gas
(``density``, ``temperature`` and ``fuel`` of shape (nz, ny, nx), indexed [z, y, x], and
``velocity`` (nz, ny, nx, 3) at the cells' centres), plus where the grid lies in the world:

- ``lower`` (3,) float32: the box's lowest corner, metres;
- ``cell`` () float32: the cells' edge, metres (cell (x, y, z)'s centre is at
  ``lower + (x + 0.5, y + 0.5, z + 0.5) * cell``).

Grids have no PLY or USD form here: an export in those formats still writes each gas as npz.
"""

from __future__ import annotations

import math

import numpy as np

GRID_FAMILIES = ("gas",)
FIELDS = 6   # float32 values per cell: density, temperature, fuel, velocity xyz


def is_grid(engine, name: str) -> bool:
    return any(key in GRID_FAMILIES for key in engine.components_of(name))


def grid_of(engine, name: str) -> dict[str, np.ndarray]:
    """The gas ``name`` now: its state arrays, ``lower`` and ``cell``."""
    gas = engine.components_of(name)["gas"]
    out = {key: np.ascontiguousarray(value) for key, value in engine.state(name).items()}
    out["lower"] = np.asarray(gas.lower, np.float32)
    out["cell"] = np.asarray(gas.edge, np.float32)
    return out


def grid_bytes(engine, name: str) -> int:
    """About the size of one grid file: the cells' float32 fields (headers left out)."""
    return 4 * FIELDS * math.prod(engine.components_of(name)["gas"].resolution)
