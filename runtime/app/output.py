"""Headless capture: numpy frames -> PNG, GIF or MP4 on disk.

Every writer here is atomic (app/atomic_files.py): frames go to a hidden temporary file in the
destination folder and only a clean finish renames it over the requested path. Before that rename
the file is read back (an MP4's frames counted, a GIF's frames counted, a PNG's checksums
checked), so a full disk is an error and never a truncated file that looks like a result. An
exception, Ctrl-C or SIGTERM included, deletes the temporary file.

This module imports no GPU code: it works on any ``(h, w, 4)`` uint8 arrays, and ``render_to_file``
only needs an object with ``.size``, ``.scene``, ``.step()`` and ``.render()``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from emberfx.app.atomic_files import (
    OutputGroup,
    check_target,
    remove_file,
    same_file,
    temp_path,
    write_atomically,
)
from emberfx.core.errors import EmberError, UsageError
from emberfx.engine import interrupts

if TYPE_CHECKING:
    from emberfx.app.video import FfmpegPipe

#: Extensions FrameWriter understands, with what each one keeps (.exr: compositing.ExrWriter).
FORMATS = {".png": "final frame", ".gif": "every frame", ".mp4": "every frame (H.264)",
           ".mov": "every frame (PNG frames, with alpha)"}
VIDEO = (".mp4", ".mov")   # streamed into ffmpeg (video.py)


def _supported() -> str:
    return ", ".join(FORMATS)


def _as_rgba(frame: np.ndarray, size: tuple[int, int] | None = None) -> np.ndarray:
    """Check a frame and return it as a C-contiguous (h, w, 4) uint8 array.

    A wrong shape is a programming error (the engine renders at its own size), so it raises
    ValueError rather than an EmberError.
    """
    a = np.asarray(frame)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[2] not in (3, 4):
        raise ValueError(f"expected an (h, w, 4) uint8 frame, got {a.shape} {a.dtype}")
    if a.shape[2] == 3:  # accept RGB too: add an opaque alpha channel
        a = np.concatenate([a, np.full(a.shape[:2] + (1,), 255, np.uint8)], axis=2)
    if size is not None and (a.shape[1], a.shape[0]) != tuple(size):
        raise ValueError(f"frame is {a.shape[1]}x{a.shape[0]}, "
                         f"the writer expects {size[0]}x{size[1]}")
    return np.ascontiguousarray(a)


def write_png(path: str | os.PathLike, rgba: np.ndarray) -> Path:
    """Write one RGBA image as a PNG, atomically. Returns the path."""
    from PIL import Image

    path = Path(path)
    if path.suffix.lower() != ".png":
        raise UsageError(f"a screenshot must be a .png file, not '{path.suffix or path.name}'")
    image = Image.fromarray(_as_rgba(rgba), "RGBA")
    return write_atomically(path, lambda tmp: image.save(tmp, format="PNG"),
                            verify=lambda tmp: _verify_image(tmp, path, 1,
                                                             image.width * image.height))


@contextlib.contextmanager
def _pillow_allows(pixels: int) -> Iterator[None]:
    """Pillow refuses to open images of more pixels than ``Image.MAX_IMAGE_PIXELS`` (a guard
    against decompression bombs from strangers). A file emberfx just wrote, at a size the
    device allowed, is no such bomb: its read-back raises the limit to its own size."""
    from PIL import Image

    before = Image.MAX_IMAGE_PIXELS
    if before is not None and pixels > before:
        Image.MAX_IMAGE_PIXELS = pixels
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = before


def _verify_image(tmp: Path, target: Path, frames: int, pixels: int) -> None:
    """Read a written PNG or GIF of ``pixels`` pixels a frame back: PNG checksums, or the
    GIF's frame count."""
    from PIL import Image

    try:
        with _pillow_allows(pixels), Image.open(tmp) as image:
            found = getattr(image, "n_frames", 1)
            image.verify()   # PNG: every chunk's CRC; GIF: parses the blocks
    except (OSError, SyntaxError, ValueError, EOFError) as exc:   # PIL's ways to say "broken"
        detail = str(exc).replace(str(tmp), str(target))
        raise EmberError(f"cannot write {target}: the written file does not read back "
                         f"({detail})") from None
    if found != frames:
        raise EmberError(f"cannot write {target}: the written file has {found} frames, "
                         f"expected {frames}")


