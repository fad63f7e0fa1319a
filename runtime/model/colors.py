"""Colours as scene files write them ('#rrggbb', '#rrggbbaa' or the short '#rgb', '#rgba')
and their linear-light values."""

from __future__ import annotations

import re

import numpy as np

# 3, 4, 6 or 8 hex digits; the short forms repeat each digit ('#f80c' is '#ff8800cc'), as CSS.
_HEX = re.compile(r"#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")
COLOR_FORMS = "'#rrggbb', '#rrggbbaa', '#rgb' or '#rgba'"


def parse_color(text: str) -> tuple[float, float, float, float]:
    """'#rrggbb[aa]' or '#rgb[a]' -> (r, g, b, a) in [0, 1], sRGB-encoded as written."""
    if not isinstance(text, str) or not _HEX.fullmatch(text):
        raise ValueError(f"expected a colour {COLOR_FORMS}, found {text!r}")
    digits = text[1:]
    if len(digits) <= 4:
        digits = "".join(d + d for d in digits)
    values = [int(digits[i:i + 2], 16) / 255.0 for i in range(0, len(digits), 2)]
    if len(values) == 3:
        values.append(1.0)
    r, g, b, a = values
    return r, g, b, a


def check_colors(owner, *names: str) -> None:
    """For a component's __post_init__: raise ValueError("<field>: expected ...") for the first
    named field that is set but is not a colour (a list field is checked item by item)."""
    for name in names:
        value = getattr(owner, name)
        items = enumerate(value) if isinstance(value, list) else [(None, value)]
        for index, item in items:
            if item is None:
                continue
            try:
                parse_color(item)
            except ValueError as exc:
                where = name if index is None else f"{name}[{index}]"
                raise ValueError(f"{where}: {exc}") from None


def srgb_to_linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def linear_to_srgb(linear: np.ndarray) -> np.ndarray:
    """Linear-light values -> sRGB-encoded ones in [0, 1] (float64), clipped to [0, 1] first."""
    c = np.clip(np.asarray(linear, np.float64), 0.0, 1.0)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * np.power(c, 1.0 / 2.4) - 0.055)


def linear_color(text: str) -> tuple[float, float, float, float]:
    """A colour (see parse_color) -> linear-light (r, g, b) and straight alpha, for blending
    on the GPU."""
    r, g, b, a = parse_color(text)
    return (srgb_to_linear(r), srgb_to_linear(g), srgb_to_linear(b), a)
