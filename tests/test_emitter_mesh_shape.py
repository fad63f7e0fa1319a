"""The mesh emission shape (systems/emitter/mesh_shape.py, shaders/emitter/mesh_shape.wgsl) on
the software GPU, against numpy: births split between triangles by area (chi-square), lie on
their triangle after the transform, start along the face or interpolated vertex normals, fill a
non-convex closed volume uniformly and never leave it; alone and batched give the same bytes;
bad input is a one-line SceneError."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_emitter_batches import HEADER, same_as_alone

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene
from emberfx.model.transforms import rotation_matrix
from emberfx.systems.emitter.mesh_shape import alias_table

# the chi-square critical value at p = 0.001, one degree of freedom (a correct sampler fails
# one run in a thousand)
CHI2_1DOF = 10.83
# float32 positions of a few world units: births lie on their triangle within this
ON_TRIANGLE = 1e-5
# two triangles in the plane z = 0 whose areas are 1 : 3
TRIANGLES = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]],
                      [[2.0, 0.0, 0.0], [5.0, 0.0, 0.0], [2.0, 2.0, 0.0]]])
SCALE, ROTATION, OFFSET, POSITION = 0.5, (30.0, -45.0, 60.0), (0.25, -0.5, 1.0), (1.0, 2.0, -1.0)


def write_obj(path, triangles: np.ndarray) -> None:
    corners = triangles.reshape(-1, 3)
    path.write_text("".join(f"v {float(x)!r} {float(y)!r} {float(z)!r}\n" for x, y, z in corners)
                    + "".join(f"f {3 * k + 1} {3 * k + 2} {3 * k + 3}\n"
                              for k in range(len(triangles))))


def scene(tmp_path, shape: str, count: int, extra: str = "") -> str:
    path = tmp_path / "scene.toml"
    path.write_text(f"""
[scene]
fixed_dt = 0.02
[[entity]]
name = "m"
[entity.emitter]
capacity = {count}
rate = 0
bursts = [{{ time = 0.0, count = {count} }}]
lifetime = 100
gravity = [0, 0, 0]
position = [{", ".join(map(repr, POSITION))}]
shape = {shape}
{extra}
""")
    return str(path)


def born(path: str) -> dict:
    with Engine(load_scene(path), size=(32, 32)) as engine:
        engine.step()
        state = engine.state("m")
    return {k: v[state["alive"]].astype(np.float64) for k, v in state.items() if k != "alive"}


def world(points: np.ndarray) -> np.ndarray:
    """Mesh coordinates to world ones: scaled, turned, moved by the offset and the position."""
    return (SCALE * points) @ rotation_matrix(ROTATION).T + np.add(OFFSET, POSITION)


def shape_text(path, surface: bool = True) -> str:
    return (f'{{ kind = "mesh", path = "{path}", surface = {str(surface).lower()}, '
            f'scale = {SCALE}, rotation_deg = [{", ".join(map(repr, ROTATION))}], '
            f'offset = [{", ".join(map(repr, OFFSET))}] }}')


def triangle_of(points: np.ndarray, triangles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each point, the triangle (world) it lies nearest to the plane and inside of, and
    that distance; a point inside none gets distance inf."""
    best = np.full(len(points), np.inf)
    which = np.full(len(points), -1)
    for k, (a, b, c) in enumerate(triangles):
        n = np.cross(b - a, c - a)
        n /= np.linalg.norm(n)
        d = np.abs((points - a) @ n)
        # barycentric coordinates of the projection
        v0, v1, v2 = b - a, c - a, points - a
        d00, d01, d11 = v0 @ v0, v0 @ v1, v1 @ v1
        d20, d21 = v2 @ v0, v2 @ v1
        den = d00 * d11 - d01 * d01
        v = (d11 * d20 - d01 * d21) / den
        w = (d00 * d21 - d01 * d20) / den
        tol = 1e-6
        inside = (v >= -tol) & (w >= -tol) & (v + w <= 1 + tol)
        d = np.where(inside, d, np.inf)
        closer = d < best
        best[closer], which[closer] = d[closer], k
    return which, best


def test_alias_table_gives_each_index_its_weight():
    """The host's table, read as the shader reads it, gives index k with weight k / sum."""
    weights = np.array([0.0, 1.0, 2.0, 3.0, 10.0, 0.5])
    threshold, alias = alias_table(weights)
    n = len(weights)
    exact = np.zeros(n)
    for j in range(n):   # bucket j is uniform; its coin keeps j below the threshold
        exact[j] += threshold[j] / n
        exact[alias[j]] += (1.0 - threshold[j]) / n
    assert np.allclose(exact, weights / weights.sum(), atol=1e-12)


def test_surface_births_split_by_area_and_lie_on_their_triangle(tmp_path):
    write_obj(tmp_path / "two.obj", TRIANGLES)
    count = 200_000
    state = born(scene(tmp_path, shape_text(tmp_path / "two.obj"), count, "speed = 0"))
    assert len(state["position"]) == count
    placed = world(TRIANGLES.reshape(-1, 3)).reshape(-1, 3, 3)
    which, distance = triangle_of(state["position"], placed)
    assert (which >= 0).all(), f"{(which < 0).sum()} births off both triangles"
    assert distance.max() <= ON_TRIANGLE
    counts = np.bincount(which, minlength=2)
    expected = count * np.array([0.25, 0.75])
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < CHI2_1DOF, (counts, chi2)


