"""Headless capture (emberfx.output) with synthetic frames: no GPU needed.

Sizes are deliberately not multiples of 16 (codec macroblocks) or even (yuv420p chroma).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import imageio.v3 as iio
import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

from emberfx.errors import EmberError, UsageError
from emberfx.output import FrameWriter, render_to_file, write_png

W, H = 50, 30


def frames(n: int, size=(W, H), seed: int = 0) -> list[np.ndarray]:
    """n distinct random RGBA frames (distinct, so GIF cannot merge identical neighbours)."""
    rng = np.random.default_rng(seed)
    out = [rng.integers(0, 256, (size[1], size[0], 4), dtype=np.uint8) for _ in range(n)]
    for f in out:
        f[..., 3] = 255
    return out


def listing(folder) -> list[str]:
    return sorted(os.listdir(folder))


def test_png_round_trips_exactly(tmp_path):
    fs = frames(3)
    fs[-1][..., 3] = np.arange(W, dtype=np.uint8)[None, :] * 5  # alpha survives too
    out = tmp_path / "shot.png"
    with FrameWriter(out, size=(W, H), fps=30) as w:
        for f in fs:
            w.add(f)
    back = np.asarray(Image.open(out).convert("RGBA"))
    np.testing.assert_array_equal(back, fs[-1])  # only the final frame is kept
    assert listing(tmp_path) == ["shot.png"]


def test_write_png_round_trips_and_accepts_rgb(tmp_path):
    rgba = frames(1, size=(33, 17))[0]
    write_png(tmp_path / "a.png", rgba)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "a.png")), rgba)
    write_png(tmp_path / "b.png", rgba[..., :3])
    back = np.asarray(Image.open(tmp_path / "b.png").convert("RGBA"))
    np.testing.assert_array_equal(back[..., :3], rgba[..., :3])
    assert (back[..., 3] == 255).all()


@pytest.mark.parametrize("size", [(W, H), (51, 31)])
def test_gif_has_every_frame(tmp_path, size):
    out = tmp_path / "clip.gif"
    with FrameWriter(out, size=size, fps=25) as w:
        for f in frames(7, size):
            w.add(f)
    props = iio.improps(out, index=None)
    assert props.shape[:3] == (7, size[1], size[0])
    assert sum(1 for _ in iio.imiter(out)) == 7
    assert listing(tmp_path) == ["clip.gif"]


@pytest.mark.parametrize("size", [(W, H), (51, 31)])  # odd sizes are padded, not rejected
def test_mp4_has_every_frame(tmp_path, size):
    out = tmp_path / "clip.mp4"
    with FrameWriter(out, size=size, fps=30) as w:
        for f in frames(9, size):
            w.add(f)
    nframes, _secs = imageio_ffmpeg.count_frames_and_secs(str(out))
    assert nframes == 9
    reader = imageio_ffmpeg.read_frames(str(out))
    meta = next(reader)
    assert tuple(meta["size"]) == (size[0] + size[0] % 2, size[1] + size[1] % 2)
    assert sum(1 for _ in reader) == 9
    assert listing(tmp_path) == ["clip.mp4"]


@pytest.mark.parametrize("ext", [".png", ".gif", ".mp4"])
@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
def test_exception_inside_with_leaves_nothing(tmp_path, ext, exc_type):
    out = tmp_path / f"clip{ext}"
    with pytest.raises(exc_type):
        with FrameWriter(out, size=(W, H), fps=30) as w:
            for f in frames(2):
                w.add(f)
            raise exc_type("boom")
    assert listing(tmp_path) == []


def test_gif_keeps_identical_frames_and_colours(tmp_path):
    """Pillow's save() would merge these into fewer frames; a render of N steps must give N."""
    a, b = frames(2)
    seq = [a, a, b, b, b, a]
    out = tmp_path / "same.gif"
    with FrameWriter(out, size=(W, H), fps=60) as w:
        for f in seq:
            w.add(f)
    back = [np.asarray(im) for im in iio.imiter(out)]
    assert len(back) == len(seq)
    assert all(iio.immeta(out, index=i)["duration"] == 20 for i in range(len(seq)))
    assert iio.immeta(out, index=0).get("loop") == 0
    # 256 adaptive colours: close, not exact
    for got, want in zip(back, seq):
        assert np.abs(got[..., :3].astype(int) - want[..., :3]).mean() < 12


