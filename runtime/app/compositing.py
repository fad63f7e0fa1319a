"""Renders for compositing: ``render --transparent``, ``--out FILE.exr`` and ``--depth FILE``.

- ``--transparent``: alpha 0 where nothing was drawn. The scene target starts at (0, 0, 0, 0);
  alpha-blended and opaque draws accumulate alpha, additive ones add light only, so the present
  pass takes alpha = max(drawn alpha, brightest channel) and writes straight colour
  (frame/present.wgsl). Over the scene's background (``over`` in linear light) that gives back
  the normal render exactly for opaque and alpha-blended draws; for additive light it gives
  ``C + B (1 - alpha)`` where the normal render has ``C + B``, which differs by at most the
  background itself (nothing on black). PNG keeps the alpha; video keeps it in ``.mov`` (PNG
  frames in QuickTime, lossless: After Effects, Nuke, Resolve and Blender read it), since
  H.264 MP4 and GIF cannot.
- ``.exr``: the final frame's scene target before post effects (bloom, tonemap): linear HDR
  float16 RGBA (engine/captures.py), through the openexr package (the [exr] extra). With
  ``--transparent`` it is premultiplied over the drawn alpha, additive light with alpha 0.
- ``--depth FILE.npy|.exr``: the final frame's linear view depth in world units, float32,
  +inf where nothing wrote depth (engine/captures.py); an EXR holds it as channel ``Z``.
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
from pathlib import Path

import numpy as np

from emberfx.app.atomic_files import OutputGroup, same_file, write_atomically
from emberfx.core.errors import EmberError, UsageError

EXR_HINT = "pip install 'emberfx[exr]' (openexr)"
ALPHA_FORMATS = (".png", ".mov", ".exr")


def add_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--transparent", action="store_true",
                   help="alpha 0 where nothing was drawn, additive light as premultiplied alpha "
                        "(for .png, .mov or .exr)")
    s.add_argument("--depth", type=Path, metavar="FILE",
                   help="also write the last frame's linear view depth (world units, inf where "
                        "empty) as .npy or .exr")


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse what cannot be written before any rendering: usage errors, missing extras."""
    suffix = args.out.suffix.lower()
    if args.transparent and suffix not in ALPHA_FORMATS:
        kind = "H.264 MP4" if suffix == ".mp4" else "GIF"
        raise UsageError(f"--transparent --out {args.out}: {kind} has no alpha channel; write "
                         f".mov (PNG frames, keeps alpha), .png or .exr")
    if args.depth is not None and args.depth.suffix.lower() not in (".npy", ".exr"):
        raise UsageError(f"--depth {args.depth}: the file must end in .npy or .exr")
    if args.depth is not None and same_file(args.out, args.depth):
        raise UsageError(same_file_message(args.out, args.depth))
    if suffix == ".exr" or (args.depth is not None and args.depth.suffix.lower() == ".exr"):
        require_exr()


def same_file_message(out, depth) -> str:
    return (f"--out {out} and --depth {depth} are the same file: the depth would overwrite "
            f"the image; give each its own name")


def require_exr():
    try:
        import OpenEXR
    except ImportError:
        raise EmberError(f"EXR output needs the openexr package: {EXR_HINT}") from None
    return OpenEXR


def _exr_failure(path: Path, tmp, exc: Exception) -> EmberError:
    """OpenEXR reports a failed write or read as a RuntimeError that names the temp file: one
    line naming the file asked for. It may also close a file it could not finish without a
    word (a disk that fills at the last block), which the read-back finds: where the disk is
    full then, the message says so."""
    detail = " ".join(str(exc).replace(str(tmp), str(path)).split()) or type(exc).__name__
    try:
        full = shutil.disk_usage(path.parent).free == 0
    except OSError:
        full = False
    if full and os.strerror(errno.ENOSPC) not in detail:
        detail += f" ({os.strerror(errno.ENOSPC)})"
    return EmberError(f"cannot write {path}: {detail}")


def _write_exr_channels(path: Path, channels: dict[str, np.ndarray],
                        group: OutputGroup | None) -> Path:
    OpenEXR = require_exr()
    header = {"compression": OpenEXR.ZIP_COMPRESSION, "type": OpenEXR.scanlineimage}
    shapes = {name: array.shape for name, array in channels.items()}   # File() wraps the arrays

    def write(tmp):
        try:
            OpenEXR.File(header, channels).write(str(tmp))
        except RuntimeError as exc:
            raise _exr_failure(path, tmp, exc) from None

    def verify(tmp):
        """Read the file back: every channel there, with the size written."""
        try:
            with OpenEXR.File(str(tmp)) as image:
                found = {name: channel.pixels.shape for name, channel in image.channels().items()}
        except RuntimeError as exc:
            raise _exr_failure(path, tmp, exc) from None
        if found != shapes:
            raise EmberError(f"cannot write {path}: the written file does not read back "
                             f"(channels {found})")
    return write_atomically(path, write, verify, group=group)


def write_exr(path, rgba: np.ndarray, group: OutputGroup | None = None) -> Path:
    """An (h, w, 4) float16 linear RGBA image as a half-float EXR, atomically (with ``group``:
    renamed into place at the group's commit)."""
    rgba = np.ascontiguousarray(rgba, np.float16)
    return _write_exr_channels(Path(path), {"RGBA": rgba}, group)


def write_depth(path, depth: np.ndarray, group: OutputGroup | None = None) -> Path:
    """An (h, w) float32 depth image as .npy, or as .exr with one float channel ``Z``."""
    path = Path(path)
    depth = np.ascontiguousarray(depth, np.float32)
    if path.suffix.lower() == ".exr":
        return _write_exr_channels(path, {"Z": depth}, group)

    def write(tmp):
        with open(tmp, "wb") as stream:
            np.save(stream, depth)
    return write_atomically(path, write, group=group)


class ExrWriter:
    """FrameWriter's interface for ``.exr``: keeps the last frame (float16 RGBA from
    ``Engine.render_hdr``) and writes it when the block ends without an error."""

    wants_every_frame = False
    hdr = True

    def __init__(self, path, size: tuple[int, int], group: OutputGroup | None = None):
        self.path = Path(path)
        self.size = size
        self.group = group
        self.count = 0
        self._frame: np.ndarray | None = None

    def __enter__(self) -> ExrWriter:
        require_exr()
        return self

    def add(self, frame: np.ndarray) -> None:
        self._frame = frame
        self.count += 1

    def __exit__(self, exc_type, exc, tb) -> None:
        frame, self._frame = self._frame, None
        if exc_type is None:
            if frame is None:
                raise EmberError(f"cannot write {self.path}: no frames were rendered")
            write_exr(self.path, frame, self.group)
