"""Volumes sampled from arrays: SDF colliders (float32 (D, H, W) signed distances) and vector
fields (float32 (D, H, W, 3)). This module loads and checks the .npy files and packs the
volumes one emitter samples into one float array (its ``<e>/volumes`` storage buffer; SDFs as
corner bricks, 8x their bytes), which shaders/common/volumes.wgsl samples trilinearly with
full-precision weights.

A file's header is read and checked before its samples: the dtype and shape, the bytes the
shape needs against the bytes the file holds (a truncated or sparse file), and the bytes the
volume takes on the GPU against a limit: the device's storage binding size where a device is
known, else ``GPU_BYTES_BOUND``. So a header claiming 4096^3 samples is refused in one line, not
with numpy's failed allocation of 256 GiB.

Sample (k, j, i) of a (D, H, W) array sits at the centre of cell (i, j, k) of the W x H x D
cells that fill the volume's box: local position ((i + 0.5) / W - 0.5) * size.x, and so on.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

from emberfx.core.errors import special_file_problem

GPU_BYTES_BOUND = (1 << 32) - 4
"""the most bytes a volume may take on the GPU where no device is at hand (the scene check): a
storage buffer binding holds less than 4 GiB on every backend wgpu drives (Vulkan's range is a
32-bit count), so a larger volume can run nowhere"""


class VolumeError(ValueError):
    """A volume file or array that cannot be used; the message reads "expected ..., found ..."."""


_CACHE: dict[tuple, np.ndarray] = {}   # (path, mtime_ns, size) -> checked array


def check_volume(array, channels: int) -> np.ndarray:
    """``array`` as a C-contiguous float32 volume of ``channels`` (1: (D, H, W), 3: (D, H, W, 3)),
    at least 2 samples along each axis and finite; VolumeError otherwise."""
    if not isinstance(array, np.ndarray):
        raise VolumeError(f"expected a numpy array, found {type(array).__name__}")
    _check_kind(array.dtype, tuple(array.shape), channels)
    finite = np.isfinite(array)
    if not finite.all():
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise VolumeError(f"expected finite values, found {array[where]} at index {list(where)}")
    return np.ascontiguousarray(array)


def _check_kind(dtype: np.dtype, shape: tuple, channels: int) -> None:
    if dtype != np.float32:
        raise VolumeError(f"expected dtype float32, found {dtype}")
    wanted = "(D, H, W)" if channels == 1 else "(D, H, W, 3)"
    ndim = 3 if channels == 1 else 4
    if len(shape) != ndim or (channels == 3 and shape[3] != 3):
        raise VolumeError(f"expected shape {wanted}, found {shape}")
    if min(shape[:3]) < 2:
        raise VolumeError(f"expected at least 2 samples along each axis of {wanted}, found "
                          f"{shape}")


def check_gpu_bytes(shape: tuple, limit: tuple[int, str] | None = None) -> None:
    """Refuse a volume of ``shape`` whose packed samples (packed_floats) exceed ``limit``:
    (bytes, where that number comes from), by default GPU_BYTES_BOUND."""
    allowed, source = limit or (GPU_BYTES_BOUND, "the most any device's storage binding holds")
    needed = 4 * packed_floats(shape)
    if needed > allowed:
        layout = " as corner bricks, 8 floats a sample" if len(shape) == 3 else ""
        raise VolumeError(f"expected a volume of at most {allowed:,} bytes on the GPU ({source}),"
                          f" found shape {shape} taking {needed:,} bytes{layout}")


def _read_header(path: Path, file_bytes: int, channels: int) -> tuple:
    """The shape in the .npy header of ``path``, checked (dtype, shape, and the samples'
    bytes against the bytes the file holds) before any sample is read."""
    try:
        with open(path, "rb") as handle:
            version = npy_format.read_magic(handle)
            read = (npy_format.read_array_header_1_0 if version == (1, 0)
                    else npy_format.read_array_header_2_0)
            shape, _fortran, dtype = read(handle)
            start = handle.tell()
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise VolumeError(f"expected a .npy array file, found one numpy cannot read ({first})") \
            from None
    shape = tuple(int(n) for n in shape)
    _check_kind(dtype, shape, channels)
    needed = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if file_bytes - start < needed:
        raise VolumeError(f"expected {needed:,} bytes of samples after the header for shape "
                          f"{shape}, found {max(0, file_bytes - start):,} (a truncated file)")
    return shape


def load_volume(path: str | os.PathLike, channels: int,
                limit: tuple[int, str] | None = None) -> np.ndarray:
    """The checked array of a .npy file (cached by path, modification time and size, so the
    scene loader's check and the engine's upload read it once). Its header is checked first
    (_read_header), and the GPU bytes of its shape against ``limit`` (check_gpu_bytes)."""
    path = Path(path)
    special = special_file_problem(path, ".npy")
    if special is not None:
        raise VolumeError(special)
    try:
        stat = path.stat()
    except OSError:
        raise VolumeError(f"expected an existing .npy file, found none at {path}") from None
    key = (str(path), stat.st_mtime_ns, stat.st_size, channels)
    cached = _CACHE.get(key)
    shape = tuple(cached.shape) if cached is not None else _read_header(path, stat.st_size,
                                                                        channels)
    check_gpu_bytes(shape, limit)
    if cached is not None:
        return cached
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise VolumeError(f"expected a .npy array file, found one numpy cannot read ({first})") \
            from None
    array = check_volume(array, channels)
    array.setflags(write=False)
    if len(_CACHE) > 16:   # scenes use a few volumes; keep the cache from growing over reloads
        _CACHE.clear()
    _CACHE[key] = array
    return array


ALIGN = 24   # floats: a brick starts on 32 bytes, a vector sample on a multiple of 3 floats


@dataclass(frozen=True)
class PackedVolume:
    offset: int              # first float of the volume in the packed array
    grid: tuple[int, int, int]   # samples along local x, y, z: (W, H, D)


def corner_bricks(volume: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A scalar (D, H, W) volume as (D, H, W, 8): for each cell, the eight samples a trilinear
    sample there reads (corner c = x + 2 y + 4 z above the cell's own sample, clamped at the
    far edges), side by side. A GPU then fetches one 32-byte sector per sample where the plain
    layout scattered eight (an H200's update with a 64^3 SDF: +74% over no collider before,
    see README benchmarks); the price is 8x the array's bytes. Written into ``out`` (a
    float32 (D, H, W, 8) array, e.g. a view of the packed array) when given, with slices of
    the volume only: no temporary larger than the volume."""
    if out is None:
        out = np.empty((*volume.shape, 8), np.float32)
    for c in range(8):
        # along each axis where corner c is one ahead, destination 0 .. n-2 reads source
        # 1 .. n-1 and the last one reads itself (clamped); basic slices copy view to view
        ranges = []
        for n, ahead in zip(volume.shape, (c & 4, c & 2, c & 1)):
            ranges.append([(slice(0, n - 1), slice(1, n)), (slice(n - 1, n), slice(n - 1, n))]
                          if ahead else [(slice(None), slice(None))])
        target = out[..., c]
        for (dz, sz), (dy, sy), (dx, sx) in itertools.product(*ranges):
            target[dz, dy, dx] = volume[sz, sy, sx]
    return out


