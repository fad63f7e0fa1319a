"""The mesh emission shape, an emitter feature: ``shape = { kind = "mesh", path = "rock.obj" }``.

Births lie on the triangles of an OBJ or PLY file (``surface = true``, uniform over their area)
or in its volume (``surface = false``, a closed mesh), the mesh as authored: its vertices are
scaled by ``scale``, turned by ``rotation_deg`` (about x, then y, then z) and moved by
``offset`` in the emitter's frame at ``position``. ``velocity = "normal"`` starts particles
along the surface normal (the file's vertex normals interpolated, else the face normal).

What the feature adds, and where (emitter/features.py lists the features):
  applies      shape.kind == "mesh"
  batch key    the mesh's digest: a batch's members share one mesh buffer, each its transform
  buffer       ``mesh_shape`` (emitter/mesh_shape.wgsl MeshShape: the volume apex, then one
               MeshTriangle per triangle with both alias tables), one per pool or batch
  WGSL         emitter/mesh_shape.wgsl in place of emitter/shape_hook.wgsl in BIRTH_PASSES
  bindings     ``mesh_shape`` in those passes
  params       EmitterParams.shape_x/y/z (packed with the shape, ``transform_rows``)
The mesh's tables are built once per file version (``mesh_shape_data``, cached by path, size
and modification time) on the host; the GPU samples them in O(1) per surface birth and O(t)
per volume try (mesh_shape.wgsl says how, and why the volume is uniform for any closed mesh).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from emberfx.core.layout import struct_dtype
from emberfx.model.transforms import rotation_matrix
from emberfx.systems.emitter.feature import EmitterFeature
from emberfx.systems.emitter.shader_names import BIRTH_PASSES
from emberfx.systems.meshes.files import MeshFileError, read_mesh_file

HOOK = "emitter/shape_hook.wgsl"
MESH_SHAPE = "emitter/mesh_shape.wgsl"
TRIANGLE = struct_dtype(MESH_SHAPE, "MeshTriangle")
HEADER_BYTES = 16   # MeshShape.apex, before the triangles
BUFFER = "mesh_shape"


@dataclass(frozen=True)
class MeshShapeData:
    data: bytes      # the MeshShape buffer's contents
    digest: str      # of those bytes: what a batch key compares
    closed: bool     # watertight: its volume can be sampled
    triangles: int


def alias_table(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table for picking index k with probability weights[k] / sum: bucket j
    (uniform) keeps j when a uniform coin is below threshold[j], else gives alias[j] (Vose's
    construction; exact up to float rounding)."""
    n = len(weights)
    scaled = np.asarray(weights, np.float64) * (n / weights.sum())
    threshold = np.ones(n)
    alias = np.arange(n)
    small = [j for j in range(n) if scaled[j] < 1.0]
    large = [j for j in range(n) if scaled[j] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        threshold[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    return threshold, alias


def build_mesh_shape(vertices: np.ndarray, faces: np.ndarray,
                     normals: np.ndarray | None) -> MeshShapeData:
    """The MeshShape buffer of a mesh (vertices (v, 3), faces (t, 3), optional unit vertex
    normals (v, 3)); MeshFileError when no triangle has an area."""
    p = np.asarray(vertices, np.float64)[faces]                    # (t, 3, 3)
    face = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    area = 0.5 * np.linalg.norm(face, axis=1)
    if not area.sum() > 0.0:
        raise MeshFileError("expected triangles with an area, found all of zero area")
    import trimesh  # (with the file's reading: files.py says why not at import)

    mesh = trimesh.Trimesh(vertices, faces, process=True)      # merged corners: watertight?
    closed = bool(mesh.is_watertight)
    apex = (np.asarray(mesh.center_mass, np.float64) if closed and abs(mesh.volume) > 0.0
            else 0.5 * (p.reshape(-1, 3).min(0) + p.reshape(-1, 3).max(0)))
    if not np.isfinite(apex).all():
        apex = p.reshape(-1, 3).mean(0)
    volume = np.abs(np.einsum("ij,ij->i", p[:, 0] - apex,
                              np.cross(p[:, 1] - apex, p[:, 2] - apex))) / 6.0
    records = np.zeros(len(faces), TRIANGLE)
    unit_face = face / np.maximum(np.linalg.norm(face, axis=1, keepdims=True), 1e-300)
    corner_normals = (np.asarray(normals, np.float64)[faces] if normals is not None
                      else np.repeat(unit_face[:, None, :], 3, axis=1))
    for k, (corner, normal) in enumerate((("a", "na"), ("b", "nb"), ("c", "nc"))):
        records[corner][:, :3] = p[:, k]
        records[normal][:, :3] = corner_normals[:, k]
    threshold, alias = alias_table(area)
    records["a"][:, 3] = threshold
    records["b"][:, 3] = alias.astype(np.uint32).view(np.float32)
    if closed and volume.sum() > 0.0:
        threshold, alias = alias_table(volume)
    records["c"][:, 3] = threshold
    records["na"][:, 3] = alias.astype(np.uint32).view(np.float32)
    header = np.zeros(4, np.float32)
    header[:3] = apex
    data = header.tobytes() + records.tobytes()
    return MeshShapeData(data, hashlib.sha256(data).hexdigest()[:16], closed, len(faces))


@lru_cache(maxsize=32)
def _cached(path: str, size: int, mtime_ns: int) -> MeshShapeData:
    mesh = read_mesh_file(path)
    try:
        return build_mesh_shape(mesh.vertices, mesh.faces, mesh.normals)
    except MeshFileError as exc:
        raise MeshFileError(f"{exc} in '{path}'") from None


def mesh_shape_data(path: Path) -> MeshShapeData:
    """The mesh's buffer, built once per version of the file; MeshFileError if unusable."""
    try:
        stat = path.stat()
    except OSError:
        read_mesh_file(path)   # raises a MeshFileError saying why
        raise
    return _cached(str(path), stat.st_size, stat.st_mtime_ns)


def shape_problem(shape, resolve) -> str | None:
    """Why a mesh shape cannot be used, as "shape.<field>: ...", or None."""
    if shape.kind != "mesh" or not shape.path:
        return None
    try:
        data = mesh_shape_data(resolve(shape.path))
    except MeshFileError as exc:
        return f"shape.path: {exc}"
    if not shape.surface and not data.closed:
        return (f"shape.surface: expected true for a mesh that is not closed ('{shape.path}' "
                f"has open edges, so it has no volume to sample), found false")
    return None


def check_shape_file(shape, resolve) -> None:
    """The scene loader's check of a mesh shape's file: ValueError "shape.<field>: ..."."""
    problem = shape_problem(shape, resolve)
    if problem is not None:
        raise ValueError(problem)


def transform_rows(shape) -> tuple[tuple[float, ...], ...]:
    """EmitterParams.shape_x/y/z: the rows of scale x rotation, the offset in w."""
    m = shape.scale * rotation_matrix(shape.rotation_deg)
    return tuple((*(float(v) for v in m[r]), float(shape.offset[r])) for r in range(3))


class MeshShapeFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "mesh_shape"

    def applies(self, component) -> bool:
        return component.shape.kind == "mesh"

    def data(self, component, resolve) -> MeshShapeData:
        return mesh_shape_data(resolve(component.shape.path))

    def batch_key(self, component, resolve) -> tuple:
        return (self.data(component, resolve).digest,)

    def buffers(self, component, resolve) -> dict[str, bytes]:
        return {BUFFER: self.data(component, resolve).data}

    def includes(self, base: str) -> dict[str, str]:
        return {HOOK: MESH_SHAPE} if base in BIRTH_PASSES else {}

    def bindings(self, base: str, buffers: dict) -> dict:
        return {BUFFER: buffers[BUFFER]} if base in BIRTH_PASSES else {}

    def problem(self, component, resolve) -> str | None:
        return shape_problem(component.shape, resolve)
