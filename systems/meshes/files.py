"""Triangle meshes from Wavefront OBJ and PLY files, read by trimesh's format readers (a
maintained mesh library whose only requirement is numpy), not by parsers of our own.

``read_mesh_file`` gives the file's vertices and triangles as authored (trimesh splits polygons;
the objects of an OBJ are joined), and its per-vertex normals where the file has them for every
vertex (OBJ ``vn`` on every corner, PLY ``nx ny nz``), else None. Every problem is a
MeshFileError with a one-line "expected ..., found ..." message; the scene loader and the
systems name the entity, the field and the file around it.

trimesh is imported when a file is read, not with this module: it takes a tenth of a second, and
most scenes name no mesh file (and an import cut short by a signal must not be swallowed by its
optional-dependency guards).

Only regular files are read (a FIFO would block and /dev/zero never ends), of at most
``MAX_MESH_BYTES``, with at most ``MAX_MESH_RECORDS`` vertices and as many faces, counted before
trimesh parses anything: parsing costs memory in proportion, and every particle of a mesh
emitter draws the whole mesh.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from emberfx.core.errors import special_file_problem

MAX_MESH_BYTES = 32 << 20   # a mesh file's size
MAX_MESH_RECORDS = 1 << 17  # vertices, and faces, of one mesh
FORMATS = {".obj": "Wavefront OBJ", ".ply": "PLY"}
_OBJ_RECORD = {kind: re.compile(rb"^[ \t]*" + kind + rb"[ \t]", re.M) for kind in (b"v", b"f")}
_PLY_ELEMENT = re.compile(rb"^element[ \t]+(vertex|face)[ \t]+(\d+)", re.M)


class MeshFileError(ValueError):
    """A mesh file that cannot be used: missing, unreadable, malformed, or without triangles."""


@dataclass(frozen=True)
class MeshFile:
    vertices: np.ndarray        # (v, 3) float64, as authored
    faces: np.ndarray           # (t, 3) int64 indices into vertices
    normals: np.ndarray | None  # (v, 3) float64 unit vertex normals, when the file has them

    @property
    def triangles(self) -> np.ndarray:
        """(t, 3, 3) corner positions."""
        return self.vertices[self.faces]


def mesh_format(path: str | Path) -> str | None:
    """The format a path's suffix names ("Wavefront OBJ", "PLY"), or None."""
    return FORMATS.get(Path(str(path)).suffix.lower())


def read_mesh_file(path: str | Path) -> MeshFile:
    path = Path(path)
    kind = mesh_format(path)
    if kind is None:
        raise MeshFileError(f"expected a mesh file '*.obj' or '*.ply', found '{path}'")
    special = special_file_problem(path, kind)
    if special is not None:
        raise MeshFileError(special)
    try:
        size = path.stat().st_size
        if size > MAX_MESH_BYTES:
            raise MeshFileError(f"expected a {kind} file of at most {MAX_MESH_BYTES >> 20} MiB, "
                                f"found '{path}' of {size / (1 << 20):.1f} MiB")
        data = path.read_bytes()
    except OSError as exc:
        raise MeshFileError(f"expected a readable {kind} file, found '{path}' "
                            f"({exc.strerror or type(exc).__name__})") from None
    if kind == "PLY":
        vertices, faces, normals = _read_ply(path, data)
    else:
        vertices, faces, normals = _read_obj(path, data)
    if len(faces) == 0:
        raise MeshFileError(f"expected at least one face, found none in '{path}'")
    if not np.isfinite(vertices[faces]).all():
        raise MeshFileError(f"expected finite vertex coordinates, found nan or inf in '{path}'")
    if normals is not None:
        length = np.linalg.norm(normals, axis=1, keepdims=True)
        normals = normals / length if np.isfinite(normals).all() and (length > 0).all() else None
    return MeshFile(vertices, faces, normals)


def _check_count(path: Path, what: str, count: int) -> None:
    if count > MAX_MESH_RECORDS:
        raise MeshFileError(f"expected at most {MAX_MESH_RECORDS:,} {what}, found {count:,} "
                            f"in '{path}'")


def _read_obj(path: Path, data: bytes):
    for kind, pattern in _OBJ_RECORD.items():
        what = "vertex ('v') lines" if kind == b"v" else "face ('f') lines"
        _check_count(path, what, len(pattern.findall(data)))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MeshFileError(f"expected a Wavefront OBJ text file, found binary data in "
                            f"'{path}'") from None
    from trimesh.exchange.obj import load_obj

    try:
        loaded = load_obj(io.StringIO(text), maintain_order=True, skip_materials=True)
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        raise MeshFileError(f"expected a valid Wavefront OBJ, found '{path}' that trimesh "
                            f"refuses ({type(exc).__name__}: {exc})") from None
    parts = [g for g in loaded.get("geometry", {}).values() if len(g.get("faces", ())) > 0]
    return _joined(parts)


def _read_ply(path: Path, data: bytes):
    header = data[:data.find(b"end_header")] if b"end_header" in data else b""
    if not data.startswith(b"ply") or not header:
        raise MeshFileError(f"expected a PLY file (starting 'ply', with 'end_header'), found "
                            f"'{path}'")
    for kind, count in _PLY_ELEMENT.findall(header):
        _check_count(path, f"{kind.decode()} elements", int(count))
    from trimesh.exchange.ply import load_ply

    try:
        loaded = load_ply(io.BytesIO(data))
    except (ValueError, IndexError, KeyError, TypeError, AttributeError) as exc:
        raise MeshFileError(f"expected a valid PLY mesh, found '{path}' that trimesh refuses "
                            f"({type(exc).__name__}: {exc})") from None
    return _joined([loaded] if len(loaded.get("faces") if loaded.get("faces") is not None
                                   else ()) > 0 else [])


def _joined(parts: list[dict]):
    """One vertex and face list of the parts (objects of an OBJ), normals where all have them."""
    from trimesh.geometry import triangulate_quads

    vertices: list[np.ndarray] = []
    faces: list[np.ndarray] = []
    normals: list[np.ndarray | None] = []
    base = 0
    for part in parts:
        v = np.asarray(part["vertices"], np.float64).reshape(-1, 3)
        f = part["faces"]
        if not (isinstance(f, np.ndarray) and f.ndim == 2 and f.shape[1] == 3):
            f = triangulate_quads(f)   # quads, or a mix of triangles and quads
        f = np.asarray(f, np.int64)
        if f.ndim != 2 or f.shape[1] != 3 or f.size and (f.min() < 0 or f.max() >= len(v)):
            raise MeshFileError("expected triangles indexing the vertices, found faces out of "
                                "range")
        n = part.get("vertex_normals")
        normals.append(None if n is None or np.shape(n) != v.shape
                       else np.asarray(n, np.float64))
        vertices.append(v)
        faces.append(f + base)
        base += len(v)
    if not vertices:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64), None
    given = [n for n in normals if n is not None]
    joined_normals = np.concatenate(given) if len(given) == len(normals) else None
    return np.concatenate(vertices), np.concatenate(faces), joined_normals
