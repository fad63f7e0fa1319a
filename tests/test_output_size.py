"""An odd size: an MP4 (H.264, yuv420p) is rendered at the size rounded up to even, with a note
on stderr that says so; PNG and GIF keep the exact size. Through the CLI in a subprocess; the
files' sizes are read back from the files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import imageio_ffmpeg
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
FOUNTAIN = ROOT / "scenes" / "fountain.toml"
BACKGROUND = (0x10, 0x10, 0x14)   # fountain.toml's background, '#101014'


def render(tmp_path: Path, scene: Path, out: str, *size: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "emberfx", "render", str(scene), "--frames", "2",
                           "--out", out, *size], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done


def read_mp4(path: Path) -> np.ndarray:
    """Every frame of an MP4, decoded by ffmpeg: (frames, h, w, 3) uint8."""
    reader = imageio_ffmpeg.read_frames(str(path))
    w, h = next(reader)["size"]
    return np.stack([np.frombuffer(raw, np.uint8).reshape(h, w, 3) for raw in reader])


def notes(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if " to " in ln and "H.264 video" in ln]


def test_an_odd_mp4_size_is_rounded_up_to_even_and_said(tmp_path, gpu):
    done = render(tmp_path, FOUNTAIN, "odd.mp4", "--size", "97x55")
    assert notes(done.stderr) == ["emberfx: odd.mp4: 97x55 rounded up to 98x56 (H.264 video "
                                  "needs an even width and height; .png, .gif and .mov keep the "
                                  "exact size)"]
    assert "wrote odd.mp4 (2 frames, 98x56)" in done.stdout
    frames = read_mp4(tmp_path / "odd.mp4")
    assert frames.shape[:3] == (2, 56, 98)
    # rendered at 98x56, not padded: the last row and column show the scene as the row and
    # column next to them do, not black (padding would sit 16-20 below the darkest of the scene:
    # its background)
    last = frames[-1].astype(float)
    for edge, inner in ((last[-1, :, :3], last[-2, :, :3]), (last[:, -1, :3], last[:, -2, :3])):
        assert np.abs(edge.mean(axis=0) - inner.mean(axis=0)).max() < 8, edge.mean(axis=0)
        assert (edge.mean(axis=0) >= np.array(BACKGROUND) - 6).all(), edge.mean(axis=0)


@pytest.mark.parametrize("ext", ["png", "gif"])
def test_other_formats_keep_the_exact_odd_size(tmp_path, gpu, ext):
    done = render(tmp_path, FOUNTAIN, f"odd.{ext}", "--size", "97x55")
    assert notes(done.stderr) == []
    assert "wrote odd." + ext + " (2 frames, 97x55)" in done.stdout
    image = iio.imread(tmp_path / f"odd.{ext}", index=None)
    assert image.shape[-3:-1] == (55, 97)


def test_an_odd_scene_size_is_rounded_up_for_mp4_too(tmp_path, gpu):
    scene = tmp_path / "odd.toml"
    scene.write_text(FOUNTAIN.read_text().replace("size = [960, 540]", "size = [64, 35]"),
                     encoding="utf-8")
    done = render(tmp_path, scene, "scene.mp4")
    assert len(notes(done.stderr)) == 1 and "64x35 rounded up to 64x36" in done.stderr
    assert read_mp4(tmp_path / "scene.mp4").shape[:3] == (2, 36, 64)


def test_an_engine_built_at_an_odd_size_is_padded_and_said(tmp_path, gpu, capsys):
    """`run` on an adapter that cannot present has its Engine already: the MP4 is padded."""
    from emberfx.app.headless import render_headless
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import load_scene

    engine = Engine(load_scene(FOUNTAIN), size=(33, 21), scripts=False)
    render_headless(engine.scene, 2, tmp_path / "built.mp4", engine=engine)
    said = notes(capsys.readouterr().err)
    assert said == ["emberfx: built.mp4: 33x21 padded with black to 34x22 (H.264 video needs an "
                    "even width and height; .png, .gif and .mov keep the exact size)"]
    assert read_mp4(tmp_path / "built.mp4").shape[:3] == (2, 22, 34)
