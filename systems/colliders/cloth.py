"""Colliders as the cloth step reads them: ``Collider`` records of shaders/common/colliders.wgsl.

Cloth collides with spheres and planes only; other shapes (box, sdf, depth) act on particles and
are left out of a patch's records (``cloth_colliders``).
"""

from __future__ import annotations

import numpy as np

from emberfx.core import wgsl
from emberfx.core.layout import struct_dtype

COLLIDER = struct_dtype("common/colliders.wgsl", "Collider")
# kind name -> value, e.g. {"sphere": 0, "plane": 1}
COLLIDER_KINDS = wgsl.enum_constants("common/colliders.wgsl", "COLLIDER")


def cloth_colliders(colliders: list) -> list:
    """The colliders a cloth patch takes: spheres and planes, in order."""
    return [c for c in colliders if c.shape in COLLIDER_KINDS]


def pack_colliders(colliders: list) -> np.ndarray:
    records = np.zeros(max(1, len(colliders)), COLLIDER)
    for record, c in zip(records, colliders):
        if c.shape == "sphere":
            record["shape"] = (*c.center, c.radius)
        else:
            n = np.asarray(c.normal, np.float64)
            n /= np.linalg.norm(n)
            record["shape"] = (*n, float(np.dot(n, c.point)))
        record["kind"] = COLLIDER_KINDS[c.shape]
        record["friction"] = c.friction
    return records
