"""Unit meshes of the drawn collider shapes and the transform that places them (pure numpy).

Each shape has one unit mesh, uploaded once per entity; the entity's ``model_matrix`` (rewritten
when a live field changes) scales, turns and moves it:
- sphere: radius 1 around the origin (a UV sphere), scaled by ``radius``, moved to ``center``;
- box: the cube [-1, 1]^3, scaled by ``half_size``, turned by ``rotation_deg``, moved to ``center``;
- plane: the square [-0.5, 0.5]^2 in the local x-z plane (normal +y), scaled by ``extent`` and
  turned so +y is the plane's ``normal``, centred on ``point``.

Triangles wind counter-clockwise seen from outside (the side the normal points to); ``edges``
are the wireframe's lines, a readable subset of the triangle edges.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from emberfx.model.transforms import rotation_matrix

SPHERE_RINGS = 24       # latitude bands, pole to pole
SPHERE_SEGMENTS = 48    # longitude segments; the silhouette is a 48-gon (area 0.3% below pi r^2)
SPHERE_WIRE_EVERY = 3   # the wireframe draws every 3rd latitude and meridian
PLANE_CELLS = 8         # the floor square's grid, for its wireframe


@dataclass(frozen=True)
class Mesh:
    positions: np.ndarray   # (n, 3) float32, local
    normals: np.ndarray     # (n, 3) float32, local unit normals, outwards
    triangles: np.ndarray   # (3 t,) uint32, counter-clockwise seen from outside
    edges: np.ndarray       # (2 e,) uint32, the wireframe's lines


def sphere_mesh(rings: int = SPHERE_RINGS, segments: int = SPHERE_SEGMENTS,
                wire_every: int = SPHERE_WIRE_EVERY) -> Mesh:
    """A UV sphere of radius 1 with its poles on the y axis; the seam column is duplicated."""
    theta = np.linspace(0.0, np.pi, rings + 1)[:, None]        # from the north pole
    phi = np.linspace(0.0, 2.0 * np.pi, segments + 1)[None, :]
    points = np.stack(np.broadcast_arrays(np.sin(theta) * np.cos(phi), np.cos(theta),
                                          -np.sin(theta) * np.sin(phi)), -1).reshape(-1, 3)
    grid = np.arange((rings + 1) * (segments + 1)).reshape(rings + 1, segments + 1)
    a, b = grid[:-1, :-1], grid[:-1, 1:]     # a ring's corners ...
    c, d = grid[1:, :-1], grid[1:, 1:]       # ... and the next ring's, further south
    upper = np.stack([a, c, d], -1)[:-1]     # degenerate in the last band (c = d: south pole)
    lower = np.stack([a, d, b], -1)[1:]      # degenerate in the first band (a = b: north pole)
    triangles = np.concatenate([upper.reshape(-1, 3), lower.reshape(-1, 3)])
    latitudes = grid[wire_every:rings:wire_every]
    meridians = grid[:, :segments:wire_every].T
    edges = np.concatenate([_polyline_edges(latitudes), _polyline_edges(meridians)])
    return Mesh(points.astype(np.float32), points.astype(np.float32),
                triangles.reshape(-1).astype(np.uint32), edges.reshape(-1).astype(np.uint32))


def box_mesh() -> Mesh:
    """The cube [-1, 1]^3: four vertices per face (flat normals), twelve wireframe edges."""
    points: list[np.ndarray] = []
    normals: list[np.ndarray] = []
    triangles: list[int] = []
    for axis in range(3):
        for sign in (1.0, -1.0):
            normal = np.zeros(3)
            normal[axis] = sign
            u = np.roll(np.eye(3)[0], axis + 1) * sign   # u x v = normal: counter-clockwise
            v = np.roll(np.eye(3)[0], axis + 2)
            base = len(points)
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                points.append(normal + du * u + dv * v)
                normals.append(normal)
            triangles += [base, base + 1, base + 2, base, base + 2, base + 3]
    positions = np.array(points)
    # one vertex per corner, and the corner pairs that differ along one axis
    corners: dict[tuple, int] = {}
    for index, p in enumerate(positions):
        corners.setdefault(tuple(p), index)
    edges = [(i, j) for p, i in corners.items() for q, j in corners.items()
             if i < j and sum(x != y for x, y in zip(p, q)) == 1]
    return Mesh(positions.astype(np.float32), np.array(normals, np.float32),
                np.array(triangles, np.uint32), np.array(edges, np.uint32).reshape(-1))


def plane_mesh(cells: int = PLANE_CELLS) -> Mesh:
    """The square [-0.5, 0.5]^2 in the x-z plane facing +y, as cells x cells quads."""
    ticks = np.linspace(-0.5, 0.5, cells + 1)
    x, z = np.meshgrid(ticks, ticks)               # [row along z, column along x]
    positions = np.stack([x, np.zeros_like(x), z], -1).reshape(-1, 3)
    normals = np.tile([0.0, 1.0, 0.0], (len(positions), 1))
    grid = np.arange((cells + 1) ** 2).reshape(cells + 1, cells + 1)
    a, b = grid[:-1, :-1], grid[:-1, 1:]     # b: +x of a
    c, d = grid[1:, :-1], grid[1:, 1:]       # c: +z of a
    # seen from +y, with x to the right, +z points down the view: a -> c -> d is counter-clockwise
    triangles = np.concatenate([np.stack([a, c, d], -1).reshape(-1, 3),
                                np.stack([a, d, b], -1).reshape(-1, 3)])
    edges = np.concatenate([_polyline_edges(grid), _polyline_edges(grid.T)])
    return Mesh(positions.astype(np.float32), normals.astype(np.float32),
                triangles.reshape(-1).astype(np.uint32), edges.reshape(-1).astype(np.uint32))


def _polyline_edges(lines: np.ndarray) -> np.ndarray:
    """(k, m) vertex indices, one polyline per row -> (k (m - 1), 2) line segments."""
    return np.stack([lines[:, :-1], lines[:, 1:]], -1).reshape(-1, 2)


MESHES = {"sphere": sphere_mesh, "box": box_mesh, "plane": plane_mesh}
"""shape -> its unit mesh; the shapes that can be drawn"""


def plane_basis(normal) -> np.ndarray:
    """(3, 3) rotation whose columns are (tangent, unit normal, bitangent), right-handed: the
    floor square's local x, y, z. For the normal +y it is the identity, so a floor's grid
    follows the world's x and z axes."""
    n = np.asarray(normal, np.float64)
    n = n / np.linalg.norm(n)
    hint = np.array([0.0, 0.0, 1.0]) if abs(n[2]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t = np.cross(n, hint)
    t /= np.linalg.norm(t)
    return np.column_stack([t, n, np.cross(t, n)])


def model_matrix(collider) -> np.ndarray:
    """(4, 4) local -> world for ``collider``'s unit mesh (column vectors), float64."""
    if collider.shape == "sphere":
        linear, origin = np.eye(3) * collider.radius, collider.center
    elif collider.shape == "box":
        linear = rotation_matrix(collider.rotation_deg) @ np.diag(collider.half_size)
        origin = collider.center
    elif collider.shape == "plane":
        e = collider.extent
        linear, origin = plane_basis(collider.normal) @ np.diag([e, 1.0, e]), collider.point
    else:
        raise ValueError(f"shape: expected one of {', '.join(MESHES)}, found '{collider.shape}'")
    model = np.eye(4)
    model[:3, :3] = linear
    model[:3, 3] = origin
    return model
