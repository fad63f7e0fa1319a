"""The ``label`` component: text set in the world, e.g. a caption under a panel.

Kept apart from the system (systems/label/system.py) so that validating a scene needs no GPU code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from emberfx.model.colors import check_colors
from emberfx.model.components import Tracked, live, rebuild
from emberfx.model.registry import component

MAX_CHARACTERS = 200


@component("label")
@dataclass(slots=True)
class Label(Tracked):
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_CHARACTERS)] = rebuild("label")
    """one line of text, set in pillow's built-in sans-serif face (reload)"""
    position: tuple[float, float, float] = live((0.0, 0.0, 0.0))
    """world centre of the text's box; the text lies in the x-y plane, reading along +x"""
    height: Annotated[float, msgspec.Meta(gt=0.0, le=1e6)] = live(0.2)
    """world units: the height of the line (capitals and descenders); the width follows the
    text"""
    color: str = rebuild("#ffffff")
    """the letters' colour, added to what is behind them (the space between adds nothing)
    (reload)"""

    def __post_init__(self):
        if "\n" in self.text or not self.text.strip():
            raise ValueError(f"text: expected one line with a visible character, found "
                             f"{self.text!r}")
        check_colors(self, "color")
