"""Wavefront OBJ files as particle meshes, read by trimesh (a maintained mesh library whose only
requirement is numpy), not by a parser of our own.

The file's triangles (trimesh splits polygons) are flat shaded, centred on their bounding box
and scaled so the longest side is 1: the mesh fits [-0.5, 0.5]^3 as the built-in ones do, and a
particle's ``size`` is its extent whatever units the file used. Every problem is an ObjError
with a one-line "expected ..., found ..." message; the scene loader and the emitter name the
entity, the field and the file around it.

Only regular files are read (a FIFO would block and /dev/zero never ends), of at most
``MAX_MESH_BYTES``, with at most ``MAX_MESH_RECORDS`` vertex and as many face records, counted
before trimesh parses anything: every particle draws the whole mesh, so a larger one is a
mistake, and parsing one costs memory in proportion.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from emberfx.core.errors import special_file_problem
from emberfx.systems.meshes.shapes import TriangleMesh, flat_shaded

MAX_MESH_BYTES = 32 << 20   # an OBJ file's size
MAX_MESH_RECORDS = 1 << 17  # 'v' lines, and 'f' lines, of one mesh
_RECORD = {kind: re.compile(rb"^[ \t]*" + kind + rb"[ \t]", re.M) for kind in (b"v", b"f")}


class ObjError(ValueError):
    """A mesh file that cannot be drawn: missing, unreadable, not OBJ, or without triangles."""


def read_obj(path: str | Path) -> TriangleMesh:
    path = Path(path)
    special = special_file_problem(path, "Wavefront OBJ")
    if special is not None:
        raise ObjError(special)
    try:
        size = path.stat().st_size
        if size > MAX_MESH_BYTES:
            raise ObjError(f"expected a Wavefront file of at most {MAX_MESH_BYTES >> 20} MiB, "
                           f"found '{path}' of {size / (1 << 20):.1f} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise ObjError(f"expected a readable Wavefront file, found '{path}' "
                       f"({exc.strerror or type(exc).__name__})") from None
    for kind, pattern in _RECORD.items():
        count = len(pattern.findall(data))
        if count > MAX_MESH_RECORDS:
            what = "vertex ('v')" if kind == b"v" else "face ('f')"
            raise ObjError(f"expected at most {MAX_MESH_RECORDS:,} {what} lines, found "
                           f"{count:,} in '{path}'")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ObjError(f"expected a Wavefront OBJ text file, found binary data in "
                       f"'{path}'") from None
    try:
        import trimesh
    except ImportError:
        raise ObjError(f"reading '{path}' needs the package trimesh (pip install "
                       f"trimesh)") from None
    try:
        mesh = trimesh.load(io.BytesIO(text.encode("utf-8")), file_type="obj", force="mesh",
                            process=False)
    except (ValueError, IndexError) as exc:   # trimesh's reports of malformed records
        raise ObjError(f"expected a valid Wavefront OBJ, found '{path}' that trimesh refuses "
                       f"({type(exc).__name__}: {exc})") from None
    faces = np.asarray(getattr(mesh, "faces", np.zeros((0, 3))), np.int64)
    vertices = np.asarray(getattr(mesh, "vertices", np.zeros((0, 3))), np.float64)
    if len(faces) == 0:
        raise ObjError(f"expected at least one face ('f' line), found none in '{path}'")
    triangles = vertices[faces]                                  # (t, 3, 3)
    if not np.isfinite(triangles).all():
        raise ObjError(f"expected finite vertex coordinates, found nan or inf in '{path}'")
    low, high = triangles.reshape(-1, 3).min(0), triangles.reshape(-1, 3).max(0)
    extent = float((high - low).max())
    if extent == 0.0:
        raise ObjError(f"expected faces with an extent, found all vertices at one point in "
                       f"'{path}'")
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