def test_gif_few_colours_round_trip_exactly(tmp_path):
    img = np.zeros((H, W, 4), np.uint8)
    img[..., 3] = 255
    img[:, : W // 2, 0] = 255
    img[H // 3 :, :, 2] = 200
    with FrameWriter(tmp_path / "flat.gif", size=(W, H), fps=10) as w:
        w.add(img)
        w.add(img[::-1].copy())
    back = [np.asarray(im)[..., :3] for im in iio.imiter(tmp_path / "flat.gif")]
    np.testing.assert_array_equal(back[0], img[..., :3])
    np.testing.assert_array_equal(back[1], img[::-1, :, :3])


def test_failed_finish_leaves_nothing_and_keeps_old_file(tmp_path, monkeypatch):
    import emberfx.output

    out = tmp_path / "clip.gif"
    out.write_bytes(b"old")

    def broken(*args, **kwargs):
        raise RuntimeError("encoder failed")

    monkeypatch.setattr(emberfx.output, "write_gif", broken)
    with pytest.raises(RuntimeError, match="encoder failed"):
        with FrameWriter(out, size=(W, H), fps=30) as w:
            w.add(frames(1)[0])
    assert listing(tmp_path) == ["clip.gif"] and out.read_bytes() == b"old"


def test_write_png_failure_leaves_nothing(tmp_path, monkeypatch):
    def broken(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Image.Image, "save", broken)
    with pytest.raises(EmberError, match="No space left"):
        write_png(tmp_path / "a.png", frames(1)[0])
    assert listing(tmp_path) == []


@pytest.mark.parametrize("name", ["clip.avi", "clip", "clip.jpg"])
def test_bad_extension_is_a_usage_error(tmp_path, name):
    with pytest.raises(UsageError) as err:
        FrameWriter(tmp_path / name, size=(W, H))
    msg = str(err.value)
    assert ".png" in msg and ".gif" in msg and ".mp4" in msg
    assert (name.rpartition(".")[2] if "." in name else name) in msg
    assert listing(tmp_path) == []


def test_missing_folder_names_the_path(tmp_path):
    out = tmp_path / "nope" / "clip.mp4"
    with pytest.raises(EmberError) as err:
        with FrameWriter(out, size=(W, H)):
            pass
    assert str(out) in str(err.value)


def test_no_frames_and_wrong_size_leave_nothing(tmp_path):
    with pytest.raises(EmberError, match="no frames"):
        with FrameWriter(tmp_path / "a.gif", size=(W, H)):
            pass
    with pytest.raises(ValueError, match="50x30"):
        with FrameWriter(tmp_path / "b.mp4", size=(W, H)) as w:
            w.add(frames(1, size=(W + 1, H))[0])
    assert listing(tmp_path) == []


class FakeEngine:
    """Just enough Engine for render_to_file: each step changes the picture."""

    def __init__(self, size=(W, H), fixed_dt=1 / 30):
        self.size = size
        self.scene = SimpleNamespace(settings=SimpleNamespace(fixed_dt=fixed_dt, name="Fake"))
        self.steps = 0
        self.renders = 0

    def step(self, frames=1):
        self.steps += frames

    def render(self):
        self.renders += 1
        return frames(1, self.size, seed=self.steps)[0]


def test_render_to_file_png_keeps_last_frame(tmp_path):
    eng = FakeEngine()
    out = render_to_file(eng, 4, tmp_path / "last.png", progress=False)
    assert eng.steps == 4 and eng.renders == 1  # png: only the final frame is read back
    np.testing.assert_array_equal(np.asarray(Image.open(out)), frames(1, eng.size, seed=4)[0])


def test_render_to_file_video(tmp_path):
    eng = FakeEngine(size=(64, 40))
    out = render_to_file(eng, 5, tmp_path / "v.mp4", progress=True)  # not a tty: no bar
    assert eng.steps == 5 and eng.renders == 5
    assert imageio_ffmpeg.count_frames_and_secs(str(out))[0] == 5
    # fps defaults to the simulation rate: 5 frames at 1/30 s
    reader = imageio_ffmpeg.read_frames(str(out))
    assert next(reader)["fps"] == pytest.approx(30)
    reader.close()


def test_render_to_file_gif_frames(tmp_path):
    eng = FakeEngine()
    out = render_to_file(eng, 3, tmp_path / "v.gif", fps=10, progress=False)
    assert sum(1 for _ in iio.imiter(out)) == 3
    assert iio.immeta(out, index=0)["duration"] == 100