def test_velocity_normal_follows_the_face_normals(tmp_path):
    write_obj(tmp_path / "two.obj", TRIANGLES)
    # a tent: the second triangle tilted, so the two faces' normals differ
    tent = TRIANGLES.copy()
    tent[1, 2, 2] = 1.5
    write_obj(tmp_path / "tent.obj", tent)
    state = born(scene(tmp_path, shape_text(tmp_path / "tent.obj"), 4096,
                       'speed = 2.0\nspread_deg = 0\nvelocity = "normal"'))
    placed = world(tent.reshape(-1, 3)).reshape(-1, 3, 3)
    normals = np.cross(placed[:, 1] - placed[:, 0], placed[:, 2] - placed[:, 0])
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    # the particles moved by v dt since birth: find their triangle where they were born
    start = state["position"] - state["velocity"] * state["age"][:, None]
    which, distance = triangle_of(start, placed)
    assert (which >= 0).all() and distance.max() <= ON_TRIANGLE
    assert set(np.unique(which)) == {0, 1}
    assert np.abs(state["velocity"] - 2.0 * normals[which]).max() < 1e-5


def test_velocity_normal_interpolates_the_file_normals(tmp_path):
    """A PLY triangle with its own vertex normals: each birth starts along the normal its
    barycentric coordinates blend (the face normal would be +z everywhere)."""
    normals = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.6, 0.0, 0.8]])
    corners = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    (tmp_path / "lit.ply").write_text(
        "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
        "property float z\nproperty float nx\nproperty float ny\nproperty float nz\n"
        "element face 1\nproperty list uchar int vertex_indices\nend_header\n"
        + "".join(f"{' '.join(str(float(v)) for v in p)} {' '.join(str(float(v)) for v in n)}\n"
                  for p, n in zip(corners, normals)) + "3 0 1 2\n")
    state = born(scene(tmp_path, '{ kind = "mesh", path = "lit.ply", surface = true }', 2048,
                       'speed = 1.0\nspread_deg = 0\nvelocity = "normal"'))
    local = state["position"] - state["velocity"] * state["age"][:, None] - POSITION
    # barycentric weights of (x, y) on the unit right triangle: (1 - x - y, x, y)
    w = np.stack([1 - local[:, 0] - local[:, 1], local[:, 0], local[:, 1]], 1)
    expected = w @ normals
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.abs(state["velocity"] - expected).max() < 1e-4
    assert expected[:, 0].max() > 0.3   # the blend varies: not the face normal


# closed, non-convex prisms over unit squares (x, y) of the plane, as (outline, cap triangles,
# squares): the L, star-shaped from its centre of mass, and a U, which is not (the arms' tips
# hide behind the gap: the volume sampler's 1 / m acceptance is what keeps them uniform)
PRISMS = {
    "L": ([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)],
          [(0, 1, 2), (0, 2, 3), (0, 3, 5), (3, 4, 5)], [(0, 0), (1, 0), (0, 1)]),
    "U": ([(0, 0), (3, 0), (3, 2), (2, 2), (2, 1), (1, 1), (1, 2), (0, 2)],
          [(0, 1, 4), (1, 2, 3), (1, 3, 4), (0, 4, 5), (0, 5, 7), (5, 6, 7)],
          [(0, 0), (1, 0), (2, 0), (0, 1), (2, 1)]),
}
HEIGHT = 0.5


def prism(outline, caps) -> np.ndarray:
    """The outline (counter-clockwise) extruded over z in [0, HEIGHT], as outward-wound
    triangles."""
    tris = []
    for a, b, c in caps:
        tris.append([(*outline[a], 0.0), (*outline[c], 0.0), (*outline[b], 0.0)])   # bottom
        tris.append([(*outline[a], HEIGHT), (*outline[b], HEIGHT), (*outline[c], HEIGHT)])
    for k in range(len(outline)):
        p, q = outline[k], outline[(k + 1) % len(outline)]
        tris.append([(*p, 0.0), (*q, 0.0), (*q, HEIGHT)])
        tris.append([(*p, 0.0), (*q, HEIGHT), (*p, HEIGHT)])
    return np.array(tris, np.float64)


