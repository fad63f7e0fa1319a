"""Hostile input to the output side: each case ends in a one-line error or in correct output, with
no partial file and no temp file left behind.

- empty point sets (an emitter with nothing alive) export as valid PLY, npz and USD;
- ``Engine.export`` with no folder is a one-line EmberError;
- EXR onto a full disk, the same path for ``--out`` and ``--depth``, a ``--depth`` that fails
  after ``--out`` was written: one line, and no output of the run appears;
- sizes beyond the device's buffer limit, and PNGs beyond Pillow's decompression-bomb limit;
- frame and step counts that cannot finish or fit;
- SIGTERM and an early Ctrl-C of the CLI.

The CLI cases run ``python -m emberfx`` in a subprocess, as a user would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from emberfx.core.errors import EmberError

ROOT = Path(__file__).resolve().parent.parent
FOUNTAIN = ROOT / "scenes" / "fountain.toml"


def run_module(*argv, cwd=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "emberfx", *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def error_line(stderr: str) -> str:
    """The last stderr line, after checking it is the only error line and no traceback came."""
    assert "Traceback" not in stderr, stderr
    errors = [ln for ln in stderr.splitlines() if ln.startswith("emberfx: error:")]
    assert len(errors) == 1, stderr
    assert stderr.rstrip().endswith(errors[0]), stderr
    return errors[0]


# ---------------------------------------------------------------------------- empty point sets

def test_sampler_ply_export_writes_emitters_with_no_particle_as_zero_vertices(gpu, tmp_path):
    """scenes/sampler.toml has emitters with nothing alive in their first steps."""
    plyfile = pytest.importorskip("plyfile")
    r = run_module("export", "sampler", "--frames", 3, "--format", "ply", "--out",
                   tmp_path / "out")
    assert r.returncode == 0, r.stderr
    files = sorted((tmp_path / "out").iterdir())
    counts: dict[str, int] = {}
    properties: dict[str, set[tuple[str, ...]]] = {}
    for path in files:
        vertex = plyfile.PlyData.read(str(path))["vertex"]
        counts[path.name] = vertex.count
        properties.setdefault(path.name.split(".")[0], set()).add(
            tuple(p.name for p in vertex.properties))
        assert len(vertex.data) == vertex.count
    assert any(n == 0 for n in counts.values()), counts   # the case: an empty emitter
    assert any(n > 0 for n in counts.values()), counts
    # an empty step has the same columns as a full one of the same entity
    assert all(len(columns) == 1 for columns in properties.values()), properties
    assert f"wrote {len(files)} files" in r.stdout


def _empty_emitter_engine(tmp_path):
    import emberfx

    scene = tmp_path / "idle.toml"
    scene.write_text('[scene]\nname = "Idle"\nsize = [32, 24]\n[[entity]]\nname = "idle"\n'
                     '[entity.emitter]\ncapacity = 64\nrate = 0.0\n')
    return emberfx.Engine(emberfx.load_scene(scene), size=(32, 24))


def test_empty_point_sets_write_valid_npz_and_usd(gpu, tmp_path):
    engine = _empty_emitter_engine(tmp_path)
    try:
        engine.step(2)
        (npz,) = engine.export(tmp_path / "npz", "npz")
        with np.load(npz) as data:
            assert data["position"].shape == (0, 3) and data["id"].shape == (0,)
            assert data["color"].shape == (0, 4)
        pxr = pytest.importorskip("pxr")
        (usd,) = engine.export(tmp_path / "usd", "usd")
        stage = pxr.Usd.Stage.Open(str(usd))
        points = pxr.UsdGeom.Points(stage.GetPrimAtPath("/Emberfx/idle"))
        assert len(points.GetPointsAttr().Get(2)) == 0
    finally:
        engine.close()


def test_export_without_a_folder_is_one_line(gpu, tmp_path):
    engine = _empty_emitter_engine(tmp_path)
    try:
        for folder in (None, 5, "", b"bytes"):
            with pytest.raises(EmberError, match=r"^Engine\.export\(folder\): expected a folder "
                                                 r"path \(a non-empty str or os\.PathLike\), "
                                                 r"found ") as err:
                engine.export(folder)
            assert "\n" not in str(err.value)
    finally:
        engine.close()


# ---------------------------------------------------------------------------- EXR, depth, groups


def test_exr_onto_a_full_disk_is_one_line_and_leaves_nothing(gpu, tmp_path, full_disk):
    pytest.importorskip("OpenEXR")
    out = full_disk / "x.exr"
    r = run_module("render", FOUNTAIN, "--frames", 2, "--size", "64x36", "--out", out,
                   cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    error = error_line(r.stderr)
    assert error.startswith(f"emberfx: error: cannot write {out}: ")
    assert "No space left on device" in error and ".tmp" not in error
    assert os.listdir(full_disk) == ["filler"] and "wrote" not in r.stdout


@pytest.mark.parametrize("suffix", [".exr", ".npy"])
def test_a_failing_depth_leaves_no_out_file_either(gpu, tmp_path, full_disk, suffix):
    """--out is finished first, then --depth fails on a full disk: neither appears."""
    if suffix == ".exr":
        pytest.importorskip("OpenEXR")
    depth = full_disk / f"depth{suffix}"
    r = run_module("render", FOUNTAIN, "--frames", 2, "--size", "64x36", "--out", "clip.png",
                   "--depth", depth, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    error = error_line(r.stderr)
    assert error.startswith(f"emberfx: error: cannot write {depth}: ")
    assert "No space left on device" in error
    assert os.listdir(tmp_path) == ["disk"]           # no clip.png, no temp file
    assert os.listdir(full_disk) == ["filler"]


def test_exr_out_and_depth_on_one_path_are_refused_before_rendering(gpu, tmp_path):
    pytest.importorskip("OpenEXR")
    r = run_module("render", FOUNTAIN, "--frames", 2, "--size", "64x36", "--out", "x.exr",
                   "--depth", "./sub/../x.exr", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert error_line(r.stderr) == (
        "emberfx: error: --out x.exr and --depth sub/../x.exr are the same file: the depth "
        "would overwrite the image; give each its own name")
    assert "preparing" not in r.stderr and os.listdir(tmp_path) == []


def test_render_to_file_writes_out_and_depth_together(gpu, tmp_path):
    """The Python path: both files appear, and the same path twice is refused in one line."""
    import emberfx
    from emberfx.app.output import render_to_file

    engine = emberfx.Engine(emberfx.load_scene(FOUNTAIN), size=(48, 32))
    try:
        with pytest.raises(EmberError, match=r"are the same file"):
            render_to_file(engine, 1, tmp_path / "a.png", progress=False,
                           depth=tmp_path / "." / "a.png")
        render_to_file(engine, 2, tmp_path / "a.png", progress=False, depth=tmp_path / "d.npy")
    finally:
        engine.close()
    assert sorted(os.listdir(tmp_path)) == ["a.png", "d.npy"]
    assert np.load(tmp_path / "d.npy").shape == (32, 48)


# ---------------------------------------------------------------------------- signals

# ``python -m emberfx`` that first says when the interpreter is up: the delays below count from
# there, since nothing can handle a signal while CPython itself starts (imports ``site``)
LAUNCH = ("import os, runpy, sys; os.write(2, b'python ready\\n'); sys.argv[0] = 'emberfx'; "
          "runpy.run_module('emberfx', run_name='__main__', alter_sys=True)")


def start(folder: Path, out: str, frames: int = 5000) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "render", str(FOUNTAIN), "--frames", str(frames),
         "--out", out, "--size", "96x54"],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None   # opened with PIPE
    assert proc.stderr.readline() == "python ready\n"
    return proc


def wait_for_first_frame(proc: subprocess.Popen, out: str) -> list[str]:
    lines = []
    assert proc.stderr is not None   # opened with PIPE
    for line in proc.stderr:
        lines.append(line)
        if f"{out}: frame 1/" in line:
            return lines
    proc.wait()
    pytest.fail(f"the render did not start: {''.join(lines)}")


@pytest.mark.parametrize("out", ["clip.mp4", "clip.gif"])
@pytest.mark.parametrize("delay", [0.1, 0.25, 0.4, 0.6])
def test_an_early_ctrl_c_exits_130_without_a_traceback(gpu, tmp_path, out, delay):
    """From the command's start: parsing (the families load), the adapter, the engine, the
    encoder."""
    proc = start(tmp_path, out)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.rstrip().endswith("emberfx: interrupted"), err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("out", ["clip.mp4", "clip.gif"])
def test_sigterm_during_a_render_exits_143_and_leaves_no_temp_file(gpu, tmp_path, out):
    proc = start(tmp_path, out)
    lines = wait_for_first_frame(proc, out)
    assert any(name.endswith(f".tmp{Path(out).suffix}") for name in os.listdir(tmp_path))
    proc.send_signal(signal.SIGTERM)
    _out, rest = proc.communicate(timeout=120)
    err = "".join(lines) + rest
    assert proc.returncode == 143, err
    assert "Traceback" not in err and err.rstrip().endswith("emberfx: terminated"), err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("delay", [0.1, 0.5])
def test_an_early_sigterm_exits_143(gpu, tmp_path, delay):
    proc = start(tmp_path, "clip.mp4")
    time.sleep(delay)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and err.rstrip().endswith("emberfx: terminated"), err
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------- sizes

def test_an_exr_beyond_the_buffer_limit_is_refused_before_the_first_frame(gpu, tmp_path):
    """16384x16384 is within lavapipe's texture limit, but its HDR readback (8 bytes a pixel)
    is one byte over its 2 GiB max_buffer_size."""
    pytest.importorskip("OpenEXR")
    w = gpu.limits["max-texture-dimension-2d"]
    limit = gpu.limits["max-buffer-size"]
    if w * w * 8 <= limit:
        pytest.skip(f"{w}x{w} HDR fits this device's max_buffer_size ({limit})")
    # (at one sample per pixel: the 4x geometry image alone would not fit either, below)
    scene = tmp_path / "fountain.toml"
    scene.write_text(FOUNTAIN.read_text() + "\n[render]\nmsaa = 1\n")
    r = run_module("render", scene, "--frames", 1, "--size", f"{w}x{w}", "--out", "x.exr",
                   cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    error = error_line(r.stderr)
    assert error.startswith(f"emberfx: error: the HDR frame at {w}x{w} needs a readback "
                            f"buffer of {w * w * 8} bytes (8 bytes a pixel), over this device's "
                            f"max_buffer_size of {limit} (")
    assert "x.exr: frame" not in r.stderr and os.listdir(tmp_path) == ["fountain.toml"]


def test_an_anti_aliased_image_beyond_the_device_is_refused_in_one_line(gpu, tmp_path):
    """At the largest texture size, 4 samples a pixel of colour and depth need more memory
    than lavapipe gives: one error line naming msaa, no traceback, nothing written."""
    w = gpu.limits["max-texture-dimension-2d"]
    if w * w * 12 * 4 <= 8 << 30:
        pytest.skip(f"{w}x{w} at 4 samples may fit this device")
    r = run_module("render", FOUNTAIN, "--frames", 1, "--size", f"{w}x{w}", "--out", "x.png",
                   cwd=tmp_path)
    if r.returncode == 0:
        pytest.skip(f"{w}x{w} at 4 samples fitted this device")
    error = error_line(r.stderr)
    # lavapipe runs out of memory for the samples; a GPU with the memory for them (the H100's
    # 80 GB) reaches the point lights' tile lists, 4.3 GB at 32768x32768, over its 4 GiB buffers
    samples = f"4x anti-aliased image at {w}x{w}" in error and "msaa = 1" in error
    tiles = f"tile lists for an image of {w}x{w}" in error and "max_buffer_size" in error
    assert samples or (tiles and not gpu.is_software), error
    assert os.listdir(tmp_path) == []


def test_tile_lists_beyond_the_buffer_limit_are_refused_in_one_line():
    from emberfx.core.errors import DeviceLimitError
    from emberfx.core.point_lights import LIGHT_TILE, TILE_STRIDE, tile_bytes

    need = 4 * TILE_STRIDE * 3 * 2     # 3 x 2 tiles, the last column and row ragged
    size = (2 * LIGHT_TILE + 1, LIGHT_TILE + 5)
    gpu = LimitedGpu(need)
    assert tile_bytes(gpu, size) == need
    with pytest.raises(DeviceLimitError) as caught:
        tile_bytes(LimitedGpu(need - 1), size)
    assert str(caught.value) == (
        f"the point lights' tile lists for an image of {size[0]}x{size[1]} need {need} bytes, "
        f"over this device's max_buffer_size of {need - 1} (a small test device): render a "
        f"smaller --size")


class LimitedGpu:
    label = "a small test device"

    def __init__(self, max_buffer_size: int):
        self.limits = {"max-buffer-size": max_buffer_size}


def test_captures_are_checked_against_the_buffer_limit_and_memory(monkeypatch):
    from emberfx.core.errors import DeviceLimitError
    from emberfx.engine import captures

    captures.check_captures(LimitedGpu(64 * 32 * 4), (64, 32), ("image",))   # exactly fits
    with pytest.raises(DeviceLimitError, match=r"^the HDR frame at 64x32 needs a readback "
                                               r"buffer of 16384 bytes \(8 bytes a pixel\), "
                                               r"over this device's max_buffer_size of 16383 "
                                               r"\(a small test device\): at this width, at "
                                               r"most 31 rows$"):
        captures.check_captures(LimitedGpu(16383), (64, 32), ("image", "hdr"))
    monkeypatch.setattr(captures, "available_memory", lambda: 10 * 2**20)
    with pytest.raises(DeviceLimitError, match=r"^the image and the depth at 1024x1024 need "
                                               r"about 32\.0 MiB of memory \(4 copies while read "
                                               r"back and written\), 10\.0 MiB is available"):
        captures.check_captures(LimitedGpu(2**31), (1024, 1024), ("image", "depth"))


@pytest.mark.parametrize("ext, count", [(".png", 1), (".gif", 3)])
def test_images_past_pillows_bomb_limit_are_written_and_read_back(tmp_path, monkeypatch, ext,
                                                                  count):
    """Pillow refuses to open more than 2 * MAX_IMAGE_PIXELS pixels; lowered here so a small
    image takes the path a 16384x16384 render takes at Pillow's default limit."""
    from PIL import Image

    from emberfx.app.output import FrameWriter, write_png

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    frames = np.random.default_rng(1).integers(0, 256, (count, 48, 64, 4), np.uint8)
    with FrameWriter(tmp_path / f"clip{ext}", size=(64, 48), fps=10) as writer:
        for frame in frames:
            writer.add(frame)
    write_png(tmp_path / "shot.png", frames[-1])
    assert Image.MAX_IMAGE_PIXELS == 1000   # restored
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    with Image.open(tmp_path / "shot.png") as image:
        assert np.array_equal(np.asarray(image), frames[-1])
    with Image.open(tmp_path / f"clip{ext}") as image:
        assert getattr(image, "n_frames", 1) == count and image.size == (64, 48)
    assert sorted(os.listdir(tmp_path)) == sorted({f"clip{ext}", "shot.png"})


