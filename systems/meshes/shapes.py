"""The meshes a particle can be: built-in ``cube``, ``sphere`` and ``tetra``, or a Wavefront OBJ
file (systems/meshes/obj.py), as flat triangle lists (pure numpy).

Every mesh is centred on the origin and fits the cube [-0.5, 0.5]^3, so a particle of ``size`` s
is a mesh s world units across (the cube's edge, the sphere's diameter). Triangles wind
counter-clockwise seen from outside; normals are unit vectors pointing outwards (per face for
the cube and the tetrahedron, per vertex for the sphere). The draw reads the vertices by
``vertex_index``, three per triangle, so nothing is indexed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BUILT_IN = ("cube", "sphere", "tetra")
# the built-in sphere: few triangles (168), as every vertex runs once per particle
SPHERE_RINGS = 8        # latitude bands, pole to pole
SPHERE_SEGMENTS = 12    # longitude segments


@dataclass(frozen=True)
class TriangleMesh:
    positions: np.ndarray   # (3 t, 3) float32: triangle k is rows 3k .. 3k + 2
    normals: np.ndarray     # (3 t, 3) float32, unit, outwards

    @property
    def vertex_count(self) -> int:
        return len(self.positions)


def built_in_mesh(name: str) -> TriangleMesh:
    return {"cube": cube_mesh, "sphere": sphere_mesh, "tetra": tetra_mesh}[name]()


def flat_shaded(positions: np.ndarray) -> TriangleMesh:
    """Triangles (3 t, 3) with each face's own normal on its three vertices."""
    p = np.asarray(positions, np.float64).reshape(-1, 3, 3)
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-30)
    return TriangleMesh(p.reshape(-1, 3).astype(np.float32),
                        np.repeat(n, 3, axis=0).astype(np.float32))


def cube_mesh() -> TriangleMesh:
    """The cube [-0.5, 0.5]^3, two triangles per face."""
    triangles = []
    for axis in range(3):
        for sign in (1.0, -1.0):
            u, v = (axis + 1) % 3, (axis + 2) % 3   # u x v = +axis
            corners = []
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                c = np.zeros(3)
                c[axis], c[u], c[v] = 0.5 * sign, 0.5 * a * sign, 0.5 * b
                corners.append(c)
            triangles += [corners[0], corners[1], corners[2], corners[0], corners[2], corners[3]]
    return flat_shaded(np.array(triangles))


def tetra_mesh() -> TriangleMesh:
    """A regular tetrahedron with alternate corners of the cube [-0.5, 0.5]^3."""
    a, b, c, d = (np.array(v, np.float64) * 0.5
                  for v in ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)))
    faces = [(a, b, c), (a, d, b), (a, c, d), (b, d, c)]
    return flat_shaded(np.array([corner for face in faces for corner in face]))


def sphere_mesh(rings: int = SPHERE_RINGS, segments: int = SPHERE_SEGMENTS) -> TriangleMesh:
    """A UV sphere of diameter 1 with smooth normals, its poles on the y axis."""
    theta = np.linspace(0.0, np.pi, rings + 1)[:, None]
    phi = np.linspace(0.0, 2.0 * np.pi, segments + 1)[None, :]
    unit = np.stack(np.broadcast_arrays(np.sin(theta) * np.cos(phi), np.cos(theta),
                                        -np.sin(theta) * np.sin(phi)), -1)
    a, b = unit[:-1, :-1], unit[:-1, 1:]
    c, d = unit[1:, :-1], unit[1:, 1:]
    upper = np.stack([a, c, d], 2)[:-1].reshape(-1, 3)   # the last band's are degenerate
    lower = np.stack([a, d, b], 2)[1:].reshape(-1, 3)    # the first band's are degenerate
    normals = np.concatenate([upper, lower])
    return TriangleMesh((0.5 * normals).astype(np.float32), normals.astype(np.float32))


def vertex_records(mesh: TriangleMesh, dtype) -> np.ndarray:
    """The mesh as meshes/types.wgsl MeshVertex records (position, normal as vec4f)."""
    records = np.zeros(mesh.vertex_count, dtype)
    records["position"][:, :3] = mesh.positions
    records["position"][:, 3] = 1.0
    records["normal"][:, :3] = mesh.normals
    return records


def mesh_problem(component) -> str | None:
    """What is wrong with an emitter's ``mesh`` ("mesh: expected ..., found ..."), or None; the
    file itself is read by ``check_mesh_file`` when the scene is loaded."""
    mesh = component.mesh
    if mesh is None:
        return None
    if mesh not in BUILT_IN and not mesh.lower().endswith(".obj"):
        return (f'mesh: expected "cube", "sphere", "tetra" or a Wavefront file "*.obj", '
                f"found {mesh!r}")
    if component.size_unit != "world":
        return (f'size_unit: expected "world" for a mesh emitter (meshes have a size in the '
                f'world), found "{component.size_unit}"')
    return None
