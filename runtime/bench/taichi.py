"""The same explicit cloth model in Taichi, for `emberfx bench cloth` to compare against in the
same run (Taichi is what a Python simulation user would pick instead). Taichi is not a
dependency: this module is used only when `import taichi` works (install it for benchmarking)."""

import time

import numpy as np

from emberfx.bench.harness import stdout_to_stderr
from emberfx.bench.taichi_grid import CellSort, start_taichi


def taichi_cloth_rate(side: int, arch: str, substeps: int = 16, steps: int = 4) -> float:
    """Vertex-substeps per second of 12-spring explicit cloth on Taichi's ``arch``
    ("cpu", "vulkan", "cuda"); raises RuntimeError when the backend cannot start."""
    with stdout_to_stderr():
        return _rate(side, arch, substeps, steps)


def _rate(side: int, arch: str, substeps: int, steps: int) -> float:
    ti = start_taichi(arch)
    n = side
    x = ti.Vector.field(3, ti.f32, shape=(n, n))
    v = ti.Vector.field(3, ti.f32, shape=(n, n))
    x2 = ti.Vector.field(3, ti.f32, shape=(n, n))
    v2 = ti.Vector.field(3, ti.f32, shape=(n, n))
    spacing = 2.0 / (n - 1)
    k, damping, mass, h = 2000.0, 0.5, 0.01, 1.0 / 60.0 / substeps
    offsets = [(1, 0, 1.0), (-1, 0, 1.0), (0, 1, 1.0), (0, -1, 1.0), (1, 1, 2 ** 0.5),
               (-1, -1, 2 ** 0.5), (1, -1, 2 ** 0.5), (-1, 1, 2 ** 0.5), (2, 0, 2.0),
               (-2, 0, 2.0), (0, 2, 2.0), (0, -2, 2.0)]

    @ti.kernel
    def init():
        for i, j in x:
            x[i, j] = ti.Vector([i * spacing, j * spacing, 0.0])
            v[i, j] = ti.Vector([0.0, 0.0, 0.0])

    @ti.kernel
    # taichi reads its kernels' parameter kinds from calls in the annotations
    def substep(xa: ti.template(), va: ti.template(),  # type: ignore[valid-type]
                xb: ti.template(), vb: ti.template()):  # type: ignore[valid-type]
        for i, j in xa:
            if j == n - 1:
                xb[i, j] = xa[i, j]
                vb[i, j] = ti.Vector([0.0, 0.0, 0.0])
                continue
            f = mass * ti.Vector([0.0, -9.81, 0.0])
            for s in ti.static(offsets):
                ii, jj = i + s[0], j + s[1]
                if 0 <= ii < n and 0 <= jj < n:
                    d = xa[ii, jj] - xa[i, j]
                    length = d.norm()
                    if length > 0:
                        direction = d / length
                        f += (k * (length - s[2] * spacing)
                              + damping * (va[ii, jj] - va[i, j]).dot(direction)) * direction
            vn = va[i, j] + f / mass * h
            vb[i, j] = vn
            xb[i, j] = xa[i, j] + vn * h

    init()

    def run(count):
        for _ in range(count):
            for _pair in range(substeps // 2):
                substep(x, v, x2, v2)
                substep(x2, v2, x, v)
        ti.sync()

    run(1)                                  # compile and warm up
    start = time.perf_counter()
    run(steps)
    seconds = time.perf_counter() - start
    return n * n * substeps * steps / seconds


def taichi_neighbour_counts(points, radius: float, cells: int, arch: str,
                            repeats: int = 3) -> tuple[float, np.ndarray]:
    """The neighbour query of ``emberfx bench neighbours`` in Taichi on ``arch``: seconds per
    build + count (the best of ``repeats``, wall time around ``ti.sync``) and each point's count
    of points within ``radius`` (itself included). The same algorithm as the emberfx grid: a
    counting sort into cubic cells of edge ``radius`` (``cells`` per axis over [0, 1)^3,
    clamped), positions reordered by cell, then one thread per point in cell order walking the
    27 cells, with no atomics in that gather. Raises RuntimeError when the backend cannot
    start."""
    with stdout_to_stderr():
        return _neighbours(points, radius, cells, arch, repeats)


def _neighbours(points, radius: float, cells: int, arch: str, repeats: int):
    ti = start_taichi(arch)
    n, total = len(points), cells ** 3
    pos = ti.Vector.field(3, ti.f32, shape=n)
    ordered = ti.Vector.field(3, ti.f32, shape=n)
    result = ti.field(ti.i32, shape=n)
    pos.from_numpy(np.ascontiguousarray(points[:, :3], np.float32))
    h, r2 = np.float32(radius), np.float32(radius) ** 2

    @ti.func
    def coords(p):
        c = ti.floor(p / h, ti.i32)
        return ti.max(0, ti.min(c, cells - 1))

    @ti.func
    def cell_index(p):
        c = coords(p)
        return (c[2] * cells + c[1]) * cells + c[0]

    grid = CellSort(ti, arch, n, total, cell_index)
    start, cell_end = grid.start, grid.cell_end

    @ti.kernel
    def gather():
        for k in ordered:
            x = ordered[k]
            home = coords(x)
            found = 0
            for dz, dy, dx in ti.static(ti.ndrange((-1, 2), (-1, 2), (-1, 2))):
                c = home + ti.Vector([dx, dy, dz])
                if 0 <= c[0] < cells and 0 <= c[1] < cells and 0 <= c[2] < cells:
                    cell = (c[2] * cells + c[1]) * cells + c[0]
                    for m in range(start[cell], cell_end(cell)):
                        d = ordered[m] - x
                        if d.dot(d) < r2:
                            found += 1
            result[k] = found

    def run():
        grid.build(pos, ordered)
        gather()
        ti.sync()

    run()                                   # compile and warm up
    best = float("inf")
    for _ in range(repeats):
        begin = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - begin)
    counts = np.zeros(n, np.int64)
    counts[grid.ids.to_numpy()] = result.to_numpy()
    return best, counts
