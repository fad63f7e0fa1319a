"""Visible colliders on a real GPU (lavapipe in CI): the drawn silhouettes against geometry worked
out here, independently of the meshes.

An orthographic camera looks down -z at the origin: the view is HEIGHT world units tall over
SIZE pixels, so a world point (x, y) lands on pixel column (x - cx) PPU + SIZE / 2 and row
SIZE / 2 - (y - cy) PPU. On a black background, a pixel is covered when any channel is above 0
(the darkest lit point of a white solid, ambient only, is about 30 levels). Rasterisation covers a
pixel whose centre is inside the projected triangle, so pixel centres more than EDGE pixels inside
the exact outline must be covered and those more than EDGE outside must not be: that absorbs the
mesh's polygon approximation (a 48-gon's sides are 0.1 px inside the circle at this size) and
the rounding of edges.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.model.transforms import rotation_matrix
from emberfx.systems.colliders.meshes import MESHES, model_matrix, plane_basis
from emberfx.systems.colliders.system import FLOOR_CELL, FLOOR_CONTRAST, MOTTLE_CONTRAST

SIZE = 128          # pixels, square
HEIGHT = 4.0        # world units shown from bottom to top
PPU = SIZE / HEIGHT  # pixels per world unit
EDGE = 1.0          # pixels: the band around an exact outline where coverage may go either way

# pixel centres in world units (x right, y up), shape (SIZE, SIZE) each
_COLUMNS = (np.arange(SIZE) + 0.5 - SIZE / 2) / PPU
WORLD_X, WORLD_Y = np.meshgrid(_COLUMNS, -_COLUMNS)


def scene_text(colliders: str, extra: str = "") -> str:
    return f"""
[scene]
name = "collider-draw"
size = [{SIZE}, {SIZE}]
background = "#000000"
[render]
msaa = 1
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = {HEIGHT}
{colliders}
{extra}
"""


def collider(name: str, **fields) -> str:
    lines = "".join(f"{key} = {_toml(value)}\n" for key, value in fields.items())
    return f'\n[[entity]]\nname = "{name}"\n[entity.collider]\n{lines}'


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(float(value))


def make(text: str) -> Engine:
    return Engine(loads_scene(text), size=(SIZE, SIZE))


def picture(text: str, steps: int = 0) -> np.ndarray:
    engine = make(text)
    try:
        if steps:
            engine.step(steps)
        return engine.render()
    finally:
        engine.close()


def covered(image: np.ndarray) -> np.ndarray:
    return image[..., :3].max(axis=2) > 0


def linear(image: np.ndarray) -> np.ndarray:
    """sRGB bytes -> linear light, RGB."""
    c = image[..., :3].astype(np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def centroid(mask: np.ndarray) -> np.ndarray:
    """(x, y) of the covered pixels' centres, world units."""
    return np.array([WORLD_X[mask].mean(), WORLD_Y[mask].mean()])


def assert_silhouette(mask: np.ndarray, signed_distance: np.ndarray) -> None:
    """``signed_distance``: of every pixel centre to the expected outline, pixels, negative
    inside. Inside by more than EDGE: covered; outside by more than EDGE: not."""
    inside, outside = signed_distance < -EDGE, signed_distance > EDGE
    assert inside.sum() > 100, "the expected silhouette is too small to test"
    missing, extra = (inside & ~mask).sum(), (outside & mask).sum()
    assert missing == 0 and extra == 0, f"{missing} pixels missing, {extra} outside the outline"


# ----------------------------------------------------------------------------- the meshes (numpy)

@pytest.mark.parametrize("shape", sorted(MESHES))
def test_unit_meshes_wind_outwards_and_index_their_own_vertices(shape):
    mesh = MESHES[shape]()
    p = mesh.positions.astype(np.float64)
    t = mesh.triangles.reshape(-1, 3)
    face = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])
    assert (np.linalg.norm(face, axis=1) > 1e-6).all()                     # no degenerate ones
    assert (np.einsum("ij,ij->i", face, mesh.normals[t].sum(axis=1)) > 0).all()   # CCW outside
    assert np.allclose(np.linalg.norm(mesh.normals, axis=1), 1.0, atol=1e-6)
    assert mesh.triangles.max() < len(p) and mesh.edges.max() < len(p)
    assert len(mesh.edges) % 2 == 0 and 0 < len(mesh.edges) // 2 < len(t) * 3


