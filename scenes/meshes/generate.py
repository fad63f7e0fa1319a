"""Writes the meshes the bundled scenes emit from (run it from this folder to remake them):

knot.obj  a (2, 3) torus knot, a closed tube 0.16 thick around a curve about 2.4 across,
          3,072 triangles with smooth vertex normals (``vn``)
orb.ply   an icosphere of radius 0.7 (1,280 triangles, no normals: births take the face
          normals), closed, so its volume can be sampled too
"""

from __future__ import annotations

import numpy as np
import trimesh


def torus_knot(p: int = 2, q: int = 3, segments: int = 192, sides: int = 8,
               tube: float = 0.16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices, triangles and unit vertex normals of a tube around the (p, q) torus knot."""
    t = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    r = 0.8 + 0.35 * np.cos(q * t)
    curve = np.stack([r * np.cos(p * t), 0.35 * np.sin(q * t), r * np.sin(p * t)], 1)
    tangent = np.roll(curve, -1, 0) - np.roll(curve, 1, 0)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    side = np.cross(tangent, np.array([0.0, 1.0, 0.0]))
    side /= np.linalg.norm(side, axis=1, keepdims=True)
    up = np.cross(side, tangent)
    a = np.linspace(0.0, 2 * np.pi, sides, endpoint=False)
    normals = (np.cos(a)[None, :, None] * side[:, None, :]
               + np.sin(a)[None, :, None] * up[:, None, :])          # (segments, sides, 3)
    vertices = curve[:, None, :] + tube * normals
    faces = []
    for i in range(segments):
        for j in range(sides):
            v00 = i * sides + j
            v01 = i * sides + (j + 1) % sides
            v10 = ((i + 1) % segments) * sides + j
            v11 = ((i + 1) % segments) * sides + (j + 1) % sides
            faces += [(v00, v10, v11), (v00, v11, v01)]
    faces = np.array(faces)
    vertices, normals = vertices.reshape(-1, 3), normals.reshape(-1, 3)
    mesh = trimesh.Trimesh(vertices, faces, process=False)
    if mesh.volume < 0:   # wind the triangles outwards
        faces = faces[:, ::-1]
    return vertices, faces, normals


def write_obj(path: str, vertices, faces, normals) -> None:
    with open(path, "w") as f:
        f.write("# a (2, 3) torus knot tube, written by generate.py\n")
        f.writelines(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in vertices)
        f.writelines(f"vn {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in normals)
        f.writelines(f"f {a + 1}//{a + 1} {b + 1}//{b + 1} {c + 1}//{c + 1}\n"
                     for a, b, c in faces)


if __name__ == "__main__":
    write_obj("knot.obj", *torus_knot())
    orb = trimesh.creation.icosphere(subdivisions=3, radius=0.7)
    orb.export("orb.ply", encoding="ascii", vertex_normal=False)
