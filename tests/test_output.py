"""Headless capture (emberfx.app.output) with synthetic frames: no GPU needed.

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

from emberfx.app.output import FrameWriter, render_to_file, write_png
from emberfx.core.errors import EmberError, UsageError

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
    import emberfx.app.output

    out = tmp_path / "clip.gif"
    out.write_bytes(b"old")

    def broken(*args, **kwargs):
        raise RuntimeError("encoder failed")

    monkeypatch.setattr(emberfx.app.output, "write_gif", broken)
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


# ---------------------------------------------------------------------------- temp files

def test_temp_name_carries_host_and_process_id(tmp_path, monkeypatch):
    import emberfx.app.atomic_files as atomic_files
    import emberfx.app.output as output

    seen = []
    original = output.temp_path

    def spy(path):
        tmp = original(path)
        seen.append(tmp.name)
        return tmp

    monkeypatch.setattr(output, "temp_path", spy)
    with FrameWriter(tmp_path / "clip.gif", size=(W, H), fps=30) as w:
        w.add(frames(1)[0])
    (name,) = seen
    match = atomic_files.TEMP_NAME.match(name)
    assert match is not None, name
    assert name.startswith(".clip.") and name.endswith(".tmp.gif")
    assert int(match["pid"]) == os.getpid() and match["host"] == atomic_files.host_tag()
    assert listing(tmp_path) == ["clip.gif"]


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(os.name != "posix", reason="the sweep needs POSIX's signal 0")
def test_a_new_write_removes_temp_files_of_gone_processes_only(tmp_path):
    import subprocess
    import sys

    from emberfx.app.atomic_files import host_tag

    host = host_tag()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "gone": f".clip.emberfx-{host}-{dead_pid()}-0123abcd.tmp.mp4",
            "gone_other_stem": f".a.b.emberfx-{host}-{dead_pid()}-89abcdef.tmp.gif",
            "live": f".clip.emberfx-{host}-{live.pid}-0123abcd.tmp.mp4",
            "mine": f".clip.emberfx-{host}-{os.getpid()}-0123abcd.tmp.png",
            "other_host": f".clip.emberfx-{host}x-{dead_pid()}-0123abcd.tmp.mp4",
            "not_ours": f".clip.{dead_pid()}.tmp.mp4",
        }
        for name in names.values():
            (tmp_path / name).write_bytes(b"partial")
        with FrameWriter(tmp_path / "new.gif", size=(W, H), fps=30) as w:
            w.add(frames(1)[0])
        kept = {key for key, name in names.items() if (tmp_path / name).exists()}
        assert kept == {"live", "mine", "other_host", "not_ours"}
        assert (tmp_path / "new.gif").is_file()
    finally:
        live.kill()
        live.wait()


# ---------------------------------------------------------------------------- ffmpeg failures

FAKE_FFMPEG = '''#!{python}
"""A stand-in for the ffmpeg binary; reading a file back (-f framecrc) uses the real one."""
import subprocess, sys
real, mode, sample = {real!r}, {mode!r}, {sample!r}
args = sys.argv[1:]
if "framecrc" in args:
    sys.exit(subprocess.call([real] + args))
if mode == "fails":              # a full disk: ffmpeg stops reading, complains, exits 1
    sys.stdin.buffer.read(1000)
    sys.stderr.write("[out#0/mp4 @ 0x55d1] Error writing trailer: No space left on device\\n")
    sys.exit(1)
if mode == "truncates":          # the old silent failure: a cut-off file and exit status 0
    sys.stdin.buffer.read()
    with open(args[-1], "wb") as f:
        f.write(open(sample, "rb").read()[:3000])
    sys.exit(0)
if mode == "drops":              # a valid video with fewer frames than were sent
    sys.exit(subprocess.call([real] + args[:-1] + ["-frames:v", "2", args[-1]]))
'''


@pytest.fixture
def fake_ffmpeg(tmp_path_factory, monkeypatch):
    import stat
    import sys

    import emberfx.app.video as video

    folder = tmp_path_factory.mktemp("fake-ffmpeg")
    sample = folder / "sample.mp4"
    with FrameWriter(sample, size=(W, H), fps=30) as w:
        for f in frames(8):
            w.add(f)

    def install(mode: str):
        exe = folder / f"ffmpeg-{mode}"
        exe.write_text(FAKE_FFMPEG.format(python=sys.executable, real=video.ffmpeg_exe(),
                                          mode=mode, sample=str(sample)))
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setattr(video, "ffmpeg_exe", lambda: str(exe))

    return install


@pytest.mark.parametrize("count", [2, 200])   # fails at the finish / while frames still stream
def test_ffmpeg_failure_is_one_line_and_leaves_nothing(tmp_path, fake_ffmpeg, count):
    fake_ffmpeg("fails")
    out = tmp_path / "clip.mp4"
    out.write_bytes(b"old")                  # an earlier result survives a failed render
    with pytest.raises(EmberError) as err:
        with FrameWriter(out, size=(W, H), fps=30) as w:
            for f in frames(count):
                w.add(f)
    message = str(err.value)
    assert message == (f"cannot write {out}: ffmpeg failed: Error writing trailer: "
                       f"No space left on device")
    assert listing(tmp_path) == ["clip.mp4"] and out.read_bytes() == b"old"


def test_a_truncated_video_is_caught_before_the_rename(tmp_path, fake_ffmpeg):
    fake_ffmpeg("truncates")
    out = tmp_path / "clip.mp4"
    with pytest.raises(EmberError) as err:
        with FrameWriter(out, size=(W, H), fps=30) as w:
            for f in frames(5):
                w.add(f)
    message = str(err.value)
    assert message.startswith(f"cannot write {out}: the written video does not read back")
    assert "moov atom not found" in message and "\n" not in message
    assert listing(tmp_path) == []


def test_a_video_missing_frames_is_caught_before_the_rename(tmp_path, fake_ffmpeg):
    fake_ffmpeg("drops")
    out = tmp_path / "clip.mp4"
    with pytest.raises(EmberError, match="has 2 frames, expected 5"):
        with FrameWriter(out, size=(W, H), fps=30) as w:
            for f in frames(5):
                w.add(f)
    assert listing(tmp_path) == []


# ---------------------------------------------------------------------------- a full disk

@pytest.mark.parametrize("ext, count", [(".mp4", 10), (".mp4", 300), (".gif", 40),
                                        (".png", 1)])
def test_a_full_disk_is_one_line_and_leaves_nothing(small_disk, ext, count):
    (small_disk / "filler").write_bytes(bytes(150 * 1024))   # ~50 KiB left
    size = (320, 180)   # random frames compress badly: each needs ~170 KiB
    out = small_disk / f"clip{ext}"
    with pytest.raises(EmberError) as err:
        with FrameWriter(out, size=size, fps=30) as w:
            for f in frames(count, size=size):
                w.add(f)
    message = str(err.value)
    assert message.startswith(f"cannot write {out}: ") and "\n" not in message
    assert "No space left on device" in message
    assert listing(small_disk) == ["filler"]


# ---------------------------------------------------------------------------- progress

def test_progress_off_a_terminal_prints_plain_lines(tmp_path, capsys):
    render_to_file(FakeEngine(), 4, tmp_path / "v.gif", progress=True)   # capsys: no tty
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "v.gif: frame" in ln]
    assert lines[0].startswith("emberfx: v.gif: frame 1/4 (25%), ")
    assert lines[-1].startswith("emberfx: v.gif: frame 4/4 (100%), ")
    assert len(lines) in (2, 3, 4)


def test_progress_on_a_terminal_is_a_bar(capsys):
    import io

    from emberfx.app.output import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    with Progress(3, "x.mp4", stream=term) as progress:
        for _ in range(3):
            progress.update()
    drawn = term.getvalue()
    assert "x.mp4:" in drawn and "/3 [" in drawn and "\r" in drawn   # tqdm's bar, redrawn
    assert "emberfx:" not in drawn                                  # no plain lines
    silent = Terminal()
    with Progress(3, "x.mp4", enabled=False, stream=silent) as progress:
        progress.update(3)
    assert silent.getvalue() == "" and capsys.readouterr().err == ""