COARSE = 8   # fine cells per coarse cell along each axis (the SDF's coarse lower bounds)


def coarse_counts(shape) -> tuple[int, ...]:
    """Coarse cells along each axis of a (D, H, W) volume: ceil((n - 1) / COARSE)."""
    return tuple(max(1, -(-(n - 1) // COARSE)) for n in shape)


def coarse_minimum(volume: np.ndarray) -> np.ndarray:
    """For each coarse cell (COARSE^3 fine cells), the smallest sample at its cells' corners: a
    trilinear sample never falls below its corners, so it bounds the distance anywhere in the
    cell from below. A positive bound lets the shader skip the fine sample of a particle far
    from the surface (most of them)."""
    out = volume
    for axis, cells in enumerate(coarse_counts(volume.shape)):
        n = out.shape[axis]
        index = np.minimum(np.arange(COARSE * cells + 1), n - 1)
        padded = np.take(out, index, axis=axis)
        windows = [np.take(padded, np.arange(k, k + COARSE * cells, COARSE), axis=axis)
                   for k in range(COARSE + 1)]
        out = np.minimum.reduce(windows)
    return out


def packed_floats(shape: tuple) -> int:
    """Floats a volume of ``shape`` takes in the packed array: scalar volumes as corner bricks
    followed by their coarse lower bounds; vector volumes as they are (Python integers: a
    hostile header's product does not wrap)."""
    size = 1
    for n in shape:
        size *= int(n)
    if len(shape) == 3:
        coarse = 1
        for n in coarse_counts(shape):
            coarse *= n
        return size * 8 + coarse
    return size


def packed_layout(shapes: list[tuple]) -> tuple[int, list[PackedVolume]]:
    """Floats of the packed array (at least 4, whole vec4s) and each volume's slot, from the
    shapes alone: the size is known, and checked, before anything is packed."""
    slots, total = [], 0
    for shape in shapes:
        total = -(-total // ALIGN) * ALIGN
        slots.append(PackedVolume(total, (shape[2], shape[1], shape[0])))
        total += packed_floats(shape)
    return max(4, -(-total // 4) * 4), slots


def pack_volumes(arrays: list[np.ndarray]) -> tuple[np.ndarray, list[PackedVolume]]:
    """One float32 array holding every volume (scalar volumes as corner bricks, vectors as 3
    floats per sample), with each one's offset (a multiple of ALIGN) and grid; at least 4
    floats long, a multiple of 4 (the shader reads vec4s), so the buffer is never empty."""
    total, slots = packed_layout([a.shape for a in arrays])
    flat = np.zeros(total, np.float32)
    for a, slot in zip(arrays, slots):
        if a.ndim == 3:   # bricks written in place, then the coarse bounds after them
            bricks = flat[slot.offset:slot.offset + 8 * a.size].reshape(*a.shape, 8)
            corner_bricks(a, bricks)
            coarse = coarse_minimum(a).reshape(-1)
            flat[slot.offset + 8 * a.size:slot.offset + 8 * a.size + coarse.size] = coarse
        else:
            flat[slot.offset:slot.offset + a.size] = a.reshape(-1)
    return flat, slots


def trilinear(volume: np.ndarray, size, local: np.ndarray, tile: bool = False) -> np.ndarray:
    """The numpy reference sample of a (D, H, W[, C]) volume at local positions (N, 3) in a box
    of edge lengths ``size`` centred on 0 (tests compare the GPU against this). Outside the box a
    non-tiled volume clamps to its edge samples (callers decide whether it applies there)."""
    d, h, w = volume.shape[:3]
    grid = np.array([w, h, d], np.float64)
    u = (np.asarray(local, np.float64) / np.asarray(size, np.float64) + 0.5) * grid - 0.5
    base = np.floor(u)
    frac = u - base
    base = base.astype(np.int64)
    counts = grid.astype(np.int64)
    out = np.zeros((len(u), *volume.shape[3:]))
    for corner in range(8):
        offset = np.array([corner & 1, (corner >> 1) & 1, (corner >> 2) & 1])
        idx = base + offset
        idx = np.mod(idx, counts) if tile else np.clip(idx, 0, counts - 1)
        weight = np.prod(np.where(offset == 1, frac, 1.0 - frac), axis=1)
        sample = volume[idx[:, 2], idx[:, 1], idx[:, 0]]
        out = out + (weight[:, None] * sample if sample.ndim == 2 else weight * sample)
    return out
