"""What the host writes for a gas: its GasParams, its sources and its multigrid levels (layouts
read from shaders/gas/types.wgsl), and the conversions between the faces the GPU keeps and the
cell-centred arrays users read and write."""

from __future__ import annotations

import functools

import numpy as np

from emberfx.core import wgsl
from emberfx.core.layout import struct_dtype
from emberfx.model.colors import linear_color
from emberfx.systems.gas import blackbody
from emberfx.systems.gas.component import MAX_SOURCES, Gas

TYPES = "gas/types.wgsl"
PARAMS = struct_dtype(TYPES, "GasParams")
SOURCE = struct_dtype(TYPES, "GasSource")
LEVEL = struct_dtype(TYPES, "GasLevel")
VOLUME = "gas/volume.wgsl"
GLOW = "gas/glow.wgsl"
LOOK = struct_dtype("gas/look.wgsl", "GasLook")
LIGHT_STEPS = 6
"""steps of the march toward the light from each sample (each a cell long)"""
TABLE_STOP = 12000.0
"""kelvin of the blackbody table's last entry (its first and the spacing: the volume pass's
TABLE_START and TABLE_STEP)"""


@functools.cache
def blackbody_table() -> bytes:
    return blackbody.table(float(wgsl.constant(GLOW, "TABLE_START")),
                           float(wgsl.constant(GLOW, "TABLE_STEP")), TABLE_STOP).tobytes()
BOUNDARIES = wgsl.enum_constants(TYPES, "BOUNDARY")
SHAPES = wgsl.enum_constants(TYPES, "SHAPE")


def face_counts(n: tuple[int, int, int]) -> tuple[int, int, int]:
    """Faces of the u, v and w runs of a grid of n = (nx, ny, nz) cells."""
    nx, ny, nz = n
    return (nx + 1) * ny * nz, nx * (ny + 1) * nz, nx * ny * (nz + 1)


def level_cells(c: Gas) -> list[tuple[int, int, int]]:
    """Cells per axis of each multigrid level, level 0 the grid."""
    nx, ny, nz = c.resolution
    return [(nx >> k, ny >> k, nz >> k) for k in range(c.levels)]


def level_slots(n: tuple[int, int, int]) -> int:
    """The values a multigrid level of n cells per axis keeps: both colours' halves of
    ceil(nx / 2) slots a row (shaders/gas/types.wgsl's level_slot)."""
    nx, ny, nz = n
    return 2 * ((nx + 1) // 2) * ny * nz


def solid_words(n: tuple[int, int, int]) -> int:
    """The u32 words of level 0's solid bits, one bit per slot (shaders/gas/solids.wgsl)."""
    return -(-level_slots(n) // 32)


def params_record(c: Gas, dt: float, time: float = 0.0, forces: int = 0) -> bytes:
    """The GasParams of ``c`` for a step of ``dt`` starting at ``time`` with ``forces`` force
    records."""
    rec = np.zeros((), PARAMS)
    n = c.resolution
    rec["cells"] = (*n, BOUNDARIES[c.boundary])
    rec["lower"] = (*c.lower, c.edge)
    rec["motion"] = (dt, c.buoyancy, c.weight, c.vorticity)
    rec["burn"] = (c.burn_rate, c.ignition, c.heat, c.smoke_per_fuel)
    rec["decay"] = (c.cooling, c.dissipation, time, 0.0)
    rec["counts"] = (len(c.sources), int(np.prod(n)), sum(face_counts(n)), forces)
    return rec.tobytes()


def sources_record(c: Gas) -> bytes:
    rows = np.zeros(MAX_SOURCES, SOURCE)
    for row, s in zip(rows, c.sources):
        shape = s.shape
        row["center"] = (*s.position, 0.0)
        row["extent"] = (*(0.5 * v for v in shape.size), shape.radius)
        row["amounts"] = (s.density, s.temperature, s.fuel, float(any(s.velocity)))
        row["velocity"] = (*s.velocity, float(SHAPES[shape.kind]))
    return rows.tobytes()


def look_record(c: Gas, entries: int) -> bytes:
    """The GasLook of ``c`` for a blackbody table of ``entries``."""
    look = c.look
    rec = np.zeros((), LOOK)
    rec["smoke"] = (*linear_color(look.smoke_color)[:3], look.absorption)
    rec["light"] = (look.scattering, look.fire_intensity, look.kelvin_per_unit, float(entries))
    step = look.step if look.step is not None else 0.5 * c.edge
    rec["steps"] = (step, c.edge, float(LIGHT_STEPS), 0.0)
    rec["fire_light"] = (look.fire_light, look.fire_light_range, 0.0, 0.0)
    return rec.tobytes()


def levels_record(c: Gas) -> bytes:
    cells = level_cells(c)
    rows = np.zeros(len(cells), LEVEL)
    for k, (row, n) in enumerate(zip(rows, cells)):
        row["cells"] = (*n, int(np.prod(n)))
        row["spacing"] = ((c.edge * (1 << k)) ** 2, 0.0, 0.0, 0.0)
    return rows.tobytes()


def faces_from_centres(velocity: np.ndarray, periodic: bool) -> np.ndarray:
    """The face components (u, v and w runs, concatenated) of a cell-centred velocity of shape
    (nz, ny, nx, 3): each face the mean of the two cells it joins (wrapped when periodic, the
    one cell at a side otherwise)."""
    out = []
    for a, axis in enumerate((2, 1, 0)):   # x, y, z are the arrays' last, middle, first axes
        comp = velocity[..., a]
        n = comp.shape[axis]
        lo = np.take(comp, [(k - 1) % n if periodic else max(k - 1, 0) for k in range(n + 1)],
                     axis=axis)
        hi = np.take(comp, [k % n if periodic else min(k, n - 1) for k in range(n + 1)],
                     axis=axis)
        out.append((0.5 * (lo + hi)).astype(np.float32).reshape(-1))
    return np.concatenate(out)


def centres_from_faces(faces: np.ndarray, n: tuple[int, int, int]) -> np.ndarray:
    """(nz, ny, nx, 3): each cell's velocity, the mean of its two faces per axis."""
    nx, ny, nz = n
    u_count, v_count, _ = face_counts(n)
    u = faces[:u_count].reshape(nz, ny, nx + 1)
    v = faces[u_count:u_count + v_count].reshape(nz, ny + 1, nx)
    w = faces[u_count + v_count:].reshape(nz + 1, ny, nx)
    return np.stack([0.5 * (u[:, :, 1:] + u[:, :, :-1]), 0.5 * (v[:, 1:] + v[:, :-1]),
                     0.5 * (w[1:] + w[:-1])], -1)