@pytest.mark.parametrize("normal", [(0, 1, 0), (0, 0, 1), (0, 0, -3), (1, 1, 0), (0.2, -1, 0.1)])
def test_plane_basis_turns_local_y_into_the_normal(normal):
    basis = plane_basis(normal)
    assert np.allclose(basis.T @ basis, np.eye(3), atol=1e-12)
    assert np.isclose(np.linalg.det(basis), 1.0)
    assert np.allclose(basis[:, 1], np.asarray(normal) / np.linalg.norm(normal))


def test_a_floor_grid_follows_the_world_axes():
    assert np.allclose(plane_basis((0.0, 1.0, 0.0)), np.eye(3))


# ----------------------------------------------------------------------------- silhouettes

def test_sphere_covers_a_disk_of_pi_r_squared(gpu):
    center, radius = (0.3, -0.2, 0.0), 1.1
    mask = covered(picture(scene_text(collider("ball", shape="sphere", center=center,
                                               radius=radius, color="#ffffff"))))
    distance = np.hypot(WORLD_X - center[0], WORLD_Y - center[1])
    assert_silhouette(mask, (distance - radius) * PPU)
    expected = math.pi * (radius * PPU) ** 2
    assert abs(mask.sum() / expected - 1.0) < 0.01        # 3893 pixels, within 1%
    assert np.allclose(centroid(mask), center[:2], atol=0.3 / PPU)


def _box_distance(half_size, rotation, center) -> np.ndarray:
    """Signed distance (pixels) to the convex hull of the box's 8 corners projected on x-y."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    world = (corners * half_size) @ rotation_matrix(rotation).T + center
    hull = _convex_hull(world[:, :2])
    points = np.stack([WORLD_X, WORLD_Y], -1)
    worst = np.full(WORLD_X.shape, -np.inf)
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):   # counter-clockwise edges
        edge = b - a
        outward = np.array([edge[1], -edge[0]]) / np.linalg.norm(edge)
        worst = np.maximum(worst, (points - a) @ outward)
    return worst * PPU


def _turn(o, a, b) -> float:
    """z of (a - o) x (b - o): positive for a counter-clockwise turn."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _convex_hull(points: np.ndarray) -> np.ndarray:
    """Andrew's monotone chain, counter-clockwise."""
    pts = sorted(map(tuple, np.round(points, 12)))

    def half(sequence):
        chain: list = []
        for p in sequence:
            while len(chain) >= 2 and _turn(chain[-2], chain[-1], p) <= 0:
                chain.pop()
            chain.append(p)
        return chain[:-1]

    return np.array(half(pts) + half(pts[::-1]))


def test_box_turned_45_degrees_covers_a_diamond(gpu):
    half = 0.8
    mask = covered(picture(scene_text(collider("crate", shape="box", half_size=(half,) * 3,
                                               rotation_deg=(0, 0, 45), color="#ffffff"))))
    # by hand: a square turned 45 degrees about z is |x| + |y| <= half sqrt(2)
    distance = (np.abs(WORLD_X) + np.abs(WORLD_Y) - half * math.sqrt(2)) / math.sqrt(2)
    assert_silhouette(mask, distance * PPU)
    # its edges run along the pixel diagonals, so the pixel count differs from the area (2621)
    # by up to half the perimeter: compare with the pixel centres inside the exact outline
    assert abs(mask.sum() / (distance < 0).sum() - 1.0) < 0.005