# ---------------------------------------------------------------------------- unending counts

def test_step_counts_that_cannot_finish_are_refused_in_one_line(gpu, tmp_path):
    from emberfx.engine.engine_guard import EngineUsageError

    engine = _empty_emitter_engine(tmp_path)
    try:
        engine.step(2)
        started = time.perf_counter()
        with pytest.raises(EngineUsageError, match=r"^step\(frames\): 1000000000 steps \(192\.9 "
                                                   r"days of simulated time, about .* at the .* "
                                                   r"ms a step measured so far\) in one call; "
                                                   r"at most 10,000,000 a call "):
            engine.step(10**9)
        with pytest.raises(EngineUsageError, match=r"^step\(frames\): 9223372036854775808 steps "
                                                   r".* would pass step 4294967295, the last the "
                                                   r"GPU's 32-bit step index .* 4294967293 steps "
                                                   r"are left after the 2 taken$"):
            engine.step(2**63)
        assert time.perf_counter() - started < 5.0   # refused, not started
        assert engine.clock.steps == 2
    finally:
        engine.close()


def test_step_budget_bounds_are_exact():
    from emberfx.engine.engine_guard import (
        MAX_STEPS_PER_CALL,
        STEP_INDEX_LIMIT,
        EngineUsageError,
        step_budget,
    )

    step_budget(MAX_STEPS_PER_CALL, "step", done=0, fixed_dt=1 / 60)
    with pytest.raises(EngineUsageError, match="in one call"):
        step_budget(MAX_STEPS_PER_CALL + 1, "step", done=0, fixed_dt=1 / 60)
    last = STEP_INDEX_LIMIT - 1   # the step index counts steps 1 .. 2**32 - 1
    step_budget(10, "--frames", done=last - 10, fixed_dt=1 / 60, per_call=None)
    with pytest.raises(EngineUsageError, match=r"^--frames: 11 steps .* 10 steps are left"):
        step_budget(11, "--frames", done=last - 10, fixed_dt=1 / 60, per_call=None)


