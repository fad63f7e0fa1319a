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


# ----------------------------------------------------------------------------------- forces

def hashed_unit(key):
    u = (pcg_hash(key) >> 8).astype(np.float64) / 16777216.0
    v = (pcg_hash(np.uint32(key) ^ np.uint32(0x9E3779B9)) >> 8).astype(np.float64) / 16777216.0
    z = 1.0 - 2.0 * u
    r = np.sqrt(max(0.0, 1.0 - z * z))
    phi = 2.0 * math.pi * v
    return np.array([r * math.cos(phi), r * math.sin(phi), z])


def turbulence(x, frequency, strength, octaves):
    """Curl of a sum of sine-wave vector potentials (see shaders/common/forces.wgsl)."""
    acc = np.zeros_like(x)
    f, amp = frequency, strength
    for o in range(octaves):
        for k in range(3):
            key = o * 3 + k
            w = hashed_unit(key * 2 + 1) * f
            d = hashed_unit(key * 2 + 2)
            phase = 2.0 * math.pi * float(pcg_hash(key + 77) >> 8) / 16777216.0
            acc += amp * np.cos(x @ w + phase)[:, None] * np.cross(w, d) / f
        f *= 2.0
        amp *= 0.5
    return acc


def acceleration(x, v, forces):
    """Sum of force components (systems/forces/forces.py) at positions x with velocities v."""
    a = np.zeros_like(x)
    for f in forces:
        name = type(f).__name__
        if name == "Attractor":
            r = np.asarray(f.position) - x
            d2 = (r * r).sum(axis=1)
            s = d2 + f.softening ** 2
            pull = f.strength * r / (s * np.sqrt(s))[:, None]
            if f.radius > 0:
                pull[d2 > f.radius ** 2] = 0.0
            a += pull
        elif name == "KillZone":
            continue
        elif f.kind == "gravity":
            a += np.asarray(f.acceleration)
        elif f.kind == "drag":
            a -= f.coefficient * v
        elif f.kind == "vortex":
            axis = np.asarray(f.axis) / np.linalg.norm(f.axis)
            r = x - np.asarray(f.center)
            radial = r - np.outer(r @ axis, axis)
            a += f.strength * np.cross(axis, r) - f.pull * radial
        elif f.kind == "turbulence":
            a += turbulence(x, f.frequency, f.strength, f.octaves)
    return a


def kills(x, forces):
    dead = np.zeros(len(x), bool)
    for f in forces:
        name = type(f).__name__
        if name == "Attractor" and f.kill_radius > 0:
            dead |= ((np.asarray(f.position) - x) ** 2).sum(axis=1) < f.kill_radius ** 2
        elif name == "KillZone" and f.shape == "sphere":
            dead |= ((x - np.asarray(f.center)) ** 2).sum(axis=1) < f.radius ** 2
        elif name == "KillZone":
            dead |= (np.abs(x - np.asarray(f.center)) < np.asarray(f.half_size)).all(axis=1)
    return dead


def integrate_with_forces(position, velocity, dt, substeps, gravity, drag, forces):
    """Semi-implicit Euler with substeps; returns (position, velocity, killed)."""
    h = dt / substeps
    x, v = position.copy(), velocity.copy()
    killed = np.zeros(len(x), bool)
    for _ in range(substeps):
        live = ~killed
        a = np.asarray(gravity) - drag * v[live] + acceleration(x[live], v[live], forces)
        v[live] = v[live] + a * h
        x[live] = x[live] + v[live] * h
        killed[live] |= kills(x[live], forces)
    return x, v, killed
