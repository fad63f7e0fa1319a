"""Writes the meshes the bundled scenes emit from (run it from this folder to remake them):

knot.obj  a (2, 3) torus knot, a closed tube 0.16 thick around a curve about 2.4 across,
          3,072 triangles with smooth vertex normals (``vn``)
orb.ply   an icosphere of radius 0.7 (1,280 triangles, no normals: births take the face
          normals), closed, so its volume can be sampled too
arch.obj  the stone arch of ../volumes/arch.npy as sdf.toml places it (turned 90 degrees about y):
          the upper half of a torus (ring radius 1.2, tube 0.32) standing on the ground at
          y = -1.5, and a boulder of radius 0.45 under it, with smooth vertex normals (``vn``)
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


def arch(segments: int = 64, sides: int = 24) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices, triangles and unit vertex normals of the arch: a half torus in the x-y plane
    (reaching 0.1 below the ground, y = -1.5) and a boulder, both turned 90 degrees about y
    (x, z) -> (z, -x), the rotation sdf.toml gives the SDF collider."""
    ground = -1.5
    below = np.arcsin(0.1 / 1.52)                      # the tube's ends sink under the ground
    t = np.linspace(-below, np.pi + below, segments + 1)
    a = np.linspace(0.0, 2 * np.pi, sides, endpoint=False)
    ring = np.stack([np.cos(t), np.sin(t), np.zeros_like(t)], 1)      # (segments + 1, 3)
    normals = (np.cos(a)[None, :, None] * ring[:, None, :]
               + np.sin(a)[None, :, None] * np.array([0.0, 0.0, 1.0]))
    vertices = 1.2 * ring[:, None, :] + 0.32 * normals + np.array([0.0, ground, 0.0])
    faces = []
    for i in range(segments):
        for j in range(sides):
            v00, v01 = i * sides + j, i * sides + (j + 1) % sides
            v10, v11 = (i + 1) * sides + j, (i + 1) * sides + (j + 1) % sides
            faces += [(v00, v10, v11), (v00, v11, v01)]
    boulder = trimesh.creation.icosphere(subdivisions=3, radius=0.45)
    vertices = np.concatenate([vertices.reshape(-1, 3), boulder.vertices + [0.35, -1.3, 0.2]])
    normals = np.concatenate([normals.reshape(-1, 3), boulder.vertices / 0.45])
    faces = np.concatenate([np.array(faces), boulder.faces + (segments + 1) * sides])
    turn = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])   # about y, 90 degrees
    return vertices @ turn.T, faces, normals @ turn.T


def write_obj(path: str, vertices, faces, normals, what: str) -> None:
    with open(path, "w") as f:
        f.write(f"# {what}, written by generate.py\n")
        f.writelines(f"v {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in vertices)
        f.writelines(f"vn {x:.6f} {y:.6f} {z:.6f}\n" for x, y, z in normals)
        f.writelines(f"f {a + 1}//{a + 1} {b + 1}//{b + 1} {c + 1}//{c + 1}\n"
                     for a, b, c in faces)


if __name__ == "__main__":
    write_obj("knot.obj", *torus_knot(), "a (2, 3) torus knot tube")
    write_obj("arch.obj", *arch(), "the stone arch of sdf.toml")
    orb = trimesh.creation.icosphere(subdivisions=3, radius=0.7)
    orb.export("orb.ply", encoding="ascii", vertex_normal=False)
