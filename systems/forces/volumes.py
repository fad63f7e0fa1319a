"""Volumes sampled from arrays: SDF colliders (float32 (D, H, W) signed distances) and vector
fields (float32 (D, H, W, 3)). This module loads and checks the .npy files and packs the
volumes one emitter samples into one float array (its ``<e>/volumes`` storage buffer; SDFs as
corner bricks, 8x their bytes), which shaders/common/volumes.wgsl samples trilinearly with
full-precision weights.

Sample (k, j, i) of a (D, H, W) array sits at the centre of cell (i, j, k) of the W x H x D
cells that fill the volume's box: local position ((i + 0.5) / W - 0.5) * size.x, and so on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np


class VolumeError(ValueError):
    """A volume file or array that cannot be used; the message reads "expected ..., found ..."."""


_CACHE: dict[tuple, np.ndarray] = {}   # (path, mtime_ns, size) -> checked array


def check_volume(array, channels: int) -> np.ndarray:
    """``array`` as a C-contiguous float32 volume of ``channels`` (1: (D, H, W), 3: (D, H, W, 3)),
    at least 2 samples along each axis and finite; VolumeError otherwise."""
    if not isinstance(array, np.ndarray):
        raise VolumeError(f"expected a numpy array, found {type(array).__name__}")
    if array.dtype != np.float32:
        raise VolumeError(f"expected dtype float32, found {array.dtype}")
    wanted = "(D, H, W)" if channels == 1 else "(D, H, W, 3)"
    ndim = 3 if channels == 1 else 4
    if array.ndim != ndim or (channels == 3 and array.shape[3] != 3):
        raise VolumeError(f"expected shape {wanted}, found {tuple(array.shape)}")
    if min(array.shape[:3]) < 2:
        raise VolumeError(f"expected at least 2 samples along each axis of {wanted}, found "
                          f"{tuple(array.shape)}")
    finite = np.isfinite(array)
    if not finite.all():
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise VolumeError(f"expected finite values, found {array[where]} at index {list(where)}")
    return np.ascontiguousarray(array)


def load_volume(path: str | os.PathLike, channels: int) -> np.ndarray:
    """The checked array of a .npy file (cached by path, modification time and size, so the
    scene loader's check and the engine's upload read it once)."""
    path = Path(path)
    try:
        stat = path.stat()
    except OSError:
        raise VolumeError(f"expected an existing .npy file, found none at {path}") from None
    key = (str(path), stat.st_mtime_ns, stat.st_size, channels)
    cached = _CACHE.get(key)
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


@dataclass(frozen=True)
class PackedVolume:
    offset: int              # first float of the volume in the packed array
    grid: tuple[int, int, int]   # samples along local x, y, z: (W, H, D)


def corner_bricks(volume: np.ndarray) -> np.ndarray:
    """A scalar (D, H, W) volume as (D, H, W, 8): for each cell, the eight samples a trilinear
    sample there reads (corner c = x + 2 y + 4 z above the cell's own sample, clamped at the
    far edges), side by side. A GPU then fetches one 32-byte sector per sample where the plain
    layout scattered eight (an H200's update with a 64^3 SDF: +74% over no collider before,
    see README benchmarks); the price is 8x the array's bytes."""
    d, h, w = volume.shape
    x1 = np.minimum(np.arange(w) + 1, w - 1)
    y1 = np.minimum(np.arange(h) + 1, h - 1)
    z1 = np.minimum(np.arange(d) + 1, d - 1)
    corners = []
    for c in range(8):
        v = volume[z1] if c & 4 else volume
        v = v[:, y1] if c & 2 else v
        corners.append(v[:, :, x1] if c & 1 else v)
    return np.stack(corners, axis=-1)


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


def packed_size(array: np.ndarray) -> int:
    """Floats a volume takes in the packed array: scalar volumes as corner bricks followed by
    their coarse lower bounds; vector volumes as they are."""
    if array.ndim == 3:
        return array.size * 8 + int(np.prod(coarse_counts(array.shape)))
    return array.size


ALIGN = 24   # floats: a brick starts on 32 bytes, a vector sample on a multiple of 3 floats


def pack_volumes(arrays: list[np.ndarray]) -> tuple[np.ndarray, list[PackedVolume]]:
    """One float32 array holding every volume (scalar volumes as corner bricks, vectors as 3
    floats per sample), with each one's offset (a multiple of ALIGN) and grid; at least 4
    floats long, a multiple of 4 (the shader reads vec4s), so the buffer is never empty."""
    slots, total = [], 0
    for a in arrays:
        total = -(-total // ALIGN) * ALIGN
        slots.append(PackedVolume(total, (a.shape[2], a.shape[1], a.shape[0])))
        total += packed_size(a)
    flat = np.zeros(max(4, -(-total // 4) * 4), np.float32)   # whole vec4s
    for a, slot in zip(arrays, slots):
        if a.ndim == 3:
            data = np.concatenate([corner_bricks(a).reshape(-1), coarse_minimum(a).reshape(-1)])
        else:
            data = a.reshape(-1)
        flat[slot.offset:slot.offset + data.size] = data
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
