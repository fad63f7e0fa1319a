"""The scene camera: a description (the ``[camera]`` table) and its view/projection matrices.

Matrices are numpy float32, column vectors (clip = proj @ view @ world), depth in [0, 1] as WebGPU
expects. They are uploaded once per frame in the shared ``frame`` uniform
(shaders/common/frame.wgsl).

Mouse interaction (the interactive window calls these; all pure numpy, no GPU): ``orbit``, ``pan``
and ``zoom`` edit the camera in place; ``ray`` and ``view_plane_point`` turn a cursor position into
world geometry. Cursor positions are logical pixels, continuous, (0, 0) at the viewport's top-left
corner and y growing downwards (glfw's convention), so the centre of pixel column i is i + 0.5;
``viewport`` is (width, height) in the same units. Only ratios of the two are used, so logical and
framebuffer pixels give the same answer.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
import numpy as np

from emberfx.model.numbers import F32_MAX

Vec3 = tuple[float, float, float]
Vec2 = tuple[float, float]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]

ORBIT_TURNS_PER_WIDTH = 1.0
"""orbit: a drag across the whole viewport width turns the camera this many times around the target
(both axes use the same angle per pixel)"""
PITCH_LIMIT_DEG = 89.0
"""orbit: the highest elevation above (or below) the plane perpendicular to ``up``; short of 90 so
the view never flips over the pole, where ``up`` would be parallel to the view direction"""
MAX_ASPECT = 16384.0
"""the widest (or, inverted, the narrowest) viewport aspect a view matrix must stay finite for"""
ZOOM_FACTOR = 0.85
"""zoom: distance (perspective) or height (orthographic) is multiplied by this per wheel step in"""


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
    fit: Literal["height", "width", "contain"] = "height"
    """which part of the reference view (``height`` or ``fov_deg`` at ``reference_aspect``) stays
    visible when the viewport's aspect differs: "height" keeps the vertical extent, "width" the
    horizontal one, "contain" the whole reference rectangle (adding margin above and below, or at
    the sides, whichever the viewport needs)"""
    reference_aspect: Positive | None = None
    """width / height of the view that ``height`` and ``fov_deg`` describe; None: the scene's
    [scene] size (the Engine fills it in), or, where there is no scene, the viewport's own aspect
    (then every fit shows the same)"""

    def __post_init__(self):
        if self.far <= self.near:
            raise ValueError(f"expected far > near, found near={self.near} far={self.far}")
        for name in ("position", "target", "up", "center"):
            values = getattr(self, name)
            if not all(math.isfinite(v) for v in values):
                raise ValueError(f"{name}: expected finite numbers, found {list(values)}")
        if not any(self.up):
            raise ValueError("up: expected a non-zero vector, found [0, 0, 0]")
        if self.kind == "perspective":
            if np.allclose(np.subtract(self.target, self.position), 0.0):
                raise ValueError(f"target: expected a point other than position, "
                                 f"found {list(self.target)}")
        # The view-projection matrix goes to the GPU as 32-bit floats, for viewports as narrow
        # or as wide as a texture allows (aspect 1/16384 .. 16384: the matrix scales with it).
        with np.errstate(all="ignore"):   # an overflow shows as inf or nan: refused below
            matrix = self.projection_matrix(self.reference_aspect or 1.0) @ self.view_matrix()
            largest = float(np.abs(matrix).max()) * MAX_ASPECT
        if not largest <= F32_MAX:
            fields = ("position, target, fov_deg" if self.kind == "perspective"
                      else "center, height") + ", near, far"
            if self.reference_aspect is not None:
                fields += ", reference_aspect"
            raise ValueError(f"expected a view matrix that fits 32-bit floats in any viewport, "
                             f"found entries up to {largest:.3g} (from {fields})")

    def with_reference(self, scene_size: tuple[float, float]) -> Camera:
        """A copy whose ``reference_aspect`` is the scene size's (width / height) where the
        camera does not set its own: the live camera a running scene draws with."""
        if self.reference_aspect is not None:
            return dataclasses.replace(self)
        width, height = scene_size
        return dataclasses.replace(self, reference_aspect=float(width) / float(height))

    def fit_scale(self, aspect: float) -> float:
        """How much taller than at the reference the visible extent is in a viewport of
        ``aspect`` (width / height): 1 for "height"; reference / aspect for "width" (a narrower
        viewport shows more height so the width stays); the larger of the two for "contain"."""
        if self.reference_aspect is None or self.fit == "height":
            return 1.0
        keep_width = self.reference_aspect / aspect
        return keep_width if self.fit == "width" else max(1.0, keep_width)

    def view_matrix(self) -> np.ndarray:
        if self.kind == "orthographic":
            eye = np.array([self.center[0], self.center[1], self.far * 0.5], np.float64)
            return _look_at(eye, eye - np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0]))
        return _look_at(np.asarray(self.position, np.float64), np.asarray(self.target, np.float64),
                        np.asarray(self.up, np.float64))

    def projection_matrix(self, aspect: float) -> np.ndarray:
        n, f = self.near, self.far
        scale = self.fit_scale(aspect)
        if self.kind == "orthographic":
            h = self.height * 0.5 * scale
            w = h * aspect
            m = np.zeros((4, 4))
            m[0, 0], m[1, 1] = 1.0 / w, 1.0 / h
            m[2, 2], m[2, 3] = -1.0 / (f - n), -n / (f - n)
            m[3, 3] = 1.0
            return m
        t = 1.0 / (math.tan(math.radians(self.fov_deg) * 0.5) * scale)
        m = np.zeros((4, 4))
        m[0, 0], m[1, 1] = t / aspect, t
        m[2, 2], m[2, 3] = f / (n - f), n * f / (n - f)
        m[3, 2] = -1.0
        return m

    # mouse interaction -------------------------------------------------------------------------
    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(eye, right, up, forward) in world space, float64, the three directions unit length: the
        camera frame that ``view_matrix`` encodes (eye = the orthographic camera's virtual eye)."""
        view = self.view_matrix()
        eye = -view[:3, :3].T @ view[:3, 3]
        return eye, view[0, :3].copy(), view[1, :3].copy(), -view[2, :3]

    def _half_extent(self, aspect: float, depth: float = 1.0) -> tuple[float, float]:
        """Half the visible width and height in world units, at ``depth`` in front of a perspective
        eye (an orthographic view is the same at every depth), after ``fit``."""
        if self.kind == "orthographic":
            half = self.height * 0.5
        else:
            half = depth * math.tan(math.radians(self.fov_deg) * 0.5)
        half *= self.fit_scale(aspect)
        return half * aspect, half

    def ray(self, px: float, py: float,
            viewport: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
        """The world ray through cursor (px, py): (origin (3,), unit direction (3,)), float64.

        The origin lies on the near plane, so every point origin + t direction with t >= 0 is in
        front of the camera and ``projection_matrix(w / h) @ view_matrix()`` maps it back to the
        cursor. Built from the camera frame rather than by inverting the matrix: exact, and free of
        the precision lost to a far / near ratio of 10^4."""
        x, y, aspect = _ndc(px, py, viewport)
        eye, right, up, forward = self.basis()
        hw, hh = self._half_extent(aspect)
        if self.kind == "orthographic":
            return eye + x * hw * right + y * hh * up + self.near * forward, forward
        direction = forward + x * hw * right + y * hh * up
        direction /= np.linalg.norm(direction)
        return eye + direction * (self.near / (direction @ forward)), direction

    def view_plane_point(self, px: float, py: float, viewport: tuple[float, float],
                         through) -> np.ndarray:
        """The world point (3,) under cursor (px, py) on the plane through ``through`` that faces
        the camera: perpendicular to the view direction (perspective), or z = through[2]
        (orthographic).

        A perspective plane at or behind the near plane has no visible point; the target's depth is
        used instead, so a dragged object never jumps behind the camera."""
        origin, direction = self.ray(px, py, viewport)
        through = np.asarray(through, np.float64)
        if self.kind == "orthographic":
            return np.array([origin[0], origin[1], through[2]])
        eye, _, _, forward = self.basis()
        depth = (through - eye) @ forward
        if depth <= self.near:
            depth = (np.asarray(self.target, np.float64) - eye) @ forward
        return eye + direction * (depth / (direction @ forward))

    def orbit(self, dx: float, dy: float, viewport: tuple[float, float]) -> None:
        """Turn a perspective camera's ``position`` around ``target`` for a drag of (dx, dy)
        pixels: yaw about ``up``, pitch towards it, at ORBIT_TURNS_PER_WIDTH turns per viewport
        width. The distance to the target is kept and the elevation stays within PITCH_LIMIT_DEG.
        The scene follows the drag (drag right: the camera swings left; drag down: it rises), as
        in Blender. An orthographic camera (a fixed 2-D view down -z) is left unchanged."""
        if self.kind == "orthographic":
            return
        rate = 2.0 * math.pi * ORBIT_TURNS_PER_WIDTH / max(float(viewport[0]), 1.0)
        axis = np.asarray(self.up, np.float64)
        axis /= np.linalg.norm(axis)
        target = np.asarray(self.target, np.float64)
        offset = np.asarray(self.position, np.float64) - target
        distance = float(np.linalg.norm(offset))
        elevation = math.asin(float(np.clip(offset @ axis / distance, -1.0, 1.0)))
        flat = offset - (offset @ axis) * axis
        if np.linalg.norm(flat) < 1e-9 * distance:   # on the pole: azimuth from the screen's right
            flat = np.cross(self.basis()[1], axis)
        flat /= np.linalg.norm(flat)
        yaw = -dx * rate
        flat = flat * math.cos(yaw) + np.cross(axis, flat) * math.sin(yaw)
        # a camera placed beyond the limit by the scene may stay there, but not go further
        limit = math.radians(PITCH_LIMIT_DEG)
        elevation = float(np.clip(elevation + dy * rate, min(-limit, elevation),
                                  max(limit, elevation)))
        offset = distance * (math.cos(elevation) * flat + math.sin(elevation) * axis)
        self.position = _vec(target + offset)

    def pan(self, dx: float, dy: float, viewport: tuple[float, float]) -> None:
        """Slide the view for a drag of (dx, dy) pixels so the world follows the cursor: the point
        under it at the target's depth (perspective: position and target move together in the
        view plane) or on any plane (orthographic: ``center`` moves) stays under it."""
        aspect = _ndc(0.0, 0.0, viewport)[2]
        if self.kind == "orthographic":
            per_pixel = 2.0 * self._half_extent(aspect)[1] / float(viewport[1])
            self.center = (float(self.center[0] - dx * per_pixel),
                           float(self.center[1] + dy * per_pixel))
            return
        eye, right, up, forward = self.basis()
        depth = (np.asarray(self.target, np.float64) - eye) @ forward
        per_pixel = 2.0 * self._half_extent(aspect, depth)[1] / float(viewport[1])
        shift = (-dx * right + dy * up) * per_pixel
        self.position = _vec(np.asarray(self.position, np.float64) + shift)
        self.target = _vec(np.asarray(self.target, np.float64) + shift)

    def zoom(self, steps: float, viewport: tuple[float, float], cursor=None) -> None:
        """Zoom in by ``steps`` wheel steps (negative: out; fractions from touchpads are fine).

        Perspective: ``position`` dollies along the line to ``target`` (the cursor is not used),
        the distance scaled by ZOOM_FACTOR ** steps but kept within [2 near, far / 2], so the
        camera never reaches or passes the target and the target stays inside the depth range.
        Orthographic: ``height`` is scaled by ZOOM_FACTOR ** steps; with ``cursor`` (px, py) the
        world point under the cursor stays there, otherwise the centre does."""
        # the exponent is clamped so a runaway wheel count cannot overflow a float
        scale = math.exp(min(max(float(steps) * math.log(ZOOM_FACTOR), -700.0), 700.0))
        if self.kind == "orthographic":
            # bounded so that repeated zooming cannot underflow to 0 or overflow float32 matrices
            height = float(np.clip(self.height * scale, min(1e-6, self.height),
                                   max(1e9, self.height)))
            if cursor is not None:
                x, y, aspect = _ndc(cursor[0], cursor[1], viewport)
                k = (self.height - height) * 0.5 * self.fit_scale(aspect)
                self.center = (float(self.center[0] + x * k * aspect),
                               float(self.center[1] + y * k))
            self.height = height
            return
        target = np.asarray(self.target, np.float64)
        offset = np.asarray(self.position, np.float64) - target
        distance = float(np.linalg.norm(offset))
        # a scene may place the camera outside the range: it may stay there, not go further out
        lo, hi = min(2.0 * self.near, distance), max(0.5 * self.far, distance)
        wanted = float(np.clip(distance * scale, lo, hi))
        self.position = _vec(target + offset * (wanted / distance))


def _ndc(px: float, py: float, viewport) -> tuple[float, float, float]:
    """Cursor pixels -> normalised device x, y in [-1, 1] (y up) and the viewport's aspect w / h."""
    w, h = float(viewport[0]), float(viewport[1])
    if not (w > 0.0 and h > 0.0):
        raise ValueError(f"viewport: expected a positive (width, height), found {tuple(viewport)}")
    return 2.0 * px / w - 1.0, 1.0 - 2.0 * py / h, w / h


def _vec(v: np.ndarray) -> Vec3:
    return (float(v[0]), float(v[1]), float(v[2]))


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