@pytest.mark.parametrize("half_size,rotation", [
    ((1.2, 0.5, 0.7), (0.0, 0.0, 30.0)),
    ((0.6, 0.9, 0.4), (35.0, 50.0, 10.0)),   # all three faces turned towards the camera: a hexagon
])
def test_box_silhouette_is_the_hull_of_its_turned_corners(gpu, half_size, rotation):
    center = (-0.25, 0.3, 0.1)
    mask = covered(picture(scene_text(collider("crate", shape="box", center=center,
                                               half_size=half_size, rotation_deg=rotation,
                                               color="#ffffff"))))
    assert_silhouette(mask, _box_distance(np.array(half_size), rotation, np.array(center)))


@pytest.mark.parametrize("normal,height_share", [((0.0, 0.0, 1.0), 1.0),
                                                 ((0.0, 0.0, -1.0), 1.0),   # seen from behind
                                                 ((0.0, 1.0, 1.0), math.sqrt(0.5))])
def test_plane_covers_an_extent_square(gpu, normal, height_share):
    point, extent = (0.2, 0.1, 0.0), 2.5
    mask = covered(picture(scene_text(collider("floor", shape="plane", point=point,
                                               normal=normal, extent=extent,
                                               color="#ffffff"))))
    # the square's local x is world x for these normals; its local z is foreshortened in y
    half_w, half_h = extent / 2, extent / 2 * height_share
    distance = np.maximum(np.abs(WORLD_X - point[0]) - half_w, np.abs(WORLD_Y - point[1]) - half_h)
    assert_silhouette(mask, distance * PPU)
    # the tilted square is 56.6 pixels tall: whole rows of pixel centres count, not the area
    assert abs(mask.sum() / (distance < 0).sum() - 1.0) < 0.005


def test_the_floor_has_a_checker_of_floor_cells(gpu):
    """A floor facing the camera: its light is the same everywhere, so the cells' brightness is
    the colour's on one parity and (1 - FLOOR_CONTRAST) of it on the other, with cell borders
    FLOOR_CELL apart starting at the floor's point."""
    image = picture(scene_text(collider("floor", shape="plane", point=(0.0, 0.0, 0.0),
                                        normal=(0.0, 0.0, 1.0), extent=3.0, color="#ffffff")))
    light = linear(image)[..., 1]
    cell_x, cell_y = np.floor(WORLD_X / FLOOR_CELL), np.floor(WORLD_Y / FLOOR_CELL)
    # pixel centres at least a pixel from a cell border and inside the square
    away = ((np.abs(WORLD_X / FLOOR_CELL - np.round(WORLD_X / FLOOR_CELL)) * FLOOR_CELL * PPU > 1)
            & (np.abs(WORLD_Y / FLOOR_CELL - np.round(WORLD_Y / FLOOR_CELL)) * FLOOR_CELL * PPU > 1)
            & (np.maximum(np.abs(WORLD_X), np.abs(WORLD_Y)) < 1.5 - 1 / PPU))
    parity = (cell_x + cell_y) % 2 == 1
    odd, even = light[away & parity], light[away & ~parity]
    assert odd.std() < 0.01 and even.std() < 0.01          # flat inside each cell
    dark, bright = sorted([odd.mean(), even.mean()])       # which parity is dark is no contract
    assert dark / bright == pytest.approx(1.0 - FLOOR_CONTRAST, abs=0.02)


