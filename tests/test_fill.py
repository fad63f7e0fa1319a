"""display = "fill" covers the viewport (Life and fractal layers): centred, square texels, the
texture's excess cropped, no background anywhere; and mouse painting hits the cell under the
cursor through that crop.

The oracle is the cover mapping worked out independently of the code under test: a texture of
W x H texels in a viewport of w x h pixels is scaled by s = max(w / W, h / H) pixels per texel and
centred, so pixel centre (i + 0.5, j + 0.5) shows texel
(floor((i + 0.5 - w / 2) / s + W / 2), floor((j + 0.5 - h / 2) / s + H / 2))."""

from __future__ import annotations

import math

import numpy as np
import pytest

from emberfx.app.interaction import LEFT, Pointer
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings
from emberfx.systems.fractal.component import Fractal
from emberfx.systems.life.component import Life

WHITE, BLACK, BLUE = (255, 255, 255), (0, 0, 0), (0, 0, 255)
VIEWS = {"16:9": (160, 90), "9:16": (90, 160), "odd-wide": (157, 61), "odd-tall": (45, 101)}
EDGE = 1e-3   # texels: pixel centres this close to a texel edge may round either way on the GPU


def cover_texels(texture, viewport):
    """(tx, ty, clear) per pixel, each (h, w): the texel each pixel centre shows, and whether
    it lies clear of texel edges."""
    W, H = texture
    w, h = viewport
    s = max(w / W, h / H)
    x = (np.arange(w) + 0.5 - w / 2) / s + W / 2
    y = (np.arange(h) + 0.5 - h / 2) / s + H / 2
    tx, ty = np.meshgrid(np.floor(x).astype(int), np.floor(y).astype(int))
    near_x, near_y = (np.abs(v - np.round(v)) < EDGE for v in (x, y))
    clear = ~np.logical_or(*np.meshgrid(near_x, near_y))
    return tx, ty, clear


def life_engine(grid, viewport, **fields) -> Engine:
    life = Life(size=grid, alive_color="#ffffff", dead_color="#000000", **fields)
    scene = Scene(SceneSettings(seed=11, background="#0000ff"), Camera(kind="orthographic"),
                  [EntitySpec("life", {"life": life})])
    return Engine(scene, size=viewport)


def fractal_engine(resolution, viewport) -> Engine:
    fractal = Fractal(resolution=resolution, center=(-0.6, 0.0), zoom=1.3, max_iterations=60,
                      palette=["#ff0000", "#00ff00"], inside_color="#ffffff")
    scene = Scene(SceneSettings(background="#0000ff"), Camera(kind="orthographic"),
                  [EntitySpec("set", {"fractal": fractal})])
    return Engine(scene, size=viewport)


def test_cover_oracle_by_hand():
    """The oracle itself on numbers worked out on paper: 40 x 30 texels in 160 x 90 pixels is
    4 px per texel, 120 px tall, so 15 px are cropped above and below."""
    tx, ty, _ = cover_texels((40, 30), (160, 90))
    assert (tx[0, 0], ty[0, 0]) == (0, 3)        # (0.5 / 4, (0.5 + 15) / 4)
    assert (tx[-1, -1], ty[-1, -1]) == (39, 26)  # (159.5 / 4, (89.5 + 15) / 4)
    assert (tx[45, 80], ty[45, 80]) == (20, 15)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("grid", [(40, 30), (23, 37)], ids=lambda g: f"{g[0]}x{g[1]}")
def test_life_fill_covers_the_view_with_square_cells(gpu, grid, view):
    viewport = VIEWS[view]
    engine = life_engine(grid, viewport, density=0.5, paused=True)
    cells = engine.state("life")["cells"]
    image = engine.render()[:, :, :3]
    engine.close()
    # no background anywhere, the borders included
    assert not (image == BLUE).all(axis=2).any()
    tx, ty, clear = cover_texels(grid, viewport)
    assert clear.mean() > 0.9
    assert tx.min() >= 0 and ty.min() >= 0 and tx.max() < grid[0] and ty.max() < grid[1]
    expected = np.where(cells[ty, tx][..., None], WHITE, BLACK)
    mismatch = (image != expected).any(axis=2) & clear
    assert not mismatch.any(), np.argwhere(mismatch)[:5]
    # the crop is symmetric: the cells at the centre of the grid are at the centre of the view
    h, w = viewport[1], viewport[0]
    assert abs((tx[:, 0].min() + tx[:, -1].max() + 1) - grid[0]) <= 1
    assert abs((ty[0].min() + ty[-1].max() + 1) - grid[1]) <= 1
    assert (h, w) == image.shape[:2]


