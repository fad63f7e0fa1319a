"""The sRGB transfer functions, written from the sRGB standard independently of emberfx: the
oracles' side of colours blended in linear light and written as 8-bit sRGB."""

from __future__ import annotations

import numpy as np


def decode(levels) -> np.ndarray:
    """8-bit sRGB levels -> linear light."""
    c = np.asarray(levels, np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def encode(linear) -> np.ndarray:
    """Linear light -> 8-bit sRGB levels (clipped to [0, 1] first), as ints."""
    v = np.clip(np.asarray(linear, np.float64), 0.0, 1.0)
    return np.round(255 * np.where(v <= 0.0031308, 12.92 * v,
                                   1.055 * v ** (1 / 2.4) - 0.055)).astype(int)