@pytest.mark.parametrize("command", ["render", "export"])
def test_cli_frame_counts_past_the_step_index_are_refused(gpu, tmp_path, command):
    out = "x.png" if command == "render" else "cache"
    r = run_module(command, FOUNTAIN, "--frames", "99999999999999999999", "--out", out,
                   cwd=tmp_path, timeout=120)
    assert r.returncode == 1, r.stderr
    assert error_line(r.stderr).startswith(
        "emberfx: error: --frames: 99999999999999999999 steps (")
    assert "would pass step 4294967295" in r.stderr
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_gif_that_cannot_fit_in_memory_is_refused_before_the_first_frame(gpu, tmp_path):
    from emberfx.engine.captures import available_memory

    free = available_memory()
    if free is None:
        pytest.skip("available memory unknown here")
    frames = 2 * free // (320 * 180 * 3) + 1
    r = run_module("render", FOUNTAIN, "--frames", frames, "--size", "320x180", "--out",
                   "x.gif", cwd=tmp_path, timeout=120)
    assert r.returncode == 1, r.stderr
    assert error_line(r.stderr).startswith(
        f"emberfx: error: cannot write x.gif: a GIF keeps every frame in memory until it is "
        f"written, and {frames} frames of 320x180 need ")
    assert "x.gif: frame" not in r.stderr and os.listdir(tmp_path) == []


