"""A numpy replica of the explicit mass-spring substep, the oracle for cloth/step.wgsl."""

from __future__ import annotations

import numpy as np

SPRINGS = [(1, 0, "dx"), (-1, 0, "dx"), (0, 1, "dy"), (0, -1, "dy"), (1, 1, "diag"),
           (-1, -1, "diag"), (1, -1, "diag"), (-1, 1, "diag"), (2, 0, "2dx"), (-2, 0, "2dx"),
           (0, 2, "2dy"), (0, -2, "2dy")]


def substep(x, v, pinned, rest_x, *, dx, dy, stiffness, damping, mass, gravity, drag, h,
            pin_offset=(0.0, 0.0, 0.0), wind=None):
    """x, v: (ny, nx, 3) float64. Returns the next (x, v). ``wind``: a wind velocity acting
    through the vertex normal (central differences, clamped at the edges) with the drag law
    0.6 * area * (n . (wind - v)) |n . (wind - v)| n, area = dx * dy."""
    ny, nx, _ = x.shape
    lengths = {"dx": dx, "dy": dy, "diag": np.hypot(dx, dy), "2dx": 2 * dx, "2dy": 2 * dy}
    f = mass * (np.asarray(gravity) - drag * v)
    for di, dj, kind in SPRINGS:
        other_x = np.zeros_like(x)
        other_v = np.zeros_like(v)
        valid = np.zeros((ny, nx), bool)
        js = slice(max(0, -dj), ny - max(0, dj))
        is_ = slice(max(0, -di), nx - max(0, di))
        jt = slice(max(0, dj), ny - max(0, -dj))
        it = slice(max(0, di), nx - max(0, -di))
        other_x[js, is_] = x[jt, it]
        other_v[js, is_] = v[jt, it]
        valid[js, is_] = True
        d = other_x - x
        length = np.linalg.norm(d, axis=2, keepdims=True)
        ok = valid[..., None] & (length > 0)
        direction = np.where(ok, d / np.where(length > 0, length, 1), 0)
        stretch = stiffness * (length - lengths[kind])
        damp = damping * ((other_v - v) * direction).sum(axis=2, keepdims=True)
        f += np.where(ok, (stretch + damp) * direction, 0)
    if wind is not None:
        f += wind_force(x, v, np.asarray(wind, float), dx * dy)
    v_next = v + f / mass * h
    x_next = x + v_next * h
    x_next[pinned] = rest_x[pinned] + np.asarray(pin_offset)
    v_next[pinned] = 0.0
    return x_next, v_next


def wind_force(x, v, wind, area):
    ny, nx, _ = x.shape
    cols, rows = np.arange(nx), np.arange(ny)
    du = x[:, np.minimum(cols + 1, nx - 1)] - x[:, np.maximum(cols - 1, 0)]
    dv = x[np.minimum(rows + 1, ny - 1)] - x[np.maximum(rows - 1, 0)]
    c = np.cross(du, dv)
    length = np.linalg.norm(c, axis=2, keepdims=True)
    n = np.where(length > 0, c / np.where(length > 0, length, 1), np.array([0.0, 0.0, 1.0]))
    along = ((wind - v) * n).sum(axis=2, keepdims=True)
    return 0.6 * area * along * np.abs(along) * n