def write_gif(path: str | os.PathLike, frames: list[np.ndarray], duration_ms: int) -> None:
    """Write RGB(A) frames as a looping GIF, one GIF frame per input frame, not atomically.

    Why not ``imageio.v3.imwrite`` / ``Image.save(save_all=True)``: Pillow merges consecutive
    identical frames into one longer frame, and cannot be told not to, so ``render --frames 3``
    of a scene whose first steps look the same would give a 2-frame GIF. Pillow's public GIF
    helpers ``getheader``/``getdata`` encode frame by frame instead: each frame is quantised to its
    own adaptive palette (as ``save`` does) and written with it as a local colour table.
    """
    from PIL import GifImagePlugin, Image

    with open(path, "wb") as fp:
        for i, frame in enumerate(frames):
            im = Image.fromarray(np.ascontiguousarray(frame[:, :, :3]), "RGB")
            im = im.convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
            if i == 0:  # screen descriptor, first palette as the global one, loop forever
                header, _ = GifImagePlugin.getheader(im, info={"loop": 0})
                fp.writelines(header)
            fp.writelines(GifImagePlugin.getdata(im, duration=duration_ms,
                                                 include_color_table=True))
        fp.write(b";")  # GIF trailer


class FrameWriter:
    """Collect frames into ``path`` (.png: only the final frame; .gif; .mp4).

    ``with FrameWriter("out.mp4", size=(w, h), fps=60) as w: w.add(frame)``

    - MP4 frames stream into ffmpeg (libx264, yuv420p) as they arrive; nothing is buffered. yuv420p
      needs even sizes, so an odd width or height is padded by one black column/row.
    - GIF frames are buffered in memory (fine for short clips) and every one is kept, identical
      neighbours included (see ``write_gif``). GIF stores delays in 1/100 s and browsers slow down
      delays under 20 ms, so the delay is rounded to 10 ms steps, at least 20 ms.
    - PNG keeps the last frame added and writes it at the end.
    """

    def __init__(self, path: str | os.PathLike, size: tuple[int, int], fps: float = 60.0,
                 group: OutputGroup | None = None):
        self.path = Path(path)
        self.group = group   # given: the finished file waits for the group's commit
        self.kind = self.path.suffix.lower()
        if self.kind not in FORMATS:
            raise UsageError(
                f"cannot write '{self.path.suffix or self.path.name}' files: "
                f"the output must end in one of {_supported()}"
            )
        self.size = (int(size[0]), int(size[1]))
        if fps <= 0:
            raise ValueError(f"fps must be positive, got {fps}")
        self.fps = float(fps)
        self.count = 0
        self._tmp: Path | None = None
        self._frames: list[np.ndarray] = []  # gif: all frames; png: the last one
        self._ffmpeg: FfmpegPipe | None = None  # mp4 and mov, inside the 'with' block

    # PNG keeps only the final frame, so callers may skip rendering the others.
    @property
    def wants_every_frame(self) -> bool:
        return self.kind != ".png"

    def __enter__(self) -> FrameWriter:
        self._tmp = temp_path(self.path)
        if self.kind in VIDEO:
            from emberfx.app.video import FfmpegPipe

            try:   # an odd width or height is padded by one black column/row, never cropped
                self._ffmpeg = FfmpegPipe(self._tmp, self.path, self.size, self.fps)
            except BaseException:
                remove_file(self._tmp)
                self._tmp = None
                raise
        return self

    def add(self, frame: np.ndarray) -> None:
        if self._tmp is None:
            raise RuntimeError("FrameWriter.add() outside its 'with' block")
        frame = _as_rgba(frame, self.size)
        if self.kind in VIDEO:
            assert self._ffmpeg is not None   # __enter__ started it
            self._ffmpeg.send(frame)
        elif self.kind == ".gif":
            # GIF has only 1-bit transparency: drop alpha so soft particle edges don't punch holes.
            self._frames.append(frame[:, :, :3].copy())
        else:
            self._frames = [frame.copy()]
        self.count += 1

    def __exit__(self, exc_type, exc, tb) -> None:
        tmp, self._tmp = self._tmp, None
        if exc_type is not None:  # any failure, KeyboardInterrupt included: leave nothing behind
            self._abort(tmp)
            return
        assert tmp is not None   # __enter__ set it
        try:
            self._finish(tmp)
            self._verify(tmp)
            interrupts.check()   # a Ctrl-C while the file was finished: still no file
            if self.group is not None:
                self.group.keep(tmp, self.path)
            else:
                os.replace(tmp, self.path)
        except OSError as exc2:
            self._abort(tmp)
            raise EmberError(f"cannot write {self.path}: {exc2.strerror or exc2}") from None
        except BaseException:
            self._abort(tmp)
            raise
        finally:
            self._frames = []

    def _finish(self, tmp: Path) -> None:
        if self.count == 0:
            raise EmberError(f"cannot write {self.path}: no frames were rendered")
        if self.kind in VIDEO:
            assert self._ffmpeg is not None   # __enter__ started it
            self._ffmpeg.finish()   # waits for ffmpeg; EmberError with its complaint if it failed
            self._ffmpeg = None
        elif self.kind == ".gif":
            write_gif(tmp, self._frames, duration_ms=max(20, round(100.0 / self.fps) * 10))
        else:
            from PIL import Image

            Image.fromarray(self._frames[-1], "RGBA").save(tmp, format="PNG")

    def _verify(self, tmp: Path) -> None:
        """Read the finished file back before it may replace anything at the target."""
        if self.kind not in VIDEO:
            _verify_image(tmp, self.path, self.count if self.kind == ".gif" else 1,
                          self.size[0] * self.size[1])
            return
        from emberfx.app.video import count_frames

        found, problem = count_frames(tmp)
        if found is None:
            raise EmberError(f"cannot write {self.path}: the written video does not read back "
                             f"({problem})")
        if found != self.count:
            raise EmberError(f"cannot write {self.path}: the written video has {found} frames, "
                             f"expected {self.count}")

    def _abort(self, tmp: Path | None) -> None:
        pipe, self._ffmpeg = self._ffmpeg, None
        try:
            if pipe is not None:
                pipe.kill()   # stop ffmpeg before deleting its output
        finally:
            self._frames = []
            remove_file(tmp)


