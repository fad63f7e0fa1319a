"""Captures for compositing: the HDR scene target and the depth pass of the current state.

Both draw the RENDER phase alone (no post effects: bloom, tonemap and edges come after it), so:

- ``hdr_frame``: the scene target as drawn, linear-light RGBA float16, before tonemapping. In the
  normal mode alpha is the background's (1); in the transparent mode the target starts at
  (0, 0, 0, 0), so RGB is premultiplied colour over the drawn alpha and additive light carries no
  alpha (premultiplied "emission", which an `over` in a compositor adds on top of the plate).
- ``depth_frame``: linear view depth in world units (distance along the camera's viewing axis,
  not along the ray), +inf where nothing wrote depth. Only depth-writing draws count: opaque
  geometry (cloth, meshes, quads) and opaque sprites; additive and alpha sprites write none.
"""

from __future__ import annotations

import os

import numpy as np

from emberfx.core.errors import DeviceLimitError
from emberfx.core.frame_graph import Phase
from emberfx.core.readback import ROW_ALIGN

RENDER_ONLY = frozenset({Phase.RENDER})

# What a capture reads back, a pixel: rgba8 (render), rgba16float (render_hdr), depth32float
CAPTURES = {"image": (4, "the image"), "hdr": (8, "the HDR frame"), "depth": (4, "the depth")}
# Copies of a capture the host holds at once: the mapped staging data, the packed rows, the
# returned array and the writer's own (a PNG's image, an EXR's channels)
HOST_COPIES = 4


def hdr_frame(engine, renderer, *, transparent: bool = False) -> np.ndarray:
    """(h, w, 4) float16: the scene target after the RENDER phase (a blocking read)."""
    check_captures(engine.gpu, renderer.size, ("hdr",))
    engine.draw_to(renderer.output_texture, transparent=transparent, phases=RENDER_ONLY)
    return renderer.read_scene()


def depth_frame(engine, renderer) -> np.ndarray:
    """(h, w) float32: linear view depth of the current state in world units, inf where empty."""
    check_captures(engine.gpu, renderer.size, ("depth",))
    engine.draw_to(renderer.output_texture, phases=RENDER_ONLY)
    w, h = renderer.size
    return linear_depth(renderer.read_depth(), engine.camera.projection_matrix(w / h))


def linear_depth(ndc_depth: np.ndarray, projection: np.ndarray) -> np.ndarray:
    """Distance along the view axis for each NDC depth (WebGPU's 0..1, 1 = far plane or
    cleared), by the projection's inverse: both camera kinds map view z to depth alone."""
    inverse = np.linalg.inv(np.asarray(projection, np.float64))
    z = ndc_depth.astype(np.float64)
    view_z = inverse[2, 2] * z + inverse[2, 3]
    view_w = inverse[3, 2] * z + inverse[3, 3]
    depth = -(view_z / view_w)
    return np.where(ndc_depth >= 1.0, np.inf, depth).astype(np.float32)


def byte_text(n: float) -> str:
    """A byte count for a message: '512 bytes', '3.2 KiB', '1.5 MiB', '2.00 GiB'."""
    if n < 1024:
        return f"{n:.0f} bytes"
    if n < 2**20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 2**20:.1f} MiB" if n < 2**30 else f"{n / 2**30:,.2f} GiB"


def available_memory() -> int | None:
    """Bytes of host memory available now (Linux: MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_captures(gpu, size: tuple[int, int], kinds) -> None:
    """A one-line DeviceLimitError, before anything is allocated, when reading back the
    captures ``kinds`` (keys of CAPTURES) at ``size`` cannot work: the staging buffer would
    pass the device's max_buffer_size, or the host copies its available memory."""
    w, h = size
    limit = gpu.limits["max-buffer-size"]
    for kind in kinds:
        per_pixel, what = CAPTURES[kind]
        staging = (w * per_pixel + ROW_ALIGN - 1) // ROW_ALIGN * ROW_ALIGN * h
        if staging > limit:
            most = limit // (ROW_ALIGN * ((w * per_pixel + ROW_ALIGN - 1) // ROW_ALIGN))
            raise DeviceLimitError(
                f"{what} at {w}x{h} needs a readback buffer of {staging} bytes ({per_pixel} "
                f"bytes a pixel), over this device's max_buffer_size of {limit} ({gpu.label}): "
                f"at this width, at most {most} rows")
    host = HOST_COPIES * w * h * sum(CAPTURES[kind][0] for kind in kinds)
    free = available_memory()
    if free is not None and host > free:
        names = " and ".join(CAPTURES[kind][1] for kind in kinds)
        raise DeviceLimitError(
            f"{names} at {w}x{h} need about {byte_text(host)} "
            f"of memory ({HOST_COPIES} copies while read back and written), "
            f"{byte_text(free)} is available: render a smaller --size")
