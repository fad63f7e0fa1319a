"""`emberfx life PATTERN --gens N ...`: argument checks and pattern errors (no GPU), then real runs
on the GPU checked against an independent numpy Life (the `gpu` fixture: lavapipe in CI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import life_model
import numpy as np
import pytest
from PIL import Image

from emberfx.app import cli
from emberfx.systems.life.patterns import parse_rle, place, read_pattern

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ROOT / "scenes" / "patterns"
GLIDER = PATTERNS / "glider.rle"
GUN = PATTERNS / "gosper_glider_gun.rle"

# tests/test_life_patterns.py derives it: 36 cells + 4 gliders of 5 after 120 generations
GUN_120_ON_120x80_DEAD = 56


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("emberfx: error:")]


def life_step(g: np.ndarray, torus: bool = True, birth=(3,), survive=(2, 3)) -> np.ndarray:
    """One generation of the shared numpy reference (tests/life_model.py)."""
    rule = "B" + "".join(map(str, birth)) + "/S" + "".join(map(str, survive))
    return life_model.step(np.asarray(g, bool), rule, torus)


def reference(pattern_path, gens, width, height, torus=True, **rule):
    g = np.zeros((height, width), bool)
    place(g, read_pattern(pattern_path).cells, None)
    for _ in range(gens):
        g = life_step(g, torus, **rule)
    return g


# ---------------------------------------------------------------------------- usage errors (exit 2)

@pytest.mark.parametrize("argv, needle", [
    (["life", GLIDER], "--gens"),
    (["life", "--gens", "3"], "PATTERN"),
    (["life", GLIDER, "--gens", "0"], "'0'"),
    (["life", GLIDER, "--gens", "-4"], "-4"),
    (["life", GLIDER, "--gens", "2.5"], "2.5"),
    (["life", GLIDER, "--gens", "3", "--size", "16by16"], "16by16"),
    (["life", GLIDER, "--gens", "3", "--size", "0x16"], "0x16"),
    (["life", GLIDER, "--gens", "3", "--rule", "B9/S23"], "B9/S23"),
    (["life", GLIDER, "--gens", "3", "--rule", "conway"], "Life-like rule"),
    (["life", GLIDER, "--gens", "3", "--topology", "klein"], "klein"),
    (["life", GLIDER, "--gens", "3", "--memory", "triple"], "triple"),
    (["life", GLIDER, "--gens", "3", "--out", "final.gif"], ".rle, .png"),
])
def test_usage_errors_exit_2(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.startswith("usage: emberfx life")
    assert len(error_lines(err)) == 1 and needle in error_lines(err)[0]
    assert "Traceback" not in err and out == ""
    assert os.listdir(tmp_path) == []


def test_help_lists_the_options(capsys):
    code, out, _ = run_cli(capsys, "life", "--help")
    assert code == 0
    for option in ("--gens", "--size", "--rule", "--topology", "--memory", "--out", "PATTERN"):
        assert option in out


# ---------------------------------------------------------------------------- errors (exit 1)

def _bad(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("make, extra, needle", [
    (lambda d: d / "missing.rle", [], "missing.rle: expected an existing pattern file"),
    (lambda d: _bad(d, "bad.rle", "x = 3, y = 3\nbo$2bq$3o!\n"), [], "bad.rle:2:6: "),
    (lambda d: _bad(d, "nohdr.rle", "bo$2bo$3o!\n"), [], "nohdr.rle:1:1: expected a header"),
    (lambda d: _bad(d, "rule.rle", "x = 3, y = 3, rule = B3/S29\n!\n"), [], "rule.rle:1:22: rule"),
    (lambda d: _bad(d, "open.rle", "x = 3, y = 3\nbo$2bo$3o\n"), [], "open.rle:2:10: expected '!'"),
    (lambda d: _bad(d, "bad.cells", ".O.\n..X\n"), [], "bad.cells:2:3: "),
    (lambda d: _bad(d, "glider.txt", ".O.\n"), [], ".rle or .cells"),
    (lambda d: d, [], "directory"),
    (lambda d: GUN, ["--size", "30x30"], "36x9 pattern does not fit the 30x30 grid"),
    (lambda d: GUN, ["--size", "40x8"], "40x8"),
    (lambda d: GLIDER, ["--out", "no/such/folder/x.rle"], "does not exist"),
    (lambda d: GLIDER, ["--out", "adir.png"], "it is a folder"),
])
def test_pattern_errors_exit_1_with_one_line(capsys, tmp_path, monkeypatch, make, extra, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adir.png").mkdir()
    path = make(tmp_path)
    if path == tmp_path:
        path = tmp_path / "adir.rle"
        path.mkdir()
    before = sorted(os.listdir(tmp_path))
    code, out, err = run_cli(capsys, "life", path, "--gens", "4", *extra)
    assert code == 1, err
    assert err.count("\n") == 1 and len(error_lines(err)) == 1, err
    assert needle in err
    assert "Traceback" not in err and "population" not in out
    assert sorted(os.listdir(tmp_path)) == before


def test_malformed_rle_in_a_fresh_interpreter(tmp_path):
    bad = _bad(tmp_path, "bad.rle", "#N Broken\nx = 4, y = 2\n4o$5o!\n")
    proc = subprocess.run([sys.executable, "-m", "emberfx", "life", str(bad), "--gens", "3"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == f"emberfx: error: {bad}:3:5: expected at most x = 4 cells in row 2, " \
                          f"found 5\n"
    assert proc.stdout == ""


# ---------------------------------------------------------------------------- GPU runs

def last_line(out: str) -> str:
    return out.strip().splitlines()[-1]


def test_glider_population(gpu, capsys):
    code, out, err = run_cli(capsys, "life", GLIDER, "--gens", "8", "--size", "16x16")
    assert code == 0, err
    assert last_line(out) == "population 5"


@pytest.mark.parametrize("memory", ["pingpong", "inplace"])
def test_gosper_gun_matches_numpy(gpu, capsys, tmp_path, memory):
    out_rle = tmp_path / "gun.rle"
    code, out, err = run_cli(capsys, "life", GUN, "--gens", "120", "--size", "120x80",
                             "--topology", "dead", "--memory", memory, "--out", out_rle)
    assert code == 0, err
    assert last_line(out) == f"population {GUN_120_ON_120x80_DEAD}"
    final = parse_rle(out_rle.read_text(), str(out_rle))
    assert final.cells.shape == (80, 120)
    assert np.array_equal(final.cells, reference(GUN, 120, 120, 80, torus=False))


def test_out_rle_round_trips(gpu, capsys, tmp_path):
    out_rle = tmp_path / "glider_after.rle"
    code, out, err = run_cli(capsys, "life", GLIDER, "--gens", "8", "--size", "16x16",
                             "--out", out_rle)
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[-1] == "population 5" and str(out_rle) in lines[0]
    final = parse_rle(out_rle.read_text())
    assert final.cells.shape == (16, 16) and final.rule == "B3/S23" and final.name == "Glider"
    start = reference(GLIDER, 0, 16, 16)
    assert np.array_equal(final.cells, np.roll(start, (2, 2), (0, 1)))   # 2 cells down-right
    assert [p.name for p in tmp_path.iterdir()] == ["glider_after.rle"]   # no temp files left


def test_torus_wraps_and_uneven_generation_counts(gpu, capsys, tmp_path):
    # 16x16 torus, 100 generations (not a multiple of 64): the glider wraps around the edges
    out_rle = tmp_path / "wrapped.rle"
    code, out, err = run_cli(capsys, "life", PATTERNS / "glider.cells", "--gens", "100",
                             "--size", "16x16", "--out", out_rle)
    assert code == 0, err
    assert np.array_equal(parse_rle(out_rle.read_text()).cells, reference(GLIDER, 100, 16, 16))


def test_rule_from_header_and_override(gpu, capsys, tmp_path):
    # in HighLife (B36/S23) this cluster gives births on 6 neighbours; in Life it does not
    pattern = _bad(tmp_path, "six.rle", "#N Six\nx = 5, y = 5, rule = B36/S23\n"
                                         "b3o$o3bo$o3bo$o3bo$b3o!\n")
    for extra, birth in (([], (3, 6)), (["--rule", "B3/S23"], (3,)), (["--rule", "23/36"], (3, 6))):
        out_rle = tmp_path / "out.rle"
        code, out, err = run_cli(capsys, "life", pattern, "--gens", "9", "--out", out_rle, *extra)
        assert code == 0, err
        expected = reference(pattern, 9, 64, 64, birth=birth)     # default size: 64x64
        assert last_line(out) == f"population {int(expected.sum())}"
        final = parse_rle(out_rle.read_text())
        assert np.array_equal(final.cells, expected)
        assert final.rule == ("B36/S23" if 6 in birth else "B3/S23")   # written canonically
    assert not np.array_equal(reference(pattern, 9, 64, 64, birth=(3, 6)),
                              reference(pattern, 9, 64, 64, birth=(3,)))


def test_out_png(gpu, capsys, tmp_path):
    png = tmp_path / "gun.png"
    code, out, err = run_cli(capsys, "life", GUN, "--gens", "30", "--out", png)
    assert code == 0, err
    assert last_line(out) == "population 41"     # default size 72x64: one glider emitted
    img = np.asarray(Image.open(png).convert("RGBA"))
    assert img.shape == (64, 72, 4)
    assert img[..., :3].std() > 0


# ---------------------------------------------------------------------------- not pattern files

def run_life(*argv, timeout=60):
    return subprocess.run([sys.executable, "-m", "emberfx", "life", *map(str, argv)],
                          capture_output=True, text=True, timeout=timeout)


def test_devices_and_fifos_are_refused_without_reading_them(tmp_path):
    """/dev/zero would be read until memory runs out and a FIFO blocks until someone writes to
    it: both are refused at once (a 60 s timeout stands for "blocked"), as scene loading does."""
    zero = tmp_path / "zero.rle"
    zero.symlink_to("/dev/zero")
    fifo = tmp_path / "pipe.cells"
    os.mkfifo(fifo)
    for path, kind in ((zero, "a character device"), (fifo, "a FIFO (named pipe)")):
        proc = run_life(path, "--gens", "3")
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr == (f"emberfx: error: {path}: expected a regular pattern file, found "
                               f"{kind}\n")
        assert proc.stdout == ""


@pytest.mark.parametrize("name, text, needle", [
    ("huge.rle", "x = " + "9" * 5000 + ", y = 3\n!\n",
     ":1:5: expected a pattern of at most 1073741824 cells"),
    ("huge.rle", "x = 3, y = 3\n2b" + "4" * 5000 + "o!\n",
     ":2:3: expected a run count of at most 1073741824"),
    ("huge.rle", "#CXRLE Pos=1,2 Gen=" + "7" * 5000 + "\nx = 1, y = 1\no!\n",
     ":1:20: expected 'Gen=G'"),
    ("wide.cells", "O" * 550_000 + "\n" * 550_000 + "O\n",        # 1.1 MB, 282 GB as a grid
     ": expected a pattern of at most 1073741824 cells, found 550000 columns x 550001 rows"),
], ids=["huge-size", "huge-run", "huge-generation", "wide-cells"])   # the ids go into the
# environment of the CLI's process (PYTEST_CURRENT_TEST), where a 1 MB pattern is too long
def test_huge_numbers_exit_1_with_one_line(tmp_path, name, text, needle):
    path = _bad(tmp_path, name, text)
    proc = run_life(path, "--gens", "3")
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"emberfx: error: {path}{needle}"), proc.stderr
    assert proc.stderr.count("\n") == 1 and len(proc.stderr) < 300 and proc.stdout == ""


def test_golly_rle_runs(gpu, tmp_path):
    """What Golly writes: a #CXRLE line and runs broken across lines, a count on one line and its
    tag on the next. The glider after 8 generations on a 16x16 torus: the numpy oracle's."""
    golly = _bad(tmp_path, "golly.rle", "#CXRLE Pos=-1,-1 Gen=40\nx = 3, y = 3, rule = B3/S23\n"
                                        "bo$2\nbo$3\no!\n")
    out_rle = tmp_path / "after.rle"
    proc = run_life(golly, "--gens", "8", "--size", "16x16", "--out", out_rle, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "population 5"
    np.testing.assert_array_equal(parse_rle(out_rle.read_text()).cells,
                                  reference(GLIDER, 8, 16, 16))
