"""The scene camera: a description (the ``[camera]`` table) and its view/projection matrices.

Matrices are numpy float32, column vectors (clip = proj @ view @ world), depth in [0, 1] as WebGPU
expects. They are uploaded once per frame in the shared ``frame`` uniform (shaders/common/frame.wgsl).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import numpy as np

Vec3 = tuple[float, float, float]
Vec2 = tuple[float, float]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]


@dataclass(slots=True)
class Camera:
    kind: Literal["perspective", "orthographic"] = "perspective"
    position: Vec3 = (0.0, 2.0, 6.0)
    """perspective: eye position, world units"""
    target: Vec3 = (0.0, 1.0, 0.0)
    """perspective: the point looked at"""
    up: Vec3 = (0.0, 1.0, 0.0)
    fov_deg: Annotated[float, msgspec.Meta(gt=0.0, lt=180.0)] = 50.0
    """perspective: vertical field of view, degrees"""
    center: Vec2 = (0.0, 0.0)
    """orthographic: the world (x, y) at the middle of the view (looking down -z)"""
    height: Positive = 4.0
    """orthographic: world units shown from bottom to top"""
    near: Positive = 0.05
    far: Positive = 500.0

    def __post_init__(self):
        if self.far <= self.near:
            raise ValueError(f"expected far > near, found near={self.near} far={self.far}")
        if self.kind == "perspective":
            if np.allclose(np.subtract(self.target, self.position), 0.0):
                raise ValueError(f"target: expected a point other than position, found {list(self.target)}")

    def view_matrix(self) -> np.ndarray:
        if self.kind == "orthographic":
            eye = np.array([self.center[0], self.center[1], self.far * 0.5], np.float64)
            return _look_at(eye, eye - np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0]))
        return _look_at(np.asarray(self.position, np.float64), np.asarray(self.target, np.float64),
                        np.asarray(self.up, np.float64))

    def projection_matrix(self, aspect: float) -> np.ndarray:
        n, f = self.near, self.far
        if self.kind == "orthographic":
            h = self.height * 0.5
            w = h * aspect
            m = np.zeros((4, 4))
            m[0, 0], m[1, 1] = 1.0 / w, 1.0 / h
            m[2, 2], m[2, 3] = -1.0 / (f - n), -n / (f - n)
            m[3, 3] = 1.0
            return m
        t = 1.0 / math.tan(math.radians(self.fov_deg) * 0.5)
        m = np.zeros((4, 4))
        m[0, 0], m[1, 1] = t / aspect, t
        m[2, 2], m[2, 3] = f / (n - f), n * f / (n - f)
        m[3, 2] = -1.0
        return m


def _look_at(eye: np.ndarray, target: np.ndarray, up: np.ndarray) -> np.ndarray:
    forward = target - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, up)
    if np.linalg.norm(right) < 1e-9:  # looking straight along up: pick any perpendicular
        right = np.cross(forward, np.array([1.0, 0.0, 0.0]))
    right /= np.linalg.norm(right)
    true_up = np.cross(right, forward)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = right, true_up, -forward
    m[:3, 3] = -m[:3, :3] @ eye
    return m