@pytest.mark.parametrize("name", sorted(PRISMS))
def test_volume_births_fill_a_non_convex_mesh_uniformly(tmp_path, name):
    outline, caps, squares = PRISMS[name]
    write_obj(tmp_path / "solid.obj", prism(outline, caps))
    count = 60_000
    state = born(scene(tmp_path, '{ kind = "mesh", path = "solid.obj", surface = false }',
                       count, "speed = 0"))
    p = state["position"] - POSITION
    assert len(p) == count
    tol = 1e-5
    square = np.full(len(p), -1)
    for k, (x, y) in enumerate(squares):
        inside = ((p[:, 0] >= x - tol) & (p[:, 0] <= x + 1 + tol)
                  & (p[:, 1] >= y - tol) & (p[:, 1] <= y + 1 + tol))
        square[inside & (square < 0)] = k
    in_z = (p[:, 2] >= -tol) & (p[:, 2] <= HEIGHT + tol)
    outside = (square < 0) | ~in_z
    assert not outside.any(), f"{outside.sum()} births outside, e.g. {p[outside][:3]}"
    # equal shares of cells a quarter unit across (chi-square; critical value at p = 0.001 by
    # the Wilson-Hilferty approximation): a sampler off by a factor in any part fails
    cell = (np.floor(p[:, 0].clip(0, 2.999) * 4) * 16 + np.floor(p[:, 1].clip(0, 1.999) * 4))
    cells = np.array([(4 * x + i) * 16 + 4 * y + j for x, y in squares
                      for i in range(4) for j in range(4)])
    counts = np.array([(cell == c).sum() for c in cells])
    assert counts.sum() == count
    expected = count / len(cells)
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    k = len(cells) - 1
    critical = k * (1 - 2 / (9 * k) + 3.09 * math.sqrt(2 / (9 * k))) ** 3
    assert chi2 < critical, (chi2, critical, counts)
    # and uniform in height (the halves of z, within 3.3 standard deviations)
    upper = int((p[:, 2] > HEIGHT / 2).sum())
    assert abs(upper - count / 2) < 3.3 * math.sqrt(count / 4)


def test_mesh_emitters_alone_and_batched_give_the_same_bytes(tmp_path):
    write_obj(tmp_path / "two.obj", TRIANGLES)
    write_obj(tmp_path / "ell.obj", prism(*PRISMS["L"][:2]))
    text = HEADER
    for k, (mesh, surface, extra) in enumerate([
            ("two.obj", "true", 'velocity = "normal"'), ("two.obj", "true", ""),
            ("ell.obj", "false", ""), ("ell.obj", "false", 'blend = "alpha"'),
            ("two.obj", "true", "")]):
        rotation = f"rotation_deg = [{10 * k}, {5 * k}, 0], scale = {0.5 + 0.25 * k}"
        text += f"""
[[entity]]
name = "mesh{k}"
[entity.emitter]
capacity = {300 + 97 * k}
rate = 900
lifetime = [0.2, 0.6]
speed = [0.5, 2.0]
position = [{k - 2.0}, 0.0, 0.0]
size = 0.05
{extra}
shape = {{ kind = "mesh", path = "{tmp_path / mesh}", surface = {surface}, {rotation} }}
"""
    same_as_alone(text, steps=12)
    with Engine(loads_scene(text, path="<batches>")) as engine:   # and they did batch
        engine.step()
        batches = engine.system_of("mesh0", "emitter").batches
        members = sorted(sorted(p.entity.name for p in b.members) for b in batches)
    # by mesh file (the batch key holds its digest); the alpha one batches with its like
    assert members == [["mesh0", "mesh1", "mesh4"], ["mesh2", "mesh3"]]


@pytest.mark.parametrize("shape, extra, pieces", [
    ('{ kind = "mesh" }', "", ["emitter.shape.path", "*.obj", "found none"]),
    ('{ kind = "mesh", path = "rock.stl" }', "", ["emitter.shape.path", "*.ply", "rock.stl"]),
    ('{ kind = "mesh", path = "missing.obj", surface = true }', "",
     ["emitter.shape.path", "missing.obj"]),
    ('{ kind = "mesh", path = "two.obj", surface = false }', "",
     ["emitter.shape.surface", "not closed", "found false"]),
    ('{ kind = "sphere" }', 'velocity = "normal"', ["emitter.velocity", "mesh surface",
                                                     '"sphere"']),
    ('{ kind = "mesh", path = "two.obj", surface = true, scale = 0.0 }', "",
     ["emitter.shape.scale", "> 0"]),
])
def test_bad_mesh_shapes_are_one_line_scene_errors(tmp_path, shape, extra, pieces):
    write_obj(tmp_path / "two.obj", TRIANGLES)
    path = scene(tmp_path, shape, 16, extra)
    with pytest.raises(SceneError) as caught:
        load_scene(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(path)
    for piece in pieces:
        assert piece in message, (piece, message)


def test_an_edit_into_a_mesh_shape_rebuilds_the_emitter(tmp_path):
    write_obj(tmp_path / "two.obj", TRIANGLES)
    with Engine(loads_scene("""
[[entity]]
name = "m"
[entity.emitter]
capacity = 512
rate = 5000
speed = 0
gravity = [0, 0, 0]
""", path=str(tmp_path / "scene.toml")), size=(32, 32)) as engine:
        engine.step(2)
        emitter = engine.components_of("m")["emitter"]
        emitter.shape.path = "two.obj"
        emitter.shape.surface = True
        emitter.shape.kind = "mesh"
        emitter.shape.scale = SCALE
        engine.step(3)
        state = engine.state("m")
    p = state["position"][state["alive"]].astype(np.float64)
    assert len(p) > 0
    _, distance = triangle_of(p, SCALE * TRIANGLES)
    assert distance.max() <= ON_TRIANGLE
