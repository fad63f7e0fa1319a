"""Point caches: the particles of emitters, particle-life swarms, cloths and fluids as npz, PLY
or USD.

What a point set holds (``points_of``): every array that ``Engine.state(name)`` returns for the
entity with one row per point (so custom attributes come along by name, whatever they are), the
rows of alive particles only (emitters: ``age < lifetime``), in slot order, plus

- ``id``: the slot (uint32): a particle's pool slot, a swarm's particle index, a cloth's vertex
  ``j * nx + i``; the same id in two frames is the same slot (an emitter reuses a dead slot);
- ``color`` for emitters: linear RGBA float32, the component's colour stops and alpha curve
  evaluated on the host at ``age / lifetime`` (exactly, where the draw samples a 64-entry table of
  the same curve). Per-particle colour variation, lighting and a WGSL ``color`` modifier are
  draw-time effects and are not in it.

Cloth grids come flattened row by row (``position[j, i]`` is row ``j * nx + i``).

Writers: ``write_npz`` (one array per field), ``write_ply`` (binary little-endian PLY written
here with numpy: a header and one packed record per point, so no dependency; plyfile reads it),
and ``UsdCache`` (UsdGeom.Points per entity, time-sampled, one file per run; needs usd-core).
Every file is written atomically (output.write_atomically).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from emberfx.app.output import write_atomically
from emberfx.core.errors import EmberError
from emberfx.model.colors import linear_color, linear_to_srgb

# the families whose state() has positions
POINT_FAMILIES = ("emitter", "particle_life", "cloth", "fluid")
FORMATS = ("npz", "ply", "usd")
USD_HINT = "pip install 'emberfx[usd]' (usd-core)"

# numpy dtype kind and size -> PLY scalar type; 64-bit integers have no PLY type
_PLY_TYPES = {("f", 4): "float", ("f", 8): "double", ("i", 1): "char", ("u", 1): "uchar",
              ("i", 2): "short", ("u", 2): "ushort", ("i", 4): "int", ("u", 4): "uint",
              ("b", 1): "uchar"}
_AXES = "xyzw"


def exportable(engine) -> list[str]:
    """The entities with points, in scene order."""
    return [name for name in engine.entity_names()
            if any(key in POINT_FAMILIES for key in engine.components_of(name))]


def file_stem(entity: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", entity).strip("._") or "entity"


def points_of(engine, name: str) -> dict[str, np.ndarray]:
    """The entity's points now (see the module's doc): ``id``, ``position`` first."""
    state = engine.state(name)
    lead = np.asarray(state["position"]).shape[:-1]   # (N,), or (ny, nx) for a cloth
    count = math.prod(lead)
    rows: dict[str, np.ndarray] = {}
    for key, value in state.items():
        array = np.asarray(value)
        if array.shape[:len(lead)] == lead:   # one row per point (others are not point data)
            rows[key] = array.reshape((count,) + array.shape[len(lead):])
    alive = rows.pop("alive", None)
    keep = np.flatnonzero(alive) if alive is not None else np.arange(count)
    out = {"id": keep.astype(np.uint32), "position": rows.pop("position")[keep]}
    out.update((key, np.ascontiguousarray(value[keep])) for key, value in rows.items())
    emitter = engine.components_of(name).get("emitter")
    if emitter is not None and "age" in out and "lifetime" in out:
        over_life = colors_over_life(emitter, out["age"], out["lifetime"])
        carried = out.get("color")   # a colour per particle (p.color), which it multiplies
        out["color"] = over_life if carried is None else over_life * carried
    return out


def colors_over_life(emitter, age: np.ndarray, lifetime: np.ndarray) -> np.ndarray:
    """(n, 4) float32 linear RGBA: the colour stops at ``age / lifetime`` (linear light, as the
    draw interpolates them) times the alpha curve (evenly spaced values over life)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(np.nan_to_num(age / lifetime, nan=1.0, posinf=1.0), 0.0, 1.0)
    stops = emitter.color_stops()
    ts = np.array([stop[0] for stop in stops], np.float64)
    rgba = np.array([linear_color(stop[1]) for stop in stops], np.float64)
    color = np.stack([np.interp(t, ts, rgba[:, k]) for k in range(4)], axis=1)
    curve = list(emitter.alpha_curve)
    color[:, 3] *= np.interp(t, np.linspace(0.0, 1.0, len(curve)), curve)
    return color.astype(np.float32)


