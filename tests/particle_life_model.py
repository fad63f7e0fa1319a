"""All-pairs numpy particle life (the system's force law, minimum image), the oracle for the
grid."""

from __future__ import annotations

import numpy as np


def force_law(r: np.ndarray, a: np.ndarray, beta: float) -> np.ndarray:
    return np.where(r < beta, r / beta - 1.0,
                    np.where(r < 1.0, a * (1.0 - np.abs(2.0 * r - 1.0 - beta) / (1.0 - beta)), 0.0))


def step(position, velocity, species, matrix, *, box, r_max, beta, force, half_life, dt):
    """One step for every particle against every other (float64)."""
    x = np.asarray(position, np.float64)
    v = np.asarray(velocity, np.float64)
    box = np.asarray(box, np.float32).astype(np.float64)   # the box as the GPU holds it
    acc = np.zeros_like(x)
    for start in range(0, len(x), 512):                 # chunks keep memory small
        xi = x[start:start + 512]
        d = x[None, :, :] - xi[:, None, :]
        d -= box * np.round(d / box)
        dist = np.sqrt((d * d).sum(axis=2))
        a = matrix[species[start:start + 512][:, None], species[None, :]]
        near = (dist > 0) & (dist < r_max)
        f = np.where(near, force_law(dist / r_max, a, beta), 0.0)
        acc[start:start + 512] = (f[:, :, None] * d
                                  / np.where(dist > 0, dist, 1.0)[:, :, None]).sum(axis=1)
    acc *= r_max * force
    v = v * 0.5 ** (dt / half_life) + acc * dt
    x = x + v * dt
    x -= box * np.floor(x / box)
    return x, v