def test_pattern_noise_mottles_the_colour_around_its_mean_fixed_in_the_world(gpu):
    """pattern = "noise" multiplies the colour by 1 + MOTTLE_CONTRAST (2 n - 1), n a mottle in
    (0, 1) around 0.5: against the plain floor (light the same everywhere) each pixel's ratio
    lies within 1 +- MOTTLE_CONTRAST, varies visibly, and averages 1 over ~8 noise cells a side
    (to 0.08). The noise is a function of the world position: moving the camera 0.5 units right
    moves the picture 16 pixels left, the same pixels within a level (the fading of fine
    octaves depends on the footprint alone, which is the same)."""
    def floor(pattern: str, cx: float = 0.0) -> np.ndarray:
        text = scene_text(collider("floor", shape="plane", point=(0.0, 0.0, 0.0),
                                   normal=(0.0, 0.0, 1.0), extent=8.0, color="#808080",
                                   pattern=pattern))
        return picture(text.replace("center = [0.0, 0.0]", f"center = [{cx}, 0.0]"))

    plain, noise = linear(floor("plain"))[..., 1], linear(floor("noise"))[..., 1]
    assert plain.std() < 0.002 and plain.mean() > 0.05
    ratio = noise / plain
    spread = MOTTLE_CONTRAST + 0.02
    assert ratio.min() >= 1.0 - spread and ratio.max() <= 1.0 + spread
    assert ratio.std() > 0.05
    assert ratio.mean() == pytest.approx(1.0, abs=0.08)
    shift = int(0.5 * PPU)
    moved = floor("noise", 0.5)
    diff = np.abs(moved[:, :-shift, :3].astype(int) - floor("noise")[:, shift:, :3].astype(int))
    assert diff.max() <= 1


def test_the_checker_is_a_floors_pattern():
    with pytest.raises(SceneError) as info:
        loads_scene(scene_text(collider("crate", shape="box", pattern="checker")), path="x.toml")
    assert str(info.value) == ("x.toml: entity 'crate': collider.pattern: expected \"noise\" or "
                               "\"plain\" for shape = \"box\" (the checker is a floor's, on a "
                               "plane), found \"checker\"")


# ----------------------------------------------------------------------------- looks

def test_visible_false_draws_nothing_and_sdf_and_depth_colliders_are_accepted(gpu):
    text = scene_text(collider("ball", shape="sphere", visible=False)
                      + collider("blob", shape="sdf", sdf_kind="sphere", radius=0.5)
                      + collider("screen", shape="depth"))
    engine = make(text)
    assert not covered(engine.render()).any()
    assert not [p for p in engine.passes() if ":collider:" in p]
    engine.entity("ball").collider.visible = True     # a passes-class edit: drawn from now on
    engine.step()
    assert covered(engine.render()).sum() > 1000
    assert "ball:collider:draw" in engine.passes()
    engine.delete("blob")
    engine.delete("ball")
    assert not covered(engine.render()).any()
    engine.close()


def test_wireframe_draws_far_fewer_pixels_than_the_solid_and_only_on_it(gpu):
    radius = 1.5
    ball = dict(shape="sphere", center=(0.0, 0.0, 0.0), radius=radius, color="#ffffff")
    solid = covered(picture(scene_text(collider("ball", **ball))))
    engine = make(scene_text(collider("ball", wireframe=True, **ball)))
    wire = covered(engine.render())
    assert engine.passes().count("ball:collider:wire") == 1
    assert "ball:collider:draw" not in engine.passes()
    engine.close()
    assert 0.03 * solid.sum() < wire.sum() < 0.35 * solid.sum()
    # lines rasterise by their own rule: within EDGE of the outline
    assert not (wire & (np.hypot(WORLD_X, WORLD_Y) * PPU > radius * PPU + EDGE)).any()


def test_the_lit_side_is_brighter(gpu):
    """The key light comes from above and to the right of the camera: the upper right quarter of
    a sphere is brighter than the lower left one."""
    light = linear(picture(scene_text(collider("ball", shape="sphere", radius=1.5,
                                               color="#ffffff"))))[..., 1]
    inside = np.hypot(WORLD_X, WORLD_Y) < 1.4
    upper_right = light[inside & (WORLD_X > 0) & (WORLD_Y > 0)].mean()
    lower_left = light[inside & (WORLD_X < 0) & (WORLD_Y < 0)].mean()
    assert upper_right > 3.0 * lower_left


