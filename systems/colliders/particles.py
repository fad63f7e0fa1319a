"""Colliders as an emitter's update reads them: ``SolidCollider`` records and the
``CollisionSet`` header of shaders/common/collide.wgsl (which documents the response), and
the ``VolumeRef`` of a volume's box (shaders/common/volumes.wgsl).
"""

from __future__ import annotations

import math

import numpy as np

from emberfx.core import wgsl
from emberfx.core.layout import struct_dtype
from emberfx.model.transforms import rotation_matrix

SOLID = struct_dtype("common/collide.wgsl", "SolidCollider")
COLLISION_SET = struct_dtype("common/collide.wgsl", "CollisionSet")
VOLUME_REF = struct_dtype("common/volumes.wgsl", "VolumeRef")
# {"sphere": 0, "plane": 1, "box": 2, "sdf_volume": 3, "sdf_sphere": 4, ..., "depth": 7}
SOLID_KINDS = wgsl.enum_constants("common/collide.wgsl", "SOLID")


def solid_kind(c) -> str:
    """The SOLID_* name of a collider component."""
    if c.shape != "sdf":
        return c.shape
    return "sdf_volume" if c.sdf is not None else f"sdf_{c.sdf_kind}"


def pack_solids(colliders: list, volumes: dict[int, int]) -> np.ndarray:
    """SolidCollider records for these collider components, in order. ``volumes``: id(collider)
    -> index of its volume record, for SDFs sampled from arrays."""
    records = np.zeros(max(1, len(colliders)), SOLID)
    for record, c in zip(records, colliders):
        kind = solid_kind(c)
        record["kind"] = SOLID_KINDS[kind]
        record["inside"] = int(c.inside)
        record["volume"] = volumes.get(id(c), 0)
        to_local = rotation_matrix(c.rotation_deg).T
        record["to_local_x"], record["to_local_y"], record["to_local_z"] = (
            (*row, 0.0) for row in to_local)
        if kind == "plane":
            n = np.asarray(c.normal, np.float64)
            record["center"] = (*c.point, 0.0)
            record["normal"] = (*(n / math.hypot(*n)), 0.0)   # packed every step
        else:
            record["center"] = (*c.center, c.radius)
            record["normal"] = (0.0, 0.0, 0.0, c.minor_radius)
        record["half_size"] = (*c.half_size, c.thickness)
        record["bounds"] = (*(0.5 * np.asarray(c.size)), 0.0)
    return records


def pack_collision_set(record: np.ndarray, material, count: int,
                       drawn_view: tuple[np.ndarray, tuple[int, int]] | None) -> bytes:
    """The CollisionSet header: the emitter's collision material, how many colliders, and the
    last render's view for depth colliders (none yet: they do nothing)."""
    record["material"] = (material.restitution, material.friction, material.lifetime_loss,
                          float(material.kill))
    record["count"] = count
    inverse = None
    if drawn_view is not None:
        try:   # a view never set (encode() before any frame uniform was written) is singular
            inverse = np.linalg.inv(drawn_view[0].astype(np.float64))
        except np.linalg.LinAlgError:
            inverse = None
    if drawn_view is None or inverse is None:   # depth colliders do nothing until a real view
        record["depth_size"] = (1.0, 1.0, 0.0, 0.0)
    else:
        view_proj, (w, h) = drawn_view
        record["view_proj"] = view_proj.T   # WGSL matrices are column-major
        record["inverse_view_proj"] = inverse.T
        record["depth_size"] = (w, h, 1.0, 0.0)
    return record.tobytes()


def pack_volume_ref(record: np.ndarray, *, center, rotation_deg, size, grid, offset: int,
                    tile: bool) -> None:
    """A VolumeRef: the box (centre, rotation, edge lengths), the grid and where the samples
    start in the packed floats."""
    record["center"] = (*center, 1.0 if tile else 0.0)
    to_local = rotation_matrix(rotation_deg).T
    record["to_local_x"], record["to_local_y"], record["to_local_z"] = (
        (*row, 0.0) for row in to_local)
    record["size"] = (*size, 0.0)
    record["grid"] = (*grid, offset)
