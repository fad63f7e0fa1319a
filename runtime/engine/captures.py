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

import numpy as np

from emberfx.core.frame_graph import Phase

RENDER_ONLY = frozenset({Phase.RENDER})


def hdr_frame(engine, renderer, *, transparent: bool = False) -> np.ndarray:
    """(h, w, 4) float16: the scene target after the RENDER phase (a blocking read)."""
    engine.draw_to(renderer.output_texture, transparent=transparent, phases=RENDER_ONLY)
    return renderer.read_scene()


def depth_frame(engine, renderer) -> np.ndarray:
    """(h, w) float32: linear view depth of the current state in world units, inf where empty."""
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