def test_live_edits_move_resize_and_recolour_the_mesh_on_the_next_frame(gpu):
    engine = make(scene_text(collider("ball", shape="sphere", center=(-0.4, 0.2, 0.0),
                                      radius=0.6, color="#ffffff")))
    before = engine.render()
    ball = engine.entity("ball").collider
    ball.center = (0.35, -0.3, 0.0)
    moved = engine.render()   # no step in between, as in a paused window
    shift = centroid(covered(moved)) - centroid(covered(before))
    assert np.allclose(shift, (0.75, -0.5), atol=0.3 / PPU)
    ball.radius = 0.9
    ball.color = "#ff0000"
    engine.step()
    grown = engine.render()
    engine.close()
    assert covered(grown).sum() / covered(moved).sum() == pytest.approx((0.9 / 0.6) ** 2, rel=0.02)
    red, others = grown[..., 0], grown[..., 1:3].max(axis=2)
    shown = covered(grown)
    assert red.max() > 200 and (red[shown] > 3 * others[shown]).all()   # the rim adds some grey


def test_a_shape_edit_rebuilds_the_mesh(gpu):
    engine = make(scene_text(collider("thing", shape="sphere", radius=1.0, half_size=(1, 1, 1),
                                      color="#ffffff")))
    disk = covered(engine.render()).sum()
    engine.entity("thing").collider.shape = "box"
    engine.step()
    square = covered(engine.render()).sum()
    engine.close()
    assert disk == pytest.approx(math.pi * PPU ** 2, rel=0.01)
    assert square == pytest.approx(4 * PPU ** 2, rel=0.01)


def test_model_matrix_places_the_unit_meshes():
    from emberfx.systems.colliders.component import Collider

    box = Collider(shape="box", center=(1.0, 2.0, 3.0), half_size=(0.5, 1.0, 2.0),
                   rotation_deg=(0.0, 90.0, 0.0))
    # (1, 1, 1) -> scaled (0.5, 1, 2) -> turned 90 degrees about y: (2, 1, -0.5) -> moved
    assert np.allclose(model_matrix(box) @ [1, 1, 1, 1], [3.0, 3.0, 2.5, 1.0])
    floor = Collider(shape="plane", point=(0.0, -1.0, 0.0), normal=(0.0, 2.0, 0.0), extent=6.0)
    assert np.allclose(model_matrix(floor) @ [0.5, 0, -0.5, 1], [3.0, -1.0, -3.0, 1.0])


# ----------------------------------------------------------------------------- depth

PARTICLE_SHEET = """
[[entity]]
name = "sheet"
[entity.emitter]
capacity = 3000
rate = 0.0
bursts = [{{ time = 0.0, count = 3000 }}]
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = [0.0, 0.0, {z}]
shape = {{ kind = "box", size = [3.6, 3.6, 0.0] }}
size = 0.1
color = ["#ff2000", "#ff2000"]
blend = "additive"
"""


def test_particles_behind_a_drawn_sphere_are_hidden(gpu):
    """A sheet of particles at z = -2 behind a sphere of radius 1.2 at the origin: inside the
    silhouette the picture is exactly the sphere's alone; around it the particles show. The same
    sheet at z = +2 (in front) shows over the sphere, so the hiding is the depth test's."""
    radius = 1.2
    ball = collider("ball", shape="sphere", radius=radius, color="#808080")
    alone = picture(scene_text(ball)).astype(np.int64)
    behind = picture(scene_text(ball, PARTICLE_SHEET.format(z=-2.0)), steps=1).astype(np.int64)
    front = picture(scene_text(ball, PARTICLE_SHEET.format(z=2.0)), steps=1).astype(np.int64)
    distance = np.hypot(WORLD_X, WORLD_Y) * PPU
    inside = distance < radius * PPU - EDGE
    outside = (distance > radius * PPU + 0.1 * PPU + EDGE) & (np.abs(WORLD_X) < 1.7) \
        & (np.abs(WORLD_Y) < 1.7)
    assert np.array_equal(behind[inside], alone[inside])
    assert (behind[outside][:, 0] > alone[outside][:, 0]).mean() > 0.3   # the sheet is there
    assert (front[inside][:, 0] > alone[inside][:, 0]).mean() > 0.3