def default_fps(scene) -> float:
    """Play back at simulation speed: one video frame per fixed step."""
    dt = float(scene.settings.fixed_dt)
    return float(max(1, round(1.0 / dt))) if dt > 0 else 60.0


PLAIN_PROGRESS_SECONDS = 5.0   # off a terminal: at most one progress line this often
STOP_NOTICE = "stopping after this frame (Ctrl-C again to stop at once)"


class Progress:
    """Frames done, on stderr: a tqdm bar on a terminal; elsewhere (a log, CI, a pipe), where
    a bar would stay hidden, plain lines: after the first frame (it includes compiling the
    shaders, which can take long on a CPU adapter), then at most one every
    ``PLAIN_PROGRESS_SECONDS``, and after the last, each with the time taken. From the second
    frame on they give the measured time a frame (the mean since the first frame) and the
    estimate it makes for the frames left; ``clock`` is the time source (seconds)."""

    def __init__(self, total: int, label: str, enabled: bool = True, stream=None,
                 clock: Callable[[], float] = time.perf_counter):
        self.total, self.label, self.done = total, label, 0
        self.stream = stream or sys.stderr
        enabled = enabled and self.stream is not None   # pythonw and services have no stderr
        self.plain = enabled and not self.stream.isatty()
        self.bar = None
        if enabled and not self.plain:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=label, unit="frame", file=self.stream, leave=False)
        self.clock = clock
        self.start = clock()
        self.first: tuple[float, int] | None = None   # (when, frames) at the first update
        self.last_line = -1e9

    def seconds_a_frame(self, now: float) -> float | None:
        """The measured mean time of the frames after the first update (None before any)."""
        if self.first is None or self.done <= self.first[1]:
            return None
        return (now - self.first[0]) / (self.done - self.first[1])

    def update(self, frames: int = 1) -> None:
        self.done += frames
        if self.bar is not None:
            self.bar.update(frames)
        if not self.plain:
            return
        now = self.clock()
        if self.first is None:
            self.first = (now, self.done)
        if self.done in (1, self.total) or now - self.last_line >= PLAIN_PROGRESS_SECONDS:
            self.last_line = now
            line = (f"emberfx: {self.label}: frame {self.done}/{self.total} "
                    f"({100 * self.done // self.total}%), {now - self.start:.1f} s")
            each = self.seconds_a_frame(now)
            if each is not None:
                line += f", {each:.3g} s a frame"
                if self.done < self.total:
                    line += f", about {each * (self.total - self.done):.0f} s left"
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def render_to_file(engine, frames: int, out: str | os.PathLike, fps: float | None = None,
                   progress: bool = True, transparent: bool = False,
                   depth: str | os.PathLike | None = None) -> Path:
    """Step ``engine`` ``frames`` times, one fixed step per frame, and write the result to ``out``.

    With ``progress`` it reports to stderr (see ``Progress``). For a .png only the final frame is
    rendered: rendering never changes the simulation, and reading back frames that the writer
    would drop is the slow part of a headless run.

    Ctrl-C (on the main thread) stops between frames (``interrupts.deferred``), never inside a
    wgpu callback, and leaves no file: the KeyboardInterrupt comes out of this function.

    ``transparent``, an ``.exr`` ``out`` and ``depth`` (the last frame's depth pass, .npy or
    .exr): renders for compositing, app/compositing.py. ``out`` and ``depth`` appear together
    or not at all (``OutputGroup``), and may not name the same file.
    """
    if frames < 1:
        raise UsageError(f"--frames must be at least 1, got {frames}")
    out = Path(out)
    if depth is not None and same_file(out, depth):
        raise EmberError(f"out {out} and depth {depth} are the same file: the depth would "
                         f"overwrite the image; give each its own name")
    for path in (out, depth):
        if path is not None:
            check_target(Path(path))
    _check_fits(engine, frames, out, depth)
    fps = default_fps(engine.scene) if fps is None else fps
    options = {"transparent": True} if transparent else {}
    group = OutputGroup()   # out and depth appear together, or neither does
    with interrupts.deferred(notice=STOP_NOTICE if progress else None):
        try:
            _render_frames(engine, frames, out, fps, options, progress, group, depth)
            interrupts.check()   # a Ctrl-C while the files were finished: still no file
            group.commit()
        except BaseException:
            group.discard()
            raise
    return out


