"""A numpy Life-like automaton (np.roll neighbour count), the oracle for the GPU Life passes."""

from __future__ import annotations

import numpy as np

from emberfx.systems.life_rules import parse_rule


def neighbours(cells: np.ndarray, torus: bool) -> np.ndarray:
    c = cells.astype(np.uint8)
    if torus:
        return sum(np.roll(np.roll(c, dy, axis=0), dx, axis=1)
                   for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0))
    padded = np.pad(c, 1)
    h, w = c.shape
    return sum(padded[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0))


def step(cells: np.ndarray, rule: str = "B3/S23", torus: bool = True, generations: int = 1):
    birth, survive = parse_rule(rule)
    born = np.array([(birth >> n) & 1 for n in range(9)], bool)
    stay = np.array([(survive >> n) & 1 for n in range(9)], bool)
    for _ in range(generations):
        n = neighbours(cells, torus)
        cells = np.where(cells, stay[n], born[n])
    return cells
