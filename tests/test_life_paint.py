"""Mouse painting on Life layers: LifeSystem.paint against a numpy oracle (exact), cells_on_line
against a brute-force definition, and LifeSystem.cell_under checked both numerically and through
the rendered image (the painted cell must show at that pixel)."""

from __future__ import annotations

import itertools
import zlib

import life_model
import numpy as np
import pytest

from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.render import RenderSettings
from emberfx.model.scene import EntitySpec, Scene, SceneSettings
from emberfx.systems.life.component import Life
from emberfx.systems.life.system import cells_on_line

WHITE, BLACK, BLUE = (255, 255, 255), (0, 0, 0), (0, 0, 255)


def life_engine(size=(37, 23), render=(64, 48), camera=None, **fields) -> Engine:
    """An engine of one Life layer; drawn at one sample per pixel (msaa = 1), since the image
    checks below read each pixel's centre."""
    comp = Life(size=size, **fields)
    scene = Scene(SceneSettings(seed=5, background="#0000ff"),
                  camera or Camera(kind="orthographic"), [EntitySpec("life", {"life": comp})],
                  render=RenderSettings(msaa=1))
    return Engine(scene, size=render)


def painter(engine: Engine):
    """(system, ref, component) of the 'life' entity."""
    return (engine.system_of("life", "life"), engine._ref("life"),
            engine.entity("life").life)


def apply(cells: np.ndarray, painted, alive: bool = True) -> np.ndarray:
    """The numpy oracle: ``painted`` set to ``alive``, cells off the grid dropped."""
    out = cells.copy()
    h, w = out.shape
    for x, y in np.asarray(painted, np.int64).reshape(-1, 2):
        if 0 <= x < w and 0 <= y < h:
            out[y, x] = alive
    return out


