"""python-lifelib on the soup `emberfx bench life` runs, for comparison in the same run.

lifelib is what a Python user reaches for to run Life fast on a CPU (Adam Goucher's C++ engine,
compiled on first use). It is not a dependency: this module is used only when `import lifelib`
works. lifelib evolves an unbounded plane, not a torus or a dead-edged grid, so the rate counts the
cells of the soup's initial box per generation, as the GPU rows count their grid.
"""

from __future__ import annotations

import time

import numpy as np

from emberfx.bench.harness import stdout_to_stderr


def lifelib_rate(cells: np.ndarray, generations: int) -> float:
    """Cell updates per second of lifelib's B3/S23 on ``cells`` (a bool (h, w) grid)."""
    with stdout_to_stderr():   # its build messages go to stdout
        import lifelib

        session = lifelib.load_rules("b3s23")
    tree = session.lifetree(memory=2000)
    pattern = tree.pattern("", "b3s23")
    ys, xs = np.nonzero(cells)
    if len(xs):
        pattern[np.stack([xs, ys], axis=1).astype(np.int64)] = np.ones(len(xs), np.int64)
    start = time.perf_counter()
    evolved = pattern[generations]
    _ = evolved.population   # reading it forces the evolution
    seconds = time.perf_counter() - start
    return cells.size * generations / seconds
