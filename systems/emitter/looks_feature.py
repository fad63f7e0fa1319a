"""The looks, an emitter feature every emitter uses: the records its draws read per emitter.

What the feature adds, and where (emitter/features.py lists the features):
  records   ``looks``: colour and size over life baked into LOOK_SAMPLES samples (Looks,
            emitter/types.wgsl; bake_looks), and ``sprite_look``: the sprites'
            orientation, flipbook and softness (SpriteLook, emitter/draw.wgsl;
            looks.pack_sprite_look), RECORD bytes apart. Each is packed again only after an
            edit of a field it is packed from (a script moving the emitter edits neither).
The simulation passes and their shaders are untouched.
"""

from __future__ import annotations

import numpy as np

from emberfx.model.colors import linear_color
from emberfx.systems.emitter import looks
from emberfx.systems.emitter.feature import EmitterFeature, Record
from emberfx.systems.emitter.structs import LOOK_SAMPLES, LOOKS, RECORD


def bake_looks(c) -> bytes:
    """Colour (interpolated between stops in linear light) times the alpha curve, and the size
    curve, sampled at LOOK_SAMPLES evenly spaced points over life."""
    t = np.linspace(0.0, 1.0, LOOK_SAMPLES)
    stops = c.color_stops()
    ts = np.array([s[0] for s in stops])
    rgba = np.array([linear_color(s[1]) for s in stops])
    color = np.stack([np.interp(t, ts, rgba[:, k]) for k in range(4)], axis=1)
    color[:, 3] *= _curve(t, c.alpha_curve)
    record = np.zeros((), LOOKS)
    record["color"] = color
    record["size"] = _curve(t, c.size_curve).reshape(-1, 4)
    return record.tobytes()


def _curve(t: np.ndarray, values: list[float]) -> np.ndarray:
    """Evenly spaced values over life, linearly interpolated (one value: constant)."""
    return np.interp(t, np.linspace(0.0, 1.0, len(values)), values)


RECORDS = {"looks": Record(LOOKS.itemsize, LOOKS.itemsize),
           "sprite_look": Record(RECORD, looks.SPRITE_LOOK.itemsize)}


class LooksFeature(EmitterFeature):
    """The feature as emitter/features.py runs it."""
    name = "looks"

    def applies(self, component) -> bool:
        return True

    def batch_key(self, component, resolve) -> tuple:
        return ()   # (every emitter's looks are records of its own)

    def records(self) -> dict[str, Record]:
        return RECORDS

    def record_key(self, component, key: str) -> tuple:
        c = component
        if key == "looks":
            return (repr(c.color), tuple(c.alpha_curve), tuple(c.size_curve))
        return looks.sprite_look_key(c)

    def pack_record(self, component, key: str) -> bytes:
        return bake_looks(component) if key == "looks" else looks.pack_sprite_look(component)
