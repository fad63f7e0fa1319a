"""Rotations as scene files write them: ``rotation_deg = [x, y, z]``, about x, then y, then z."""

from __future__ import annotations

import math

import numpy as np


def rotation_matrix(degrees: tuple[float, float, float]) -> np.ndarray:
    """The 3x3 matrix R = Rz Ry Rx turning local coordinates into world ones (column vectors)."""
    ax, ay, az = (math.radians(d) for d in degrees)
    rx = np.array([[1, 0, 0], [0, math.cos(ax), -math.sin(ax)], [0, math.sin(ax), math.cos(ax)]])
    ry = np.array([[math.cos(ay), 0, math.sin(ay)], [0, 1, 0], [-math.sin(ay), 0, math.cos(ay)]])
    rz = np.array([[math.cos(az), -math.sin(az), 0], [math.sin(az), math.cos(az), 0], [0, 0, 1]])
    return rz @ ry @ rx