@pytest.mark.parametrize("frames, expected", [
    (4000, r"export to .*: 4000 ply files need at least .* with no point alive \(up to .* "
           r"with every slot alive\); .*'s disk has .* free$"),
    (4_000_000_000, r"export to .*: 4000000000 steps of 1 entities are 4000000000 files, and "
                    r"its disk has \d+ free inodes$")])
def test_an_export_that_cannot_fit_on_disk_is_refused(gpu, tmp_path, small_disk, frames,
                                                      expected):
    r = run_module("export", FOUNTAIN, "--frames", frames, "--format", "ply", "--out",
                   small_disk, cwd=tmp_path, timeout=120)
    assert r.returncode == 1, r.stderr
    import re

    assert re.fullmatch("emberfx: error: " + expected, error_line(r.stderr)), r.stderr
    assert os.listdir(small_disk) == [] and "export ply: frame" not in r.stderr


def test_ctrl_c_stops_a_long_step_call_between_two_steps(gpu, tmp_path):
    """A long but allowed step(n) is stopped by Ctrl-C, and the Engine goes on from there."""
    import threading

    engine = _empty_emitter_engine(tmp_path)
    try:
        engine.step(1)
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        started = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            engine.step(1_000_000)
        timer.join()
        assert time.perf_counter() - started < 30.0
        stopped_at = engine.clock.steps
        assert 1 < stopped_at < 1_000_000
        engine.step(2)   # still usable: the interrupt came between two steps
        assert engine.clock.steps == stopped_at + 2
    finally:
        engine.close()


