"""MP4 (and MOV) through ffmpeg: raw RGBA frames piped into libx264, with every failure reported.

imageio-ffmpeg's ``write_frames`` ignores ffmpeg's exit status and lets its stderr through
unread, so a render onto a full disk printed success and left a video without its index ("moov
atom not found"), or died with a BrokenPipeError traceback. Here ffmpeg's status and its error
lines are checked when it stops (early or at the end), and the finished file is read back
(container only, no decoding) and its frames counted before the caller may rename it into place.

A ``.mov`` target keeps alpha: its frames are PNG images in a QuickTime container (codec
``png``, pixel format rgba; lossless, and compositing tools read it), for ``render --transparent``.

ffmpeg runs in its own session, so a Ctrl-C at the terminal reaches only emberfx, which decides
when to stop it (``kill``). The ffmpeg binary is the one inside the imageio-ffmpeg wheel.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import threading
from fractions import Fraction
from pathlib import Path

import numpy as np

from emberfx.core.errors import EmberError

CRF = 25             # libx264 quality (imageio-ffmpeg's default, quality 5 of 10)
ERROR_LINES = 40     # ffmpeg stderr lines kept for the message
STOP_SECONDS = 10.0  # how long a failed ffmpeg may take to exit before it is killed


def ffmpeg_exe() -> str:
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def _summary(lines, hide: Path | None = None) -> str:
    """ffmpeg's first two distinct error lines (the cause comes first) as one line, without
    the '[out#0/mp4 @ 0x..]' tags and without lines naming ``hide`` (the temp file: the user
    asked for another name)."""
    seen: list[str] = []
    for line in lines:
        text = re.sub(r"^(\[[^\]]*\]\s*)+", "", line).strip()
        if text.startswith("Last message repeated"):
            continue
        if text and text not in seen and (hide is None or str(hide) not in text):
            seen.append(text)
    return "; ".join(seen[:2])


class FfmpegPipe:
    """One ffmpeg process writing ``tmp`` (an .mp4 path, or .mov: PNG frames with alpha) from
    frames given to ``send``.

    ``target`` is the path the user asked for; error messages name it, not the temp file.
    """

    def __init__(self, tmp: Path, target: Path, size: tuple[int, int], fps: float):
        w, h = size
        rate = str(Fraction(fps).limit_denominator(1001))
        if Path(target).suffix.lower() == ".mov":
            encode = ["-c:v", "png", "-pix_fmt", "rgba", "-f", "mov"]
        else:
            pad = ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"] if w % 2 or h % 2 else []  # yuv420p
            encode = [*pad, "-c:v", "libx264", "-pix_fmt", "yuv420p", "-crf", str(CRF),
                      "-f", "mp4"]
        cmd = [ffmpeg_exe(), "-hide_banner", "-nostats", "-v", "error", "-y",
               "-f", "rawvideo", "-pix_fmt", "rgba", "-s", f"{w}x{h}", "-r", rate, "-i", "-",
               "-an", *encode, str(tmp)]
        self.tmp, self.target = tmp, target
        self.frames = 0
        self._errors: collections.deque[str] = collections.deque(maxlen=ERROR_LINES)
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.PIPE,
                                         start_new_session=os.name == "posix")
        except OSError as exc:
            raise EmberError(f"cannot write {target}: ffmpeg did not start "
                             f"({exc.strerror or exc})") from None
        # Read stderr as it comes: a full stderr pipe would block ffmpeg, and so emberfx.
        self._reader = threading.Thread(target=self._read_errors, name="emberfx-ffmpeg-stderr",
                                        daemon=True)
        self._reader.start()

    def _read_errors(self) -> None:
        assert self.proc.stderr is not None   # opened with PIPE
        for raw in self.proc.stderr:
            text = raw.decode(errors="replace").strip()
            if text:
                self._errors.append(text)

    def send(self, frame: np.ndarray) -> None:
        """Write one (h, w, 4) uint8 C-contiguous frame."""
        try:
            assert self.proc.stdin is not None   # opened with PIPE
            self.proc.stdin.write(frame.data.cast("B"))
        except BrokenPipeError:   # ffmpeg exited early (disk full, ...): its stderr says why
            raise self._failure() from None
        self.frames += 1

    def finish(self) -> None:
        """Flush, wait for ffmpeg to write the file, and raise an EmberError if it failed."""
        assert self.proc.stdin is not None   # opened with PIPE
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass   # it exited early; its status and stderr tell why
        if self.proc.wait() != 0:
            raise self._failure()
        self._reader.join()

    def kill(self) -> None:
        """Stop ffmpeg now (an abort); the caller deletes its file."""
        if self.proc.poll() is None:
            self.proc.kill()
        assert self.proc.stdin is not None   # opened with PIPE
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()

    def _failure(self) -> EmberError:
        try:
            code = self.proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._reader.join(timeout=STOP_SECONDS)
        detail = _summary(self._errors, hide=self.tmp) or f"exit status {code}"
        return EmberError(f"cannot write {self.target}: ffmpeg failed: {detail}")


def count_frames(path: Path) -> tuple[int | None, str]:
    """The number of video frames in ``path`` as ffmpeg reads the container (no decoding), or
    None with ffmpeg's complaint when the file does not open or read to its end.

    The framecrc muxer writes one line per packet of the copied stream, the same in every ffmpeg
    release (the ``-stats`` line of ffmpeg 7.0 names no frame count for a copied stream)."""
    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-i", str(path),
           "-map", "0:v:0", "-c", "copy", "-f", "framecrc", "-"]
    result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True)
    errors = [ln for ln in result.stderr.decode(errors="replace").replace("\r", "\n").splitlines()
              if ln.strip()]
    if result.returncode != 0 or errors:
        return None, _summary(errors, hide=path) or f"ffmpeg exit status {result.returncode}"
    packets = [ln for ln in result.stdout.decode(errors="replace").splitlines()
               if ln.strip() and not ln.startswith("#")]
    return len(packets), ""
