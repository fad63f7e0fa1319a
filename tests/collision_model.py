"""A numpy replica of particle collisions, written from the response the issue specifies:
per substep, after the position update, a particle inside a solid moves back to its surface;
its approaching normal speed is reflected and scaled by the restitution e, and its tangential
velocity loses friction x the normal speed change (Coulomb), clamped at zero."""

from __future__ import annotations

import numpy as np


def plane_distance(x, point, normal):
    n = np.asarray(normal, np.float64)
    n = n / np.linalg.norm(n)
    return (x - np.asarray(point)) @ n, np.broadcast_to(n, x.shape)


def sphere_distance(x, center, radius):
    r = x - np.asarray(center)
    d = np.linalg.norm(r, axis=-1)
    return d - radius, r / np.maximum(d, 1e-30)[..., None]


def box_distance(x, center, half, rotation):
    """Signed distance to a box rotated by ``rotation`` (3x3, local -> world)."""
    q = (x - np.asarray(center)) @ rotation   # world -> local (rows dotted with R's columns)
    e = np.abs(q) - np.asarray(half)
    outside = np.linalg.norm(np.maximum(e, 0.0), axis=-1)
    inside = np.minimum(e.max(axis=-1), 0.0)
    return outside + inside


def respond(v, n, restitution, friction):
    """The velocity after a contact with outward normal n (rows)."""
    vn = np.sum(v * n, axis=-1)
    approaching = vn < 0.0
    tangential = v - vn[..., None] * n
    speed = np.linalg.norm(tangential, axis=-1)
    change = (1.0 + restitution) * -vn
    keep = np.where(speed > 0, np.maximum(0.0, 1.0 - friction * change / np.maximum(speed, 1e-30)),
                    0.0)
    out = tangential * keep[..., None] - restitution * vn[..., None] * n
    return np.where(approaching[..., None], out, v)


def drop_on_plane(y0, vx0, steps, dt, substeps, gravity, restitution, friction):
    """One particle over a plane y = 0 (float64): its (x, y) after each step."""
    x = np.array([[0.0, y0, 0.0]])
    v = np.array([[vx0, 0.0, 0.0]])
    g = np.array([0.0, -gravity, 0.0])
    h = dt / substeps
    out = []
    for _ in range(steps):
        for _ in range(substeps):
            v = v + g * h
            x = x + v * h
            d, n = plane_distance(x, (0, 0, 0), (0, 1, 0))
            inside = d < 0
            if inside.any():
                x = x - (d * inside)[:, None] * n
                v = np.where(inside[:, None], respond(v, n, restitution, friction), v)
        out.append(x[0, :2].copy())
    return np.array(out)