def test_a_signal_inside_a_wgpu_callback_is_raised_once_it_is_safe(capfd):
    """cffi prints and drops an exception raised in a callback: a command's Ctrl-C that lands in
    one is recorded, the code after the callback runs, and the command still exits 130."""
    from emberfx.engine import interrupts

    module: dict[str, Any] = {"__name__": "wgpu.backends.stand_in"}   # named as wgpu names one
    exec("def buffer_map_callback(then):\n    then()\n", module)
    reached = []

    def body() -> int:
        module["buffer_map_callback"](lambda: signal.raise_signal(signal.SIGINT))
        reached.append("after the callback")
        return 0

    before = signal.getsignal(signal.SIGINT)
    assert interrupts.run_command(body, "emberfx") == 130
    assert reached == ["after the callback"]
    assert capfd.readouterr().err == "emberfx: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is before


def test_a_depth_into_a_missing_folder_is_refused_before_rendering(gpu, tmp_path):
    r = run_module("render", FOUNTAIN, "--frames", 2, "--size", "64x36", "--out", "clip.png",
                   "--depth", "nowhere/depth.npy", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert error_line(r.stderr) == ("emberfx: error: cannot write nowhere/depth.npy: folder "
                                    "nowhere does not exist")
    assert "clip.png: frame" not in r.stderr and os.listdir(tmp_path) == []
