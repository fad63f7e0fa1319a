"""``emberfx bench --plot DIR``: the size sweeps (points per size, skipped sizes carry notes, the
roofline where it applies), the PNGs (decode, stated size), redrawing from a saved JSON through
the CLI, and the one-line errors (no matplotlib, a bad --from file, misuse of the options)."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys

import numpy as np
import pytest

from emberfx.bench import plots, scaling
from emberfx.systems.life.kernels import SWEEP_GENS

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The plots need matplotlib, the [plot] extra: without it these skip here, and .ci/run installs
# the extra and runs this file again.
needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                                      reason="matplotlib (the [plot] extra) is not installed")


def png_size(path) -> tuple[int, int]:
    """Width and height from the IHDR chunk, read by hand."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def saved_sweep() -> dict:
    point = lambda size, value, note=None: {"size": size, "label": str(size), "value": value,  # noqa: E731
                                            **({"note": note} if note else {})}
    return {"adapter": "test adapter", "benchmarks": {}, "sweep": {
        "cloth": {"title": "cloth", "x_label": "vertices", "unit": "M vertex-substeps/s",
                  "roofline": {"value": 50.0, "label": "copy roofline"},
                  "series": {"measured": [point(4096, 10.0), point(65536, 12.0),
                                          point(1 << 20, None, "not run: over the budget")]}},
        "many": {"title": "many", "x_label": "emitters", "unit": "emitter-frames/s",
                 "roofline": None,
                 "series": {"CPU": [point(1, 800.0), point(10, 3000.0)],
                            "GPU": [point(1, 30.0), point(10, 100.0)]}}}}


@needs_matplotlib
def test_plots_decode_as_pngs_of_the_stated_size(tmp_path):
    import imageio.v3 as iio

    written = plots.write_plots(saved_sweep()["sweep"], tmp_path / "out", "test adapter")
    assert [p.name for p in written] == ["cloth.png", "many.png"]
    for path in written:
        assert png_size(path) == (plots.WIDTH, plots.HEIGHT)
        image = iio.imread(path)
        assert image.shape[:2] == (plots.HEIGHT, plots.WIDTH)
        assert len(np.unique(image.reshape(-1, image.shape[2]), axis=0)) > 10   # not blank


@needs_matplotlib
def test_cli_redraws_from_a_saved_json(tmp_path):
    saved = tmp_path / "sweep.json"
    saved.write_text(json.dumps(saved_sweep()))
    out = tmp_path / "plots"
    result = subprocess.run([sys.executable, "-m", "emberfx", "bench", "--plot", str(out),
                             "--from", str(saved), "many"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["many.png"]
    assert png_size(out / "many.png") == (plots.WIDTH, plots.HEIGHT)
    assert f"wrote {out / 'many.png'}" in result.stdout


@needs_matplotlib
@pytest.mark.parametrize("content,expected", [
    ("not json", "found text that is not JSON"),
    ('{"adapter": "x", "benchmarks": {}}', "expected an object with a 'sweep' entry"),
    ('{"sweep": {"cloth": 3}}', "sweep.cloth: expected an object with 'series'"),
])
def test_bad_from_file_is_one_line(tmp_path, content, expected):
    saved = tmp_path / "bad.json"
    saved.write_text(content)
    result = subprocess.run([sys.executable, "-m", "emberfx", "bench", "--plot",
                             str(tmp_path / "p"), "--from", str(saved)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert str(saved) in result.stderr and expected in result.stderr


@needs_matplotlib
@pytest.mark.parametrize("args,expected", [
    (["--from", "x.json"], "give --plot DIR too"),
    (["--plot", "DIR", "fractal"], "no size sweep for 'fractal'"),
])
def test_option_misuse_is_a_usage_error(args, expected):
    result = subprocess.run([sys.executable, "-m", "emberfx", "bench", *args],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: emberfx bench") and expected in result.stderr


def test_missing_matplotlib_is_one_line(monkeypatch, tmp_path, capsys):
    import importlib.util

    from emberfx.app.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    assert main(["bench", "--plot", str(tmp_path / "p")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'emberfx[plot]'" in err
    assert not (tmp_path / "p").exists()


def test_sweep_points_notes_and_rooflines(gpu):
    """Small sizes on the real path: a size beyond the device's storage binding is skipped with
    the Engine's note; with no time left, the sizes after the first carry the budget's note."""
    huge = (1 << 17) + 32, 1 << 17   # just over 2 GiB of state: over lavapipe's and the H200's
    sizes = {"life": [((96, 40), "96x40"), (huge, "huge")],
             "particle_life": [(300, "300")]}
    sweep = scaling.run_sweeps(("life", "particle_life"), budget_seconds=1e9, sizes=sizes)
    life = sweep["life"]["series"]["measured"]
    assert [p["size"] for p in life] == [96 * 40, huge[0] * huge[1]]
    assert life[0]["value"] > 0 and "note" not in life[0]
    assert life[1]["value"] is None and "bytes" in life[1]["note"]
    assert sweep["life"]["roofline"]["value"] > 0
    assert f"the default kernel steps {SWEEP_GENS} a pass" in sweep["life"]["roofline"]["label"]
    assert sweep["particle_life"]["roofline"] is None
    pl_series = sweep["particle_life"]["series"]
    assert set(pl_series) == {"exact (default)", "precision = half (opt-in)"}
    assert all(series[0]["value"] > 0 for series in pl_series.values())
    json.dumps(sweep)          # it goes into --json as it is

    sizes = {"cloth": [(8, "8x8"), (12, "12x12"), (16, "16x16")]}
    cloth = scaling.run_sweeps(("cloth",), budget_seconds=0.0, sizes=sizes)["cloth"]
    points = cloth["series"]["measured"]
    assert [p["size"] for p in points] == [64, 144, 256]
    assert points[0]["value"] > 0
    for p in points[1:]:
        assert p["value"] is None and "budget" in p["note"] and "predicted" in p["note"]
