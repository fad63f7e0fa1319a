"""A numpy model of the emitter, written from the algorithm's definition (not from the WGSL), used
as the oracle for the GPU passes: PCG hashing, births, semi-implicit Euler, ordered allocation."""

from __future__ import annotations

import math

import numpy as np

M = np.uint32


def pcg_hash(x):
    """PCG-RXS-M-XS 32 (O'Neill 2014) on uint32 arrays, wrapping like the GPU."""
    x = np.asarray(x, dtype=np.uint64)
    state = (x * 747796405 + 2891336453) & 0xFFFFFFFF
    word = (((state >> ((state >> 28) + 4)) ^ state) * 277803737) & 0xFFFFFFFF
    return ((word >> 22) ^ word).astype(np.uint32)


def birth_key(seed, entity, slot, frame):
    inner = pcg_hash(np.uint32(entity) ^ pcg_hash(seed))
    return pcg_hash(np.asarray(slot, np.uint32) ^ pcg_hash(np.uint32(frame) ^ inner))


def random01(key, draw):
    k = (np.asarray(key, np.uint64) + draw) & 0xFFFFFFFF
    return (pcg_hash(k) >> 8).astype(np.float64) / 16777216.0


def spawn(slots, *, seed, entity, frame, origin, direction, spread_deg, speed, lifetime):
    """Position, velocity and lifetime of particles born in ``slots`` at step ``frame``."""
    key = birth_key(seed, entity, slots, frame)
    axis = np.asarray(direction, np.float64)
    axis /= np.linalg.norm(axis)
    cos_spread = math.cos(math.radians(spread_deg))
    cos_t = 1.0 - random01(key, 0) * (1.0 - cos_spread)
    sin_t = np.sqrt(np.maximum(0.0, 1.0 - cos_t ** 2))
    phi = 2.0 * math.pi * random01(key, 1)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[1]) > 0.999 else np.array([0.0, 1.0, 0.0])
    tangent = np.cross(helper, axis)
    tangent /= np.linalg.norm(tangent)
    bitangent = np.cross(axis, tangent)
    dirs = ((np.cos(phi)[:, None] * tangent + np.sin(phi)[:, None] * bitangent) * sin_t[:, None]
            + cos_t[:, None] * axis)
    s = speed[0] + (speed[1] - speed[0]) * random01(key, 2)
    life = lifetime[0] + (lifetime[1] - lifetime[0]) * random01(key, 3)
    pos = np.broadcast_to(np.asarray(origin, np.float64), (len(slots), 3))
    return pos, dirs * s[:, None], life


def integrate(position, velocity, age, h, gravity, drag):
    """One semi-implicit Euler step of alive particles (float64)."""
    velocity = velocity + (np.asarray(gravity) - drag * velocity) * h
    position = position + velocity * h
    return position, velocity, age + h


def ordered_births(free: np.ndarray, budget: int) -> np.ndarray:
    """Ordered allocation: the lowest-index free slots, up to the budget."""
    return np.flatnonzero(free)[:budget]


def budgets(rate: float, dt: float, steps: int) -> list[int]:
    """Births allowed per step with the fractional carry (float64, as the host computes it)."""
    carry, out = 0.0, []
    for _ in range(steps):
        carry += rate * dt
        b = math.floor(carry)
        carry -= b
        out.append(b)
    return out