def random_cells(rng, size, n, margin=3):
    """n cells (x, y), some repeated and some up to ``margin`` cells off each edge."""
    w, h = size
    xy = np.stack([rng.integers(-margin, w + margin, n), rng.integers(-margin, h + margin, n)], 1)
    return np.concatenate([xy, xy[: n // 5]])


def padding_is_zero(system, ref, size) -> bool:
    w, h = size
    if w % 32 == 0:
        return True
    words = system.words(ref).reshape(h, (w + 31) // 32)
    return not (words[:, -1] >> np.uint32(w % 32)).any()


# ------------------------------------------------------------------------------------------ paint
@pytest.mark.parametrize("memory", ["pingpong", "inplace"])
@pytest.mark.parametrize("topology", ["torus", "dead"])
@pytest.mark.parametrize("size", [(37, 23), (70, 33), (5, 64)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_paint_and_erase_equal_numpy_then_step_equals_numpy_life(gpu, memory, topology, size):
    rng = np.random.default_rng(zlib.crc32(f"{memory}{topology}{size}".encode()))
    engine = life_engine(size, density=0.3, memory=memory, topology=topology)
    system, ref, _ = painter(engine)
    torus = topology == "torus"
    expected = engine.state("life")["cells"]
    # twice round: the second round paints into the other pingpong buffer (parity 1)
    for _round in range(2):
        drawn = random_cells(rng, size, 60)
        system.paint(ref, drawn)                                   # an (n, 2) array
        expected = apply(expected, drawn)
        np.testing.assert_array_equal(engine.state("life")["cells"], expected)
        erased = [tuple(map(int, c)) for c in random_cells(rng, size, 80)]
        system.paint(ref, erased, alive=False)                     # a list of tuples
        expected = apply(expected, erased, alive=False)
        np.testing.assert_array_equal(engine.state("life")["cells"], expected)
        assert padding_is_zero(system, ref, size)
        engine.step(1)
        expected = life_model.step(expected, "B3/S23", torus, 1)
        np.testing.assert_array_equal(engine.state("life")["cells"], expected)
    assert expected.any()
    engine.close()


@pytest.mark.parametrize("memory", ["pingpong", "inplace"])
def test_paint_a_whole_grid_and_the_last_column_of_a_ragged_row(gpu, memory):
    size = (37, 23)
    engine = life_engine(size, memory=memory, paused=True)
    system, ref, _ = painter(engine)
    every = np.array(list(itertools.product(range(-1, 38), range(-1, 24))))
    system.paint(ref, every)
    assert engine.state("life")["cells"].all()
    assert padding_is_zero(system, ref, size)              # x = 37..63 were dropped, not wrapped
    system.paint(ref, [(36, y) for y in range(23)], alive=False)
    expected = np.ones((23, 37), bool)
    expected[:, 36] = False
    np.testing.assert_array_equal(engine.state("life")["cells"], expected)
    engine.close()


def test_empty_and_off_grid_paints_are_no_ops(gpu):
    engine = life_engine((37, 23), density=0.4)
    system, ref, _ = painter(engine)
    before = engine.state("life")["cells"]
    system.paint(ref, [])
    system.paint(ref, np.zeros((0, 2), np.int64), alive=False)
    system.paint(ref, [(-1, 0), (37, 5), (3, -1), (3, 23), (10**9, 2)])
    system.paint(ref, [(-1, 0), (37, 5)], alive=False)
    np.testing.assert_array_equal(engine.state("life")["cells"], before)
    engine.close()


def test_paint_rejects_cells_that_are_not_pairs(gpu):
    from emberfx.core.errors import EmberError

    engine = life_engine((37, 23))
    system, ref, _ = painter(engine)
    with pytest.raises(EmberError, match=r"\(x, y\) pairs"):
        system.paint(ref, [(1, 2, 3)])
    engine.close()


def test_a_painted_stroke_is_unbroken_and_matches_numpy(gpu):
    engine = life_engine((70, 33), paused=True)
    system, ref, _ = painter(engine)
    stroke = np.concatenate([cells_on_line((2, 3), (66, 30)), cells_on_line((66, 30), (60, -4))])
    system.paint(ref, stroke)
    cells = engine.state("life")["cells"]
    np.testing.assert_array_equal(cells, apply(np.zeros((33, 70), bool), stroke))
    # every painted cell on the grid has a painted 8-neighbour: no gaps
    ys, xs = np.nonzero(cells)
    for x, y in zip(xs, ys):
        assert cells[max(y - 1, 0):y + 2, max(x - 1, 0):x + 2].sum() >= 2
    engine.close()


# ---------------------------------------------------------------------------------- cells_on_line
def test_cells_on_line_against_brute_force():
    span = range(-5, 6)
    points = [(x, y) for x in span for y in span]
    for a, b in itertools.product(points, points):
        line = cells_on_line(a, b)
        dx, dy = b[0] - a[0], b[1] - a[1]
        n = max(abs(dx), abs(dy))
        assert line.shape == (n + 1, 2) and line.dtype == np.int64
        assert tuple(line[0]) == a and tuple(line[-1]) == b
        steps = np.diff(line, axis=0)
        assert (np.abs(steps).max(axis=1, initial=0) == 1).all()      # 8-neighbour moves
        # the major axis advances by exactly one each step; the minor coordinate is the
        # nearest integer to the exact line (|error| <= 1/2)
        major, minor = (0, 1) if abs(dx) >= abs(dy) else (1, 0)
        assert (np.abs(steps[:, major]) == 1).all()
        if n:
            t = (line[:, major] - a[major]) / (b[major] - a[major])
            ideal = a[minor] + t * (b[minor] - a[minor])
            assert (np.abs(line[:, minor] - ideal) <= 0.5 + 1e-12).all()
        np.testing.assert_array_equal(cells_on_line(b, a), line[::-1])  # symmetric


def test_cells_on_line_accepts_numpy_cells_and_a_single_point():
    np.testing.assert_array_equal(cells_on_line(np.array([4, 7]), (4, 7)), [[4, 7]])
    np.testing.assert_array_equal(cells_on_line((0, 0), (4, 2)),
                                  [[0, 0], [1, 1], [2, 1], [3, 2], [4, 2]])


# ------------------------------------------------------------------------------------- cell_under
def unambiguous(system, ref, comp, camera, px, py, viewport, eps=0.1):
    """cell_under at (px, py) when the points ``eps`` px around it agree, else "edge": on a cell
    edge the GPU's f32 rounding may pick the neighbour (its error is far below 0.01 px)."""
    cells = {system.cell_under(ref, comp, camera, px + ex, py + ey, viewport)
             for ex in (-eps, 0.0, eps) for ey in (-eps, 0.0, eps)}
    return cells.pop() if len(cells) == 1 else "edge"


def check_image_against_cell_under(engine, cells):
    """Every unambiguous pixel shows the colour of the cell cell_under names, or the background
    where it names none."""
    system, ref, comp = painter(engine)
    image = engine.render()[:, :, :3]
    h, w = image.shape[:2]
    checked = 0
    for j in range(h):
        for i in range(w):
            cell = unambiguous(system, ref, comp, engine.scene.camera, i + 0.5, j + 0.5, (w, h))
            if cell == "edge":
                continue
            want = BLUE if cell is None else WHITE if cells[cell[1], cell[0]] else BLACK
            assert tuple(image[j, i]) == want, (i, j, cell)
            checked += 1
    assert checked > 0.6 * w * h


FILL_CASES = {"wide-view": ((37, 23), (90, 40)), "tall-view": ((37, 23), (40, 70)),
              "wide-grid": ((70, 9), (64, 48))}


@pytest.mark.parametrize("case", FILL_CASES)
def test_fill_cell_under_matches_the_rendered_image(gpu, case):
    size, render = FILL_CASES[case]
    engine = life_engine(size, render, density=0.5, alive_color="#ffffff", dead_color="#000000")
    check_image_against_cell_under(engine, engine.state("life")["cells"])
    engine.close()


def test_fill_cell_under_numbers(gpu):
    """37x23 covering 200x100: 200 / 37 = 5.405 px per cell, so the grid is 124.3 px tall,
    centred, and 12.16 px of it are cropped above and below."""
    engine = life_engine((37, 23), (200, 100))
    system, ref, comp = painter(engine)
    def under(px, py):
        return system.cell_under(ref, comp, None, px, py, (200, 100))
    cell = 200 / 37                                         # px per cell
    top = (23 * cell - 100) / 2                             # 12.16 px cropped above
    assert under(100, 50) == (18, 11)
    assert under(0.01, 0.01) == (0, 2)                      # (0.01 / cell, (0.01 + top) / cell)
    assert under(199.99, 99.99) == (36, 20)
    assert under(5.5 * cell, 7.5 * cell - top) == (5, 7)
    # outside the viewport nothing is shown, so nothing is hit (not the cropped cells)
    assert under(-0.01, 50) is None and under(200.0, 50) is None
    assert under(50, -0.01) is None and under(50, 100.0) is None
    # a tall viewport: the grid covers the height, 160.87 px wide, 61.93 px cropped at each side
    left = (37 * 100 / 23 - 37) / 2
    assert system.cell_under(ref, comp, None, 0.01, 50, (37, 100)) == (14, 11)
    assert system.cell_under(ref, comp, None, 36.99, 99.99, (37, 100)) == (22, 22)
    assert system.cell_under(ref, comp, None, 10, 0.01, (37, 100)) == (16, 0)
    edge = 15 * 100 / 23 - left                             # between columns 14 and 15: 3.29 px
    assert system.cell_under(ref, comp, None, edge + 0.01, 50, (37, 100)) == (15, 11)
    assert system.cell_under(ref, comp, None, edge - 0.01, 50, (37, 100)) == (14, 11)
    engine.close()


QUAD_CAMERAS = {
    "straight": Camera(position=(0.2, 0.1, 5.0), target=(0.2, 0.1, 0.0), fov_deg=40.0),
    "oblique": Camera(position=(1.5, -1.0, 3.5), target=(0.1, 0.2, 0.0), fov_deg=55.0),
    "orthographic": Camera(kind="orthographic", center=(0.5, 0.0), height=3.0),
}


@pytest.mark.parametrize("name", QUAD_CAMERAS)
def test_quad_cell_under_matches_the_rendered_image(gpu, name):
    engine = life_engine((37, 23), (80, 60), camera=QUAD_CAMERAS[name], density=0.5,
                         display="quad", quad_center=(0.2, 0.1, 0.0), quad_size=(3.0, 2.0),
                         alive_color="#ffffff", dead_color="#000000")
    check_image_against_cell_under(engine, engine.state("life")["cells"])
    engine.close()


def test_quad_cell_under_numbers(gpu):
    engine = life_engine((37, 23), (80, 60), camera=QUAD_CAMERAS["straight"], display="quad",
                         quad_center=(0.2, 0.1, 0.0), quad_size=(3.0, 2.0))
    system, ref, comp = painter(engine)
    camera = engine.scene.camera
    assert system.cell_under(ref, comp, camera, 40, 30, (80, 60)) == (18, 11)   # the centre
    assert system.cell_under(ref, comp, camera, 0.5, 0.5, (80, 60)) is None     # beside the quad
    # the world point of the top-left cell's centre, projected, names that cell
    view_proj = camera.projection_matrix(80 / 60) @ camera.view_matrix()
    for cx, cy in [(0, 0), (36, 22), (7, 15)]:
        world = np.array([0.2 - 1.5 + (cx + 0.5) * 3.0 / 37, 0.1 + 1.0 - (cy + 0.5) * 2.0 / 23,
                          0.0, 1.0])
        clip = view_proj @ world
        px, py = (clip[0] / clip[3] + 1) * 40, (1 - clip[1] / clip[3]) * 30
        assert system.cell_under(ref, comp, camera, px, py, (80, 60)) == (cx, cy)
    # a camera looking away from the quad's plane sees none of it
    away = Camera(position=(0.0, 0.0, 5.0), target=(0.0, 0.0, 10.0))
    assert system.cell_under(ref, comp, away, 40, 30, (80, 60)) is None
    engine.close()


@pytest.mark.parametrize("display", ["fill", "quad"])
def test_the_cell_painted_under_a_pixel_shows_at_that_pixel(gpu, display):
    engine = life_engine((37, 23), (90, 60), camera=QUAD_CAMERAS["oblique"], display=display,
                         quad_center=(0.2, 0.1, 0.0), quad_size=(3.0, 2.0), paused=True,
                         alive_color="#ffffff", dead_color="#000000")
    system, ref, comp = painter(engine)
    camera = engine.scene.camera
    # three pixels on the grid, away from cell edges, in different cells
    pixels, painted = [], []
    for i, j in itertools.product(range(3, 90, 11), range(2, 60, 13)):
        cell = unambiguous(system, ref, comp, camera, i + 0.5, j + 0.5, (90, 60))
        if cell not in (None, "edge") and cell not in painted and len(pixels) < 3:
            pixels.append((i, j))
            painted.append(cell)
    assert len(pixels) == 3
    system.paint(ref, painted)
    image = engine.render()[:, :, :3]
    for i, j in pixels:
        assert tuple(image[j, i]) == WHITE
    assert (image == 255).all(axis=2).sum() >= len(pixels)
    assert ((image == 255).all(axis=2).sum() < 0.2 * image.shape[0] * image.shape[1])
    engine.close()


def test_cell_under_on_a_grid_wider_than_the_texture_names_the_shown_cell(gpu):
    """5000 columns are shown through a 4096-texel texture, covering the 4 px height at 19.25
    cells per pixel (15.77 texels of 1.22 cells: a step of at least 15 texels, 18 cells, between
    pixels): the cell cell_under names (and painting makes visible) is the one the display pass
    samples there."""
    engine = life_engine((5000, 77), (250, 4), paused=True, alive_color="#ffffff",
                         dead_color="#000000")
    system, ref, comp = painter(engine)
    row = 2
    under = {i: unambiguous(system, ref, comp, None, i + 0.5, row + 0.5, (250, 4), eps=1e-3)
             for i in range(250)}
    assert None not in under.values()
    columns = [i for i, c in under.items() if c != "edge"]    # a few fall near texel edges
    cells = [under[i] for i in columns]
    assert len(columns) >= 220 and len({c[1] for c in cells}) == 1
    assert np.diff([c[0] for c in cells]).min() >= 18
    system.paint(ref, cells)
    image = engine.render()[:, :, :3]
    assert (image[row, columns] == 255).all()
    # the cell beside each one is not shown there: painting them instead shows nothing
    system.paint(ref, cells, alive=False)
    system.paint(ref, [(x + 1, y) for x, y in cells])
    assert not (engine.render()[row, columns, :3] == 255).all(axis=1).any()
    engine.close()