def _check_fits(engine, frames: int, out: Path, depth) -> None:
    """Refuse, before the first frame, a run that cannot finish or whose captures cannot fit:
    a frame count past the GPU's step index, readbacks over the device's buffer limit or the
    memory, a GIF whose frames (kept until the end) outgrow the memory."""
    from emberfx.engine.captures import available_memory, byte_text, check_captures
    from emberfx.engine.engine_guard import step_budget

    clock, gpu = getattr(engine, "clock", None), getattr(engine, "gpu", None)
    if clock is not None:
        step_budget(frames, "--frames", done=clock.steps, fixed_dt=clock.fixed_dt, per_call=None)
    w, h = engine.size
    if gpu is not None:
        kinds = ("hdr" if out.suffix.lower() == ".exr" else "image",) + (
            ("depth",) if depth is not None else ())
        check_captures(gpu, (w, h), kinds)
    if out.suffix.lower() == ".gif":
        need, free = frames * w * h * 3, available_memory()
        if free is not None and need > free:
            raise EmberError(f"cannot write {out}: a GIF keeps every frame in memory until it "
                             f"is written, and {frames} frames of {w}x{h} need "
                             f"{byte_text(need)} where {byte_text(free)} is available: render "
                             f"fewer frames, a smaller --size, or an .mp4")


def _render_frames(engine, frames: int, out: Path, fps: float, options: dict, progress: bool,
                   group: OutputGroup, depth) -> None:
    """render_to_file's frames and depth, each finished file kept in ``group``."""
    depth_image = None
    with _writer(out, tuple(engine.size), fps, group) as writer:
        every, hdr = writer.wants_every_frame, getattr(writer, "hdr", False)
        with Progress(frames, out.name, enabled=progress) as bar:
            for i in range(frames):
                interrupts.check()
                engine.step(1)
                if every or i == frames - 1:
                    writer.add(engine.render_hdr(**options) if hdr
                               else engine.render(**options))
                bar.update(1)
        if depth is not None:
            depth_image = engine.render_depth()
    if depth_image is not None:
        from emberfx.app.compositing import write_depth

        write_depth(depth, depth_image, group)


def _writer(out: Path, size: tuple[int, int], fps: float, group: OutputGroup):
    if out.suffix.lower() == ".exr":
        from emberfx.app.compositing import ExrWriter

        return ExrWriter(out, size, group)
    return FrameWriter(out, size=size, fps=fps, group=group)
