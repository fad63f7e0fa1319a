"""The gallery's contact sheet (docs/gallery.png): every example scene's picture on one image,
in a grid, each tile labelled with the scene's name, on a dark background.

The sheet is made from the pictures already rendered (docs/gallery/<scene>.png), never by
rendering again: each tile is its picture scaled to TILE_WIDTH pixels wide at the picture's
aspect (Lanczos), framed by one pixel of FRAME_COLOR, in COLUMNS columns, scenes in name
order. A row is as tall as its tallest
tile; a shorter tile sits at the middle of its row's height, its label under the row's tiles.

The labels are set in DejaVu Sans Bold where the system has it, else in Pillow's own font, at
LABEL_SIZE pixels: at the sheet's full size a name reads at a glance, light grey on the dark
ground.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["BACKGROUND", "COLUMNS", "TILE_WIDTH", "Tile", "layout", "contact_sheet",
           "write_contact_sheet"]

TILE_WIDTH = 240
"""pixels: every tile is this wide (half a gallery picture)"""
COLUMNS = 4
"""tiles in a row"""
GAP = 12
"""pixels between tiles and round the sheet's edge"""
LABEL_SIZE = 17
"""pixels: the labels' font size"""
LABEL_BAND = 28
"""pixels under a row of tiles that hold their labels"""
BACKGROUND = (17, 18, 22)
"""the sheet's colour (RGB), darker than the scenes' own backgrounds"""
LABEL_COLOR = (226, 228, 234)
"""the labels' colour (RGB)"""
FRAME_COLOR = (58, 61, 72)
"""the one-pixel frame round each tile (RGB): a dark picture's edge shows on the dark ground"""
FONTS = ("DejaVuSans-Bold.ttf", "DejaVuSans.ttf")
"""font files tried in order (Pillow looks in the system's font folders); then Pillow's own"""


@dataclass(frozen=True)
class Tile:
    """Where a scene's picture sits on the sheet: its top-left corner and size, and the top-left
    corner of its label."""

    name: str
    x: int
    y: int
    width: int
    height: int
    label_y: int


def tile_size(picture_size: tuple[int, int]) -> tuple[int, int]:
    """A picture's tile: TILE_WIDTH wide at the picture's aspect (at least one pixel high)."""
    width, height = picture_size
    return TILE_WIDTH, max(1, round(TILE_WIDTH * height / width))


def layout(sizes: dict[str, tuple[int, int]]) -> tuple[tuple[int, int], list[Tile]]:
    """The sheet's (width, height) and each tile's place, for pictures of ``sizes`` (scene name:
    picture (width, height)), in name order."""
    names = sorted(sizes)
    tiles: list[Tile] = []
    y = GAP
    for row in range(0, len(names), COLUMNS):
        members = names[row:row + COLUMNS]
        heights = {name: tile_size(sizes[name])[1] for name in members}
        tallest = max(heights.values())
        for column, name in enumerate(members):
            tiles.append(Tile(name, GAP + column * (TILE_WIDTH + GAP),
                              y + (tallest - heights[name]) // 2, TILE_WIDTH, heights[name],
                              y + tallest + 4))
        y += tallest + LABEL_BAND + GAP
    columns = min(COLUMNS, len(names))
    return (GAP + columns * (TILE_WIDTH + GAP), max(y, 2 * GAP)), tiles


def label_font():
    """DejaVu Sans (bold) at LABEL_SIZE where the system has it, else Pillow's own font."""
    from PIL import ImageFont

    for name in FONTS:
        try:
            return ImageFont.truetype(name, LABEL_SIZE)
        except OSError:
            continue
    return ImageFont.load_default(size=LABEL_SIZE)


def contact_sheet(pictures: dict[str, Path]) -> np.ndarray:
    """The sheet of ``pictures`` (scene name: its PNG) as an (h, w, 4) uint8 RGBA image."""
    from PIL import Image, ImageDraw

    images = {}
    for name, path in pictures.items():
        with Image.open(path) as image:
            images[name] = image.convert("RGB")
    size, tiles = layout({name: image.size for name, image in images.items()})
    sheet = Image.new("RGB", size, BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    font = label_font()
    for tile in tiles:
        scaled = images[tile.name].resize((tile.width, tile.height), Image.Resampling.LANCZOS)
        draw.rectangle((tile.x - 1, tile.y - 1, tile.x + tile.width, tile.y + tile.height),
                       outline=FRAME_COLOR)
        sheet.paste(scaled, (tile.x, tile.y))
        draw.text((tile.x + 2, tile.label_y), tile.name, font=font, fill=LABEL_COLOR)
    return np.asarray(sheet.convert("RGBA"))


def write_contact_sheet(target: str | os.PathLike, pictures: dict[str, Path]) -> Path:
    """Write the sheet of ``pictures`` as the PNG ``target``, whole or not at all."""
    from emberfx.app.output import write_png

    return write_png(target, contact_sheet(pictures))
