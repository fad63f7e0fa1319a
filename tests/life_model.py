"""A numpy Life-like automaton (np.roll neighbour count), the oracle for the GPU Life passes.

The rule string is read here with its own small parser (not the project's ``parse_rule``), so a
parsing mistake in the project cannot hide in the oracle as well.
"""

from __future__ import annotations

import numpy as np


def rule_sets(rule: str) -> tuple[frozenset[int], frozenset[int]]:
    """(birth counts, survival counts) of a Life-like rule: "B3/S23", "b36s23", "S23/B3" (letters in
    any case, the slash optional when both letters are there) or MCell "23/3" (survival / birth)."""
    text = rule.strip().upper()
    if "B" in text and "S" in text:
        b_at, s_at = text.index("B"), text.index("S")
        if b_at < s_at:
            birth, survive = text[b_at + 1:s_at], text[s_at + 1:]
        else:
            survive, birth = text[s_at + 1:b_at], text[b_at + 1:]
    else:
        survive, _, birth = text.partition("/")
    birth, survive = birth.strip("/ "), survive.strip("/ ")
    if not (birth + survive).isdigit() and (birth + survive) != "":
        raise ValueError(f"test model: cannot read rule {rule!r}")
    return frozenset(int(c) for c in birth), frozenset(int(c) for c in survive)


def neighbours(cells: np.ndarray, torus: bool) -> np.ndarray:
    c = cells.astype(np.uint8)
    if torus:
        return sum((np.roll(np.roll(c, dy, axis=0), dx, axis=1)
                    for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0)),
                   np.zeros_like(c))
    padded = np.pad(c, 1)
    h, w = c.shape
    return sum((padded[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dx, dy) != (0, 0)),
               np.zeros_like(c))


def step(cells: np.ndarray, rule: str = "B3/S23", torus: bool = True, generations: int = 1):
    birth, survive = rule_sets(rule)
    born = np.array([n in birth for n in range(9)], bool)
    stay = np.array([n in survive for n in range(9)], bool)
    for _ in range(generations):
        n = neighbours(cells, torus)
        cells = np.where(cells, stay[n], born[n])
    return cells
