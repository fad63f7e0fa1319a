"""Writes the volumes the bundled scenes sample (run it from this folder to remake them):

arch.npy   float32 (48, 48, 64) signed distances, world units, over a 4 x 3 x 3 box: a stone arch
           (a half torus standing on the ground) with a boulder under it, blended smoothly
breeze.npy float32 (12, 12, 24, 3) velocities over an 8 x 4 x 4 box: a breeze along +x that
           rises over the middle and curls behind it
"""

from __future__ import annotations

import numpy as np


def cell_centres(counts, size):
    """World coordinates (..., 3) of the centres of a (D, H, W) grid filling a box of ``size``
    (x, y, z edge lengths) centred on 0."""
    axes = [(np.arange(n) + 0.5) / n * s - s / 2 for n, s in zip(counts[::-1], size)]
    z, y, x = np.meshgrid(axes[2], axes[1], axes[0], indexing="ij")
    return np.stack([x, y, z], axis=-1)


def smooth_min(a, b, k):
    h = np.clip(0.5 + 0.5 * (b - a) / k, 0.0, 1.0)
    return b * (1 - h) + a * h - k * h * (1 - h)


def arch() -> np.ndarray:
    p = cell_centres((48, 48, 64), (4.0, 3.0, 3.0))
    # a torus in the x-y plane (ring radius 1.2, tube 0.32), its centre at the ground (y = -1.5)
    q = p - np.array([0.0, -1.5, 0.0])
    ring = np.sqrt(q[..., 0] ** 2 + q[..., 1] ** 2) - 1.2
    torus = np.sqrt(ring ** 2 + q[..., 2] ** 2) - 0.32
    boulder = np.linalg.norm(p - np.array([0.35, -1.3, 0.2]), axis=-1) - 0.45
    return smooth_min(torus, boulder, 0.25).astype(np.float32)


def breeze() -> np.ndarray:
    p = cell_centres((12, 12, 24), (8.0, 4.0, 4.0))
    x, y, z = p[..., 0], p[..., 1], p[..., 2]
    bump = np.exp(-(x / 1.5) ** 2)
    v = np.zeros_like(p)
    v[..., 0] = 1.6 + 0.4 * np.tanh(y)
    v[..., 1] = 1.2 * bump * (1.0 - 0.3 * y) - 0.6 * np.exp(-((x - 2.0) / 1.0) ** 2)
    v[..., 2] = 0.5 * np.sin(1.3 * x) * np.cos(0.9 * y) + 0.15 * z
    return v.astype(np.float32)


if __name__ == "__main__":
    np.save("arch.npy", arch())
    np.save("breeze.npy", breeze())