# ------------------------------------------------------------------------------------ npz

def write_npz(path: Path, points: dict[str, np.ndarray]) -> Path:
    savez: Any = np.savez   # numpy's stubs type its **arrays as its keyword options

    def write(tmp):
        with open(tmp, "wb") as stream:
            savez(stream, **points)
    return write_atomically(path, write)


# ------------------------------------------------------------------------------------ ply

def _ply_columns(points: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """PLY vertex properties: x y z, vx vy vz, red green blue alpha (uchar: sRGB colour and
    straight alpha, as viewers expect), then every other field by name (vectors as
    name_x, name_y, ...)."""
    columns: list[tuple[str, np.ndarray]] = []
    position = points["position"]
    for k in range(3):   # a 2D swarm lies in z = 0
        columns.append((_AXES[k], position[:, k] if k < position.shape[1]
                        else np.zeros(len(position), position.dtype)))
    for key, array in points.items():
        if key == "position":
            continue
        if key == "color":
            srgb = linear_to_srgb(array[:, :3])
            bytes_ = np.round(np.clip(np.concatenate([srgb, array[:, 3:4]], axis=1), 0, 1) * 255)
            columns += [(channel, bytes_[:, k].astype(np.uint8))
                        for k, channel in enumerate(("red", "green", "blue", "alpha"))]
            continue
        if array.dtype.kind == "b":
            array = array.astype(np.uint8)
        elif array.dtype.kind == "f" and array.dtype.itemsize == 2:
            array = array.astype(np.float32)   # PLY has no half floats
        elif array.dtype.kind in "iu" and array.dtype.itemsize == 8:
            array = array.astype(np.float64)   # PLY has no 64-bit integers
        prefix = "v" if key == "velocity" else f"{key}_"
        if array.ndim == 1:
            columns.append((key, array))
        else:
            flat = array.reshape(len(array), math.prod(array.shape[1:]))   # 0 rows: no -1
            names = _AXES if flat.shape[1] <= 4 else [str(k) for k in range(flat.shape[1])]
            columns += [(f"{prefix}{names[k]}", flat[:, k]) for k in range(flat.shape[1])]
    return columns


def ply_bytes(points: dict[str, np.ndarray], comment: str = "") -> bytes:
    """A binary little-endian PLY file with one ``vertex`` element holding ``points``."""
    columns = _ply_columns(points)
    count = len(points["position"])
    dtype = np.dtype([(name, array.dtype.newbyteorder("<")) for name, array in columns])
    records = np.empty(count, dtype)
    header = ["ply", "format binary_little_endian 1.0"]
    header += [f"comment {line}" for line in comment.splitlines() if line.strip()]
    header.append(f"element vertex {count}")
    for name, array in columns:
        records[name] = array
        header.append(f"property {_PLY_TYPES[array.dtype.kind, array.dtype.itemsize]} {name}")
    header.append("end_header")
    return ("\n".join(header) + "\n").encode("ascii") + records.tobytes()


def write_ply(path: Path, points: dict[str, np.ndarray], comment: str = "") -> Path:
    data = ply_bytes(points, comment)
    return write_atomically(path, lambda tmp: Path(tmp).write_bytes(data))


# ------------------------------------------------------------------------------------ usd

def require_usd():
    """pxr's modules, or a one-line EmberError saying how to install them."""
    try:
        from pxr import Sdf, Usd, UsdGeom, Vt
    except ImportError:
        raise EmberError(f"USD export needs usd-core: {USD_HINT}") from None
    return Sdf, Usd, UsdGeom, Vt


class UsdCache:
    """One USD stage for a whole run: a UsdGeom.Points prim per entity (/Emberfx/<entity>) whose
    points, velocities, ids and primvars (displayColor and displayOpacity from ``color``; every
    other field under its name) are time-sampled at the simulation step. The stage is built in
    memory and written at ``save`` (atomically); time codes are steps, at 1 / fixed_dt per
    second; Y up, one world unit a metre."""

    def __init__(self, path: Path, steps_per_second: float):
        self.Sdf, Usd, self.UsdGeom, self.Vt = require_usd()
        self.path = Path(path)
        self.stage = Usd.Stage.CreateInMemory()
        self.UsdGeom.SetStageUpAxis(self.stage, self.UsdGeom.Tokens.y)
        self.UsdGeom.SetStageMetersPerUnit(self.stage, 1.0)
        self.stage.SetTimeCodesPerSecond(steps_per_second)
        self.stage.SetFramesPerSecond(steps_per_second)
        root = self.UsdGeom.Xform.Define(self.stage, "/Emberfx").GetPrim()
        self.stage.SetDefaultPrim(root)
        self.prims: dict[str, Any] = {}   # UsdGeom.Points by entity
        self.times: list[int] = []

    def add(self, step: int, entity: str, points: dict[str, np.ndarray]) -> None:
        UsdGeom, Vt = self.UsdGeom, self.Vt
        prim = self.prims.get(entity)
        if prim is None:
            path = f"/Emberfx/{self._prim_name(entity)}"
            prim = self.prims[entity] = UsdGeom.Points.Define(self.stage, path)
        if not self.times or self.times[-1] != step:
            self.times.append(step)
        position = points["position"].astype(np.float32)
        if position.shape[1] == 2:   # a 2D swarm lies in z = 0
            position = np.concatenate([position, np.zeros((len(position), 1), np.float32)], 1)
        prim.GetPointsAttr().Set(Vt.Vec3fArray.FromNumpy(position), step)
        prim.GetIdsAttr().Set(Vt.Int64Array.FromNumpy(points["id"].astype(np.int64)), step)
        primvars = UsdGeom.PrimvarsAPI(prim)
        for key, array in points.items():
            if key in ("position", "id"):
                continue
            if key == "velocity" and array.shape[1] == 3:
                prim.GetVelocitiesAttr().Set(Vt.Vec3fArray.FromNumpy(array.astype(np.float32)),
                                             step)
            elif key == "color":
                prim.CreateDisplayColorPrimvar(UsdGeom.Tokens.vertex).Set(
                    Vt.Vec3fArray.FromNumpy(np.ascontiguousarray(array[:, :3])), step)
                prim.CreateDisplayOpacityPrimvar(UsdGeom.Tokens.vertex).Set(
                    Vt.FloatArray.FromNumpy(np.ascontiguousarray(array[:, 3])), step)
            else:
                type_name, value = self._typed(array)
                primvars.CreatePrimvar(self._prim_name(key), type_name,
                                       UsdGeom.Tokens.vertex).Set(value, step)

    def _typed(self, array: np.ndarray):
        Sdf, Vt = self.Sdf, self.Vt
        if array.dtype.kind in "iub":
            if array.ndim == 1:
                return Sdf.ValueTypeNames.IntArray, Vt.IntArray.FromNumpy(array.astype(np.int32))
            array = array.astype(np.float32)   # integer vectors: USD has int2..4, rarely read
        flat = np.ascontiguousarray(
            array.reshape(len(array), math.prod(array.shape[1:])).astype(np.float32))
        kinds = {1: ("FloatArray", "FloatArray"), 2: ("Float2Array", "Vec2fArray"),
                 3: ("Float3Array", "Vec3fArray"), 4: ("Float4Array", "Vec4fArray")}
        if flat.shape[1] not in kinds:
            raise EmberError(f"USD export: field with {flat.shape[1]} components per point "
                             f"(expected 1 to 4)")
        type_name, vt_name = kinds[flat.shape[1]]
        data = flat[:, 0] if flat.shape[1] == 1 else flat
        return getattr(Sdf.ValueTypeNames, type_name), getattr(Vt, vt_name).FromNumpy(data)

    @staticmethod
    def _prim_name(name: str) -> str:
        from pxr import Tf

        return Tf.MakeValidIdentifier(name)

    def save(self) -> Path:
        if self.times:
            self.stage.SetStartTimeCode(self.times[0])
            self.stage.SetEndTimeCode(self.times[-1])

        def export(tmp):
            if not self.stage.GetRootLayer().Export(str(tmp)):
                raise EmberError(f"cannot write {self.path}: USD could not export the stage")
        return write_atomically(self.path, export)
