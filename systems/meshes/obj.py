"""Wavefront OBJ files as particle meshes, read by trimesh (a maintained mesh library whose only
requirement is numpy), not by a parser of our own.

The file's triangles (trimesh splits polygons) are flat shaded, centred on their bounding box
and scaled so the longest side is 1: the mesh fits [-0.5, 0.5]^3 as the built-in ones do, and a
particle's ``size`` is its extent whatever units the file used. Every problem is an ObjError
with a one-line "expected ..., found ..." message; the scene loader and the emitter name the
entity, the field and the file around it.

The file is read by systems/meshes/files.py, with its limits (``MAX_MESH_BYTES``,
``MAX_MESH_RECORDS``): every particle draws the whole mesh, so a larger one is a mistake.
"""

from __future__ import annotations

from pathlib import Path

from emberfx.systems.meshes.files import (
    MAX_MESH_BYTES,
    MAX_MESH_RECORDS,
    MeshFileError,
    mesh_format,
    read_mesh_file,
)
from emberfx.systems.meshes.shapes import TriangleMesh, flat_shaded

__all__ = ["MAX_MESH_BYTES", "MAX_MESH_RECORDS", "ObjError", "check_mesh_file", "read_obj"]


ObjError = MeshFileError   # (the particle-mesh name of the same error)


def read_obj(path: str | Path) -> TriangleMesh:
    """The file's triangles, flat shaded, centred on their bounding box and scaled so the
    longest side is 1."""
    path = Path(path)
    if mesh_format(path) != "Wavefront OBJ":
        raise MeshFileError(f"expected a Wavefront file '*.obj', found '{path}'")
    triangles = read_mesh_file(path).triangles                 # (t, 3, 3)
    low, high = triangles.reshape(-1, 3).min(0), triangles.reshape(-1, 3).max(0)
    extent = float((high - low).max())
    if extent == 0.0:
        raise MeshFileError(f"expected faces with an extent, found all vertices at one point "
                            f"in '{path}'")
    return flat_shaded((triangles - 0.5 * (low + high)) / extent)


def check_mesh_file(component, resolve) -> None:
    """The scene loader's check of an emitter's OBJ mesh: ValueError "mesh: ..." when the file
    cannot be drawn (so a scene that validates also renders)."""
    mesh = component.mesh
    if mesh is None or not mesh.lower().endswith(".obj"):
        return
    try:
        read_obj(resolve(mesh))
    except ObjError as exc:
        raise ValueError(f"mesh: {exc}") from None