@pytest.mark.parametrize("view", ["16:9", "9:16"])
def test_fractal_fill_covers_the_view(gpu, view):
    """Inside the set is white and the palette (red to green) never is, so every white pixel
    must show a texel whose count reached max_iterations, and those texels must show white."""
    resolution, viewport = (48, 32), VIEWS[view]
    engine = fractal_engine(resolution, viewport)
    counts = engine.state("set")["iterations"]
    image = engine.render()[:, :, :3]
    engine.close()
    assert not (image == BLUE).all(axis=2).any()
    # borders checked by name as well: a letterbox would put the background exactly there
    for border in (image[0], image[-1], image[:, 0], image[:, -1]):
        assert not (border == BLUE).all(axis=1).any()
    tx, ty, clear = cover_texels(resolution, viewport)
    inside = counts[ty, tx] == 60          # a point escaping at the last iteration also counts 60
    white = (image == WHITE).all(axis=2)
    assert not (white & ~inside & clear).any()
    assert (white & inside & clear).sum() >= 0.95 * (inside & clear).sum() > 0
    assert (~inside & clear).any()


# ------------------------------------------------------------------------------------- painting
# (grid, viewport, cursor, cell): the cell under the cursor worked out by hand from the crop
PAINT_CASES = {
    # 4 px per cell, 120 px tall: 15 px cropped above; x = 10 / 4, y = (5 + 15) / 4
    "wide-view": ((40, 30), (160, 90), (10.0, 5.0), (2, 5)),
    "wide-view-far-corner": ((40, 30), (160, 90), (158.0, 88.0), (39, 25)),
    # 16/3 px per cell, 640/3 px wide: 185/3 px cropped left; x = (3 + 185/3) * 3/16 = 12.125,
    # y = 100 * 3/16 = 18.75
    "tall-view": ((40, 30), (90, 160), (3.0, 100.0), (12, 18)),
    # a tall grid in a wide view: 160/23 px per cell, 37 * 160/23 = 257.4 px tall, 83.7 cropped
    # above; x = 150 * 23/160 = 21.56, y = (2 + 83.7) * 23/160 = 12.32
    "tall-grid": ((23, 37), (160, 90), (150.0, 2.0), (21, 12)),
}


def paint_case_cell(grid, viewport, cursor):
    """The same numbers as PAINT_CASES, from the oracle formula (a check on the hand sums)."""
    W, H = grid
    w, h = viewport
    s = max(w / W, h / H)
    return (math.floor((cursor[0] - w / 2) / s + W / 2),
            math.floor((cursor[1] - h / 2) / s + H / 2))


@pytest.mark.parametrize("case", PAINT_CASES)
def test_painting_sets_exactly_the_cell_under_the_cursor(gpu, case):
    grid, viewport, cursor, cell = PAINT_CASES[case]
    assert paint_case_cell(grid, viewport, cursor) == cell
    engine = life_engine(grid, viewport, paused=True)
    pointer = Pointer(engine)
    pointer.down(*cursor, LEFT, viewport)
    pointer.up()
    cells = engine.state("life")["cells"]
    expected = np.zeros((grid[1], grid[0]), bool)
    expected[cell[1], cell[0]] = True
    np.testing.assert_array_equal(cells, expected)
    # and the painted cell shows at the cursor's pixel
    image = engine.render()[:, :, :3]
    assert tuple(image[int(cursor[1]), int(cursor[0])]) == WHITE
    assert (image == WHITE).all(axis=2).sum() <= math.ceil(max(viewport[0] / grid[0],
                                                               viewport[1] / grid[1])) ** 2
    engine.close()


def test_a_stroke_across_the_crop_paints_the_cells_under_its_ends(gpu):
    """A drag from the top-left pixel to the bottom-right one in a 16:9 view of a 4:3 grid: the
    stroke runs from the first visible cell to the last, rows 3 and 26 (not 0 and 29)."""
    engine = life_engine((40, 30), (160, 90), paused=True)
    pointer = Pointer(engine)
    pointer.down(0.5, 0.5, LEFT, (160, 90))
    pointer.move(159.5, 89.5, (160, 90))
    pointer.up()
    cells = engine.state("life")["cells"]
    engine.close()
    ys, xs = np.nonzero(cells)
    assert cells[3, 0] and cells[26, 39]
    assert ys.min() == 3 and ys.max() == 26 and xs.min() == 0 and xs.max() == 39
    assert cells.sum() == 40                 # one cell per column: the x extent is the longer
