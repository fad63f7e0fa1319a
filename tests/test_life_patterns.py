"""Life patterns (emberfx.systems.life.patterns): RLE and plaintext parsing with exact error
positions, RLE writing, random soups, placement, and the shipped patterns' behaviour checked with an
independent numpy Life. No GPU."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import life_model
import numpy as np
import pytest

from emberfx.core.errors import EmberError
from emberfx.systems.life.patterns import (
    MAX_LINE,
    Pattern,
    PatternError,
    parse_cells,
    parse_rle,
    place,
    random_soup,
    read_pattern,
    write_rle,
)

PATTERNS = Path(__file__).resolve().parent.parent / "scenes" / "patterns"

# name: (width, height, population, #N name)
SHIPPED = {
    "glider": (3, 3, 5, "Glider"),
    "lwss": (5, 4, 9, "Lightweight spaceship"),
    "pulsar": (13, 13, 48, "Pulsar"),
    "r_pentomino": (3, 3, 5, "R-pentomino"),
    "acorn": (7, 3, 7, "Acorn"),
    "diehard": (8, 3, 7, "Diehard"),
    "gosper_glider_gun": (36, 9, 36, "Gosper glider gun"),
}

GLIDER = np.array([[0, 1, 0],
                   [0, 0, 1],
                   [1, 1, 1]], bool)


# ---------------------------------------------------------------------------- numpy Life oracle

def life_step(g: np.ndarray, torus: bool = True, birth=(3,), survive=(2, 3)) -> np.ndarray:
    """One generation of the shared numpy reference (tests/life_model.py)."""
    rule = "B" + "".join(map(str, birth)) + "/S" + "".join(map(str, survive))
    return life_model.step(np.asarray(g, bool), rule, torus)


def life_run(g: np.ndarray, gens: int, torus: bool = True, **rule) -> np.ndarray:
    for _ in range(gens):
        g = life_step(g, torus, **rule)
    return g


def on_grid(cells: np.ndarray, width: int, height: int, offset=None) -> np.ndarray:
    grid = np.zeros((height, width), bool)
    place(grid, cells, offset)
    return grid


def shipped(name: str) -> np.ndarray:
    return read_pattern(PATTERNS / f"{name}.rle").cells


def test_oracle_blinker_and_block():
    blinker = on_grid(np.ones((1, 3), bool), 5, 5)
    assert np.array_equal(life_step(blinker), blinker.T)
    block = on_grid(np.ones((2, 2), bool), 4, 4)
    assert np.array_equal(life_step(block, torus=False), block)


# ---------------------------------------------------------------------------- shipped patterns

@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_rle_parses(name):
    w, h, population, title = SHIPPED[name]
    path = PATTERNS / f"{name}.rle"
    pattern = read_pattern(path)
    assert pattern.cells.dtype == bool and pattern.cells.shape == (h, w)
    assert pattern.size == (w, h)
    assert int(pattern.cells.sum()) == population
    assert pattern.rule == "B3/S23" and pattern.name == title
    text = path.read_text()
    assert re.search(r"^#C \S", text, re.M), "a one-line #C description"
    assert all(len(line) <= MAX_LINE for line in text.splitlines())
    # the pattern touches all four edges of its bounding box (the header is tight)
    assert pattern.cells[0].any() and pattern.cells[-1].any()
    assert pattern.cells[:, 0].any() and pattern.cells[:, -1].any()
    assert np.array_equal(parse_rle(write_rle(pattern.cells)).cells, pattern.cells)


def test_shipped_glider_cells_matches_rle():
    cells = read_pattern(PATTERNS / "glider.cells")
    assert cells.name == "Glider" and cells.rule is None
    assert np.array_equal(cells.cells, GLIDER)
    assert np.array_equal(shipped("glider"), GLIDER)


def test_glider_moves_one_cell_diagonally_every_4_generations():
    start = on_grid(GLIDER, 12, 10, (2, 3))
    g = life_run(start, 4)
    assert np.array_equal(g, np.roll(start, (1, 1), (0, 1)))   # down one row, right one column
    assert int(life_run(start, 3).sum()) == 5 and not np.array_equal(life_run(start, 3), start)
    # on a 12x10 torus it is back where it started after 4 * 60 generations (60 = lcm(12, 10))
    assert np.array_equal(life_run(start, 240), start)


def test_lwss_moves_two_cells_every_4_generations():
    start = on_grid(shipped("lwss"), 20, 10, (10, 3))
    for gen in (1, 2, 3):
        assert not np.array_equal(life_run(start, gen), start)
    g = life_run(start, 4)
    assert g.sum() == 9
    assert np.array_equal(g, np.roll(start, -2, 1))    # two columns to the left
    assert np.array_equal(life_run(start, 8, torus=False), np.roll(start, -4, 1))


def test_pulsar_has_period_3():
    start = on_grid(shipped("pulsar"), 19, 19)
    g1, g2, g3 = (life_run(start, n, torus=False) for n in (1, 2, 3))
    assert not np.array_equal(g1, start) and not np.array_equal(g2, start)
    assert not np.array_equal(g1, g2)
    assert np.array_equal(g3, start)
    assert [int(g.sum()) for g in (start, g1, g2)] == [48, 56, 72]
    assert np.array_equal(life_run(start, 30, torus=False), start)


GUN_GRID = (100, 60)   # width, height: gliders stay clear of the dead border until gen 120
GUN_POPULATIONS = {0: 36, 30: 41, 60: 46, 90: 51}   # 36 + 5 per glider emitted


def test_gosper_gun_emits_a_glider_every_30_generations():
    gun = shipped("gosper_glider_gun")
    start = on_grid(gun, *GUN_GRID)
    populations = {}
    g = start
    for gen in range(91):
        if gen in GUN_POPULATIONS:
            populations[gen] = int(g.sum())
        g = life_step(g, torus=False)
    assert populations == GUN_POPULATIONS
    # the gun itself is back in its starting phase every 30 generations: its 36x9 box is unchanged
    x, y = (GUN_GRID[0] - 36) // 2, (GUN_GRID[1] - 9) // 2
    g30 = life_run(start, 30, torus=False)
    assert np.array_equal(g30[y:y + 9, x:x + 36], gun)
    # and the extra 5 cells outside it are a glider
    outside = g30.copy()
    outside[y:y + 9, x:x + 36] = False
    ys, xs = np.nonzero(outside)
    assert len(ys) == 5
    box = outside[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    assert box.shape == (3, 3)
    alone = on_grid(box, 11, 11, (4, 4))           # a glider: 4 generations later, it has
    later = life_run(alone, 4, torus=False)        # moved one cell down-right (away from the gun)
    assert np.array_equal(later, np.roll(alone, (1, 1), (0, 1)))


def test_gosper_gun_population_used_by_the_cli_test():
    # tests/test_life_cli.py: `life gosper_glider_gun.rle --gens 120 --size 120x80 --topology dead`
    g = life_run(on_grid(shipped("gosper_glider_gun"), 120, 80), 120, torus=False)
    assert int(g.sum()) == 56


def test_diehard_dies_after_130_generations():
    start = on_grid(shipped("diehard"), 80, 60)
    g129 = life_run(start, 129, torus=False)
    assert int(g129.sum()) > 0
    assert int(life_step(g129, torus=False).sum()) == 0


def test_methuselah_cell_counts():
    assert int(shipped("r_pentomino").sum()) == 5
    assert int(shipped("acorn").sum()) == 7
    # the R-pentomino is still busy (not a still life or blinker) after 100 generations
    g = life_run(on_grid(shipped("r_pentomino"), 128, 128), 100)
    assert not np.array_equal(life_step(g), g)


# ---------------------------------------------------------------------------- RLE parsing

def test_parse_rle_basics():
    p = parse_rle("#N Glider\n#O someone\n#C a comment\n#c another\nx = 3, y = 3, rule = B3/S23\n"
                  "bob$2bo$3o!")
    assert np.array_equal(p.cells, GLIDER)
    assert p.name == "Glider" and p.rule == "B3/S23"
    assert isinstance(p, Pattern)


def test_parse_rle_header_is_flexible():
    p = parse_rle("X=3,Y=3,RULE=b36s23\nbob$2bo$3o!")
    assert p.rule == "b36s23" and p.cells.shape == (3, 3)
    p = parse_rle("  x  =  3 ,  y=3\n\nbob$2bo$3o!")
    assert p.rule is None and np.array_equal(p.cells, GLIDER)
    assert parse_rle("x = 2, y = 1, rule = 23/3\n2o!").rule == "23/3"


def test_parse_rle_whitespace_between_tokens_and_text_after_bang():
    text = "x = 3, y = 3\r\n b o\t$\r\n2b o\n$ 3o\n !\nanything here: 3x $$ ignored\n"
    assert np.array_equal(parse_rle(text).cells, GLIDER)


def test_parse_rle_fills_omitted_dead_cells_and_skips_rows():
    p = parse_rle("x = 6, y = 5\no3$bo!")
    expected = np.zeros((5, 6), bool)
    expected[0, 0] = expected[3, 1] = True
    assert np.array_equal(p.cells, expected)
    assert not parse_rle("x = 4, y = 2\n!").cells.any()
    p = parse_rle("x = 40, y = 1\n12b28o!")
    assert p.cells[0, 12:].all() and not p.cells[0, :12].any()
    # a '$' on the last row (or beyond) with nothing after it is harmless
    assert np.array_equal(parse_rle("x = 3, y = 3\nbob$2bo$3o$!").cells, GLIDER)


@pytest.mark.parametrize("text, line, col, needle", [
    # missing header
    ("bo$2bo$3o!", 1, 1, "header"),
    ("", 1, 1, "header"),
    ("#N Only a name\n#C and a comment\n", 2, 17, "found end of file"),
    # bad header
    ("x = 3, z = 3\nbo!", 1, 8, "'y = ...'"),
    ("x = 3\nbo!", 1, 6, "'y = ...'"),
    ("x = 3, y = 3, rules = B3/S23\n!", 1, 15, "'rule = ...'"),
    ("y = 3, x = 3\n!", 1, 1, "header"),
    # x / y not positive integers
    ("x = 0, y = 3\n!", 1, 5, "positive whole number for x"),
    ("x = 3, y = three\n!", 1, 12, "positive whole number for y"),
    ("x = -3, y = 3\n!", 1, 5, "positive"),
    ("x = , y = 3\n!", 1, 5, "found nothing"),
    ("x = 100000, y = 100000\n!", 1, 5, "at most"),
    # bad rule
    ("x = 3, y = 3, rule = B9/S23\n!", 1, 22, "rule"),
    # unknown characters
    ("x = 3, y = 3\nbo$2bx$3o!", 2, 6, "found 'x'"),
    ("#N Glider\n#C c\nx = 3, y = 3\nbo$2bo$\n3oA!", 5, 3, "found 'A'"),
    ("x = 3, y = 3\nbo$2bo$.o!", 2, 8, "found '.'"),
    ("x = 3, y = 3\n#C late comment\nbo!", 2, 1, "found '#'"),
    # a row longer than x
    ("x = 3, y = 3\nbo$4o!", 2, 5, "x = 3"),
    ("x = 3, y = 3\nbo$2b2b!", 2, 7, "x = 3"),
    # more rows than y
    ("x = 3, y = 2\nbo$2bo$3o!", 2, 9, "y = 2"),
    ("x = 3, y = 2\n5$o!", 2, 3, "y = 2"),
    # a count with no tag
    ("x = 3, y = 3\nbo$2bo$3o3!", 2, 11, "count 3"),
    ("x = 3, y = 3\nbo$12\nbo!", 3, 1, "x = 3 cells in row 2, found 12"),   # 12 b
    ("x = 3, y = 3\nbo$2 bo!", 2, 5, "count 2"),
    ("x = 3, y = 3\n0bo!", 2, 1, "count >= 1"),
    # missing '!'
    ("x = 3, y = 3\nbo$2bo$3o\n\n", 2, 10, "'!'"),
    ("x = 3, y = 3\nbo$2bo$3o", 2, 10, "end of file"),
    ("x = 3, y = 3\nbo$2bo$3", 2, 9, "after the count 3, found end of file"),
    ("x = 3, y = 3\nbo$2bo$3\n\n", 2, 9, "after the count 3, found end of file"),
])
def test_malformed_rle_reports_line_and_column(text, line, col, needle):
    with pytest.raises(PatternError) as info:
        parse_rle(text, source="bad.rle")
    message = str(info.value)
    assert message.startswith(f"bad.rle:{line}:{col}: "), message
    assert needle in message
    assert "\n" not in message
    assert (info.value.line, info.value.col) == (line, col)
    assert isinstance(info.value, EmberError)


def test_default_source_names():
    with pytest.raises(PatternError, match=r"^<rle>:1:1: "):
        parse_rle("!")
    with pytest.raises(PatternError, match=r"^<cells>:1:2: "):
        parse_cells(".x")


# ---------------------------------------------------------------------------- plaintext

def test_parse_cells_pads_short_lines_and_accepts_stars():
    p = parse_cells("!Name: Odd rows\n!comment\n.O\n\n*..O\n!another comment\nO\n\n\n")
    assert p.name == "Odd rows" and p.rule is None
    expected = np.array([[0, 1, 0, 0],
                         [0, 0, 0, 0],
                         [1, 0, 0, 1],
                         [1, 0, 0, 0]], bool)
    assert np.array_equal(p.cells, expected)
    assert np.array_equal(parse_cells(".O.\r\n..O\r\nOOO\r\n").cells, GLIDER)


@pytest.mark.parametrize("text, line, col, found", [
    ("!c\n.O.\n..o\n", 3, 3, "'o'"),
    (".O.\n. O\n", 2, 2, "' '"),
    ("!c\n", 1, 3, "none"),
    ("\n\n", 1, 1, "none"),
])
def test_parse_cells_errors(text, line, col, found):
    with pytest.raises(PatternError) as info:
        parse_cells(text, source="x.cells")
    assert str(info.value).startswith(f"x.cells:{line}:{col}: ")
    assert found in str(info.value)


# ---------------------------------------------------------------------------- files

def test_read_pattern_extension_is_case_insensitive(tmp_path):
    shutil.copy(PATTERNS / "glider.rle", tmp_path / "GLIDER.RLE")
    shutil.copy(PATTERNS / "glider.cells", tmp_path / "Glider.Cells")
    assert np.array_equal(read_pattern(tmp_path / "GLIDER.RLE").cells, GLIDER)
    assert np.array_equal(read_pattern(str(tmp_path / "Glider.Cells")).cells, GLIDER)


def test_read_pattern_errors_name_the_file(tmp_path):
    missing = tmp_path / "nope.rle"
    with pytest.raises(PatternError, match=re.escape(str(missing))) as info:
        read_pattern(missing)
    assert "expected an existing pattern file" in str(info.value)
    with pytest.raises(PatternError, match=r"\.rle or \.cells"):
        read_pattern(tmp_path / "glider.txt")
    (tmp_path / "dir.rle").mkdir()
    with pytest.raises(PatternError, match="directory"):
        read_pattern(tmp_path / "dir.rle")
    bad = tmp_path / "bad.rle"
    bad.write_text("#N x\nx = 3, y = 3\nbo$2bz!\n")
    with pytest.raises(PatternError) as info:
        read_pattern(bad)
    assert str(info.value).startswith(f"{bad}:3:6: ")
    binary = tmp_path / "bin.rle"
    binary.write_bytes(b"x = 1, y = 1\n\xffo!")
    with pytest.raises(PatternError, match=r":2:1: expected UTF-8 text, found byte 0xff"):
        read_pattern(binary)


# ---------------------------------------------------------------------------- writing

def _grids():
    rng = np.random.default_rng(1234)
    yield np.ones((1, 1), bool)
    yield np.zeros((1, 1), bool)
    for h, w in [(3, 7), (5, 70), (65, 33), (2, 201), (40, 1)]:
        for density in (0.0, 0.1, 0.5, 0.9, 1.0):
            yield rng.random((h, w)) < density
    g = np.zeros((9, 9), bool)
    g[8, 8] = True                                  # only the bottom-right corner
    yield g
    g = np.zeros((9, 9), bool)
    g[0, 0] = True                                  # only the top-left corner
    yield g


@pytest.mark.parametrize("cells", list(_grids()),
                         ids=lambda g: f"{g.shape[1]}x{g.shape[0]}-{int(g.sum())}")
def test_write_then_parse_round_trips_exactly(cells):
    text = write_rle(cells, name="round trip")
    p = parse_rle(text)
    assert p.cells.shape == cells.shape
    assert np.array_equal(p.cells, cells)
    assert p.rule == "B3/S23" and p.name == "round trip"
    lines = text.splitlines()
    assert all(len(line) <= MAX_LINE for line in lines)
    assert text.endswith("!\n")
    body = "".join(lines[2:])
    assert not re.search(r"b[$!]", body), "trailing dead cells are omitted"
    assert not re.search(r"(?<![0-9])1[bo$]", body), "runs of one have no count"
    assert not re.search(r"([bo])\1", body), "runs are compressed"
    assert not re.search(r"\$\$", body), "empty rows are merged into one counted '$'"


def test_write_rle_exact_text():
    assert write_rle(GLIDER, name="Glider") == ("#N Glider\nx = 3, y = 3, rule = B3/S23\n"
                                                "bo$2bo$3o!\n")
    assert write_rle(np.zeros((4, 5), bool)) == "x = 5, y = 4, rule = B3/S23\n!\n"
    g = np.zeros((6, 4), bool)
    g[0, 3] = g[4, 0] = True
    assert write_rle(g, rule="B36/S23") == "x = 4, y = 6, rule = B36/S23\n3bo4$o!\n"
    assert write_rle(np.ones((2, 80), bool)).splitlines()[1] == "80o$80o!"


def test_write_rle_wraps_long_lines_between_runs():
    row = np.tile(np.array([1, 0], bool), 100)[None, :]   # 'obobob...': 200 one-character runs
    text = write_rle(np.repeat(row, 3, axis=0))
    lines = text.splitlines()
    assert max(map(len, lines)) == MAX_LINE
    assert np.array_equal(parse_rle(text).cells, np.repeat(row, 3, axis=0))


def test_write_rle_rejects_bad_input():
    with pytest.raises(ValueError):
        write_rle(np.zeros(5, bool))
    with pytest.raises(ValueError):
        write_rle(np.zeros((0, 3), bool))
    with pytest.raises(ValueError):
        write_rle(GLIDER, rule="B9")


# ---------------------------------------------------------------------------- soups

def test_random_soup_is_deterministic():
    a = random_soup(97, 61, 0.3, seed=7)
    assert a.dtype == bool and a.shape == (61, 97)
    assert np.array_equal(a, random_soup(97, 61, 0.3, seed=7))
    assert not np.array_equal(a, random_soup(97, 61, 0.3, seed=8))
    # numpy's PCG64 stream: one uniform per cell, row by row
    expected = np.random.Generator(np.random.PCG64(7)).random((61, 97)) < 0.3
    assert np.array_equal(a, expected)


@pytest.mark.parametrize("density", [0.05, 0.3, 0.5, 0.9])
def test_random_soup_density_within_3_sigma(density):
    w, h = 333, 211
    n = w * h
    alive = int(random_soup(w, h, density, seed=11).sum())
    sigma = (n * density * (1 - density)) ** 0.5
    assert abs(alive - n * density) <= 3 * sigma
    assert not random_soup(w, h, 0.0, seed=1).any()
    assert random_soup(w, h, 1.0, seed=1).all()


def test_random_soup_stays_in_its_rectangle():
    x, y, w, h = 10, 5, 31, 17
    g = random_soup(64, 40, 0.5, seed=3, rect=(x, y, w, h))
    inside = g[y:y + h, x:x + w]
    outside = g.copy()
    outside[y:y + h, x:x + w] = False
    assert not outside.any()
    n = w * h
    assert abs(int(inside.sum()) - n * 0.5) <= 3 * (n * 0.25) ** 0.5
    full = random_soup(64, 40, 1.0, seed=3, rect=(x, y, w, h))
    assert int(full.sum()) == n and full[y:y + h, x:x + w].all()


@pytest.mark.parametrize("args", [
    (10, 10, 1.5, 0, None), (10, 10, -0.1, 0, None), (0, 10, 0.5, 0, None),
    (10, 10, 0.5, 0, (5, 5, 6, 1)), (10, 10, 0.5, 0, (-1, 0, 2, 2)), (10, 10, 0.5, 0, (0, 0, 0, 2)),
])
def test_random_soup_rejects_bad_arguments(args):
    with pytest.raises(PatternError):
        random_soup(*args)


# ---------------------------------------------------------------------------- placing

def test_place_centres_by_default():
    grid = np.zeros((7, 10), bool)
    place(grid, GLIDER, None)
    expected = np.zeros((7, 10), bool)
    expected[2:5, 3:6] = GLIDER        # ((10 - 3) // 2, (7 - 3) // 2) = (3, 2)
    assert np.array_equal(grid, expected)
    grid = np.zeros((4, 4), bool)
    place(grid, np.ones((1, 1), bool), None)
    assert grid[1, 1] and grid.sum() == 1     # (4 - 1) // 2 = 1
    grid = np.zeros((3, 3), bool)
    place(grid, read_pattern(PATTERNS / "glider.rle"), None)   # a Pattern works too
    assert np.array_equal(grid, GLIDER)


def test_place_at_offset_ors_into_the_grid():
    grid = np.zeros((5, 8), bool)
    grid[0, 0] = grid[4, 6] = True
    place(grid, GLIDER, (5, 2))
    assert grid[0, 0] and grid[4, 6]                   # kept
    assert np.array_equal(grid[2:5, 5:8], GLIDER | np.array([[0, 0, 0], [0, 0, 0], [0, 1, 0]],
                                                            bool))
    assert int(grid.sum()) == 6                       # (4, 6) was alive in both
    place(grid, GLIDER, (0, 0))
    assert np.array_equal(grid[0:3, 0:3], GLIDER | np.eye(3, dtype=bool) * [[1], [0], [0]])


def test_place_errors_name_sizes_and_offset():
    grid = np.zeros((10, 20), bool)
    with pytest.raises(PatternError) as info:
        place(grid, np.ones((9, 36), bool), None, source="gun.rle")
    message = str(info.value)
    assert message.startswith("gun.rle: ") and "36x9" in message and "20x10" in message
    with pytest.raises(EmberError) as info:
        place(grid, GLIDER, (18, 2))
    message = str(info.value)
    assert "3x3" in message and "20x10" in message and "[18, 2]" in message
    for offset in [(-1, 0), (0, -1), (17, 8), (0, 8)]:
        with pytest.raises(PatternError, match=re.escape(str(list(offset)))):
            place(grid, GLIDER, offset)
    place(grid, GLIDER, (17, 7))      # the last offset that fits
    assert int(grid.sum()) == 5


# ---------------------------------------------------------------------------- limits, Golly RLE

def one_line_pattern_error(parse, text, source="big.rle") -> str:
    with pytest.raises(PatternError) as info:
        parse(text, source=source)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    return message


@pytest.mark.parametrize("text, needle", [
    ("x = " + "9" * 5000 + ", y = 3\n!", "x = 999999999999... (5000 digits), y = 3"),
    ("x = 3, y = " + "1" * 5000 + "\n!", "(5000 digits)"),
    ("x = 0000000000000000000003, y = 2\n3o$3o!", None),      # leading zeros: still 3
    ("x = " + "0" * 5000 + "3, y = 2\n3o$3o!", None),
    ("x = 3, y = 2\n" + "0" * 5000 + "3o$3o!", None),
    ("x = 32768, y = 32769\n!", "at most 1073741824 cells"),
    ("x = 3, y = 3\n" + "7" * 5000 + "o!", "run count of at most 1073741824"),
    ("x = 3, y = 3\n1073741825$o!", "run count of at most 1073741824"),
])
def test_huge_numbers_are_pattern_errors(text, needle):
    if needle is None:
        assert parse_rle(text).cells.all()
        return
    assert needle in one_line_pattern_error(parse_rle, text)


def test_huge_run_count_points_at_its_first_digit():
    message = one_line_pattern_error(parse_rle, "x = 3, y = 3\nbo$2b" + "5" * 5000 + "o!")
    assert message.startswith("big.rle:2:6: ")


def test_cells_limit_is_checked_before_allocating():
    # 1.1 MB of text: one row of 550,000 cells and 550,000 rows would be 282 GB as a dense grid
    text = "O" * 550_000 + "\n" * 550_000 + "O\n"
    message = one_line_pattern_error(parse_cells, text, "wide.cells")
    assert message == ("wide.cells: expected a pattern of at most 1073741824 cells, found 550000 "
                       "columns x 550001 rows")


def test_a_count_may_continue_on_the_next_line():
    """Golly and lifelib read line breaks inside the runs as nothing at all (their writers and
    mail programs break lines anywhere): a count before a line break belongs to the tag after it,
    and its digits may be split too."""
    expected = np.zeros((3, 16), bool)
    expected[0, 12:14] = True                        # 12b2o
    expected[2, :13] = True                          # 2$ (a split '2'), 13o (a split '13')
    for eol in ("\n", "\r\n", "\r"):
        text = eol.join(["#N split", "x = 16, y = 3", "1", "2b2", "o2", "$1", "3o!"]) + eol
        pattern = parse_rle(text)
        assert np.array_equal(pattern.cells, expected), repr(eol)
        assert pattern.name == "split"
    assert np.array_equal(parse_cells(".O.\r..O\rOOO\r").cells, GLIDER)   # old Mac line ends


def test_cxrle_pos_and_gen_are_kept_and_do_not_move_the_pattern():
    text = "#N Glider\n#CXRLE Pos=-5,17 Gen=1234 Foo=bar\nx = 3, y = 3, rule = B3/S23\nbo$2bo$3o!"
    pattern = parse_rle(text)
    assert np.array_equal(pattern.cells, GLIDER) and pattern.name == "Glider"
    assert pattern.position == (-5, 17) and pattern.generation == 1234
    plain = parse_rle("x = 3, y = 3\nbo$2bo$3o!")
    assert plain.position is None and plain.generation is None
    assert np.array_equal(on_grid(pattern.cells, 11, 9), on_grid(plain.cells, 11, 9))
    big = parse_rle("#CXRLE Gen=" + "9" * 999 + "\nx = 1, y = 1\no!")
    assert big.generation == 10 ** 999 - 1                     # Golly's generations are bigints
    assert parse_rle("#CXRLE\nx = 1, y = 1\no!").position is None   # no keys at all


@pytest.mark.parametrize("line, col, needle", [
    ("#CXRLE Pos=3", 12, "'Pos=X,Y'"),
    ("#CXRLE Gen=12 Pos=a,b", 19, "found 'Pos=a,b'"),
    ("  #CXRLE Pos=1,2 Gen=-4", 22, "'Gen=G'"),
    ("#CXRLE Pos=" + "1" * 11 + ",0", 12, "at most 10"),
    ("#CXRLE Gen=" + "1" * 5000, 12, "(5000 digits)"),
])
def test_bad_cxrle_values_are_pattern_errors(line, col, needle):
    message = one_line_pattern_error(parse_rle, line + "\nx = 1, y = 1\no!")
    assert message.startswith(f"big.rle:1:{col}: ") and needle in message, message


def test_rule_mismatch_names_both_rules():
    from emberfx.systems.life.patterns import rule_mismatch

    highlife = parse_rle("x = 1, y = 1, rule = B36/S23\no!")
    assert rule_mismatch(highlife, "b36s23") is None           # the same rule, spelt otherwise
    assert rule_mismatch(highlife, "23/36") is None
    assert rule_mismatch(parse_rle("x = 1, y = 1\no!"), "B3/S23") is None   # no rule in the file
    assert rule_mismatch(highlife, "B3/S23") == ("says rule = B36/S23 in its header, but the "
                                                "layer's rule is B3/S23")


def test_read_pattern_refuses_what_is_not_a_regular_file(tmp_path):
    import os

    zero = tmp_path / "zero.rle"
    zero.symlink_to("/dev/zero")
    with pytest.raises(PatternError, match=r"zero\.rle: expected a regular pattern file, found a "
                                           r"character device$"):
        read_pattern(zero)
    fifo = tmp_path / "pipe.cells"
    os.mkfifo(fifo)
    with pytest.raises(PatternError, match=r"found a FIFO \(named pipe\)$"):
        read_pattern(fifo)                                     # refused without opening it
    linked = tmp_path / "linked.rle"
    linked.symlink_to(PATTERNS / "glider.rle")                 # a link to a file is fine
    assert np.array_equal(read_pattern(linked).cells, GLIDER)
    huge = tmp_path / "huge.rle"
    with open(huge, "wb") as f:                                # sparse: no disk used
        f.truncate(300 << 20)
    with pytest.raises(PatternError, match=r"at most 256 MiB, found 300 MiB$"):
        read_pattern(huge)
