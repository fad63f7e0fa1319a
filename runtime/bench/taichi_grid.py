"""What the Taichi baselines share (emberfx.bench.taichi's cloth and neighbour query,
emberfx.bench.taichi_fluid's PBF step): starting Taichi on a backend, and the counting sort of
points into grid cells that both neighbour walks use, built as emberfx's grid builds it. Taichi is
not a dependency: this module is used only when `import taichi` works."""

# no `from __future__ import annotations`: taichi evaluates its kernels' annotations
from typing import Any


def start_taichi(arch: str) -> Any:
    """The taichi module, reset and started on ``arch`` ("cpu", "vulkan", "cuda") with f32 as
    its default float, no offline cache and errors alone logged."""
    import taichi as ti

    ti.reset()
    ti.init(arch=getattr(ti, arch), default_fp=ti.f32, offline_cache=False, log_level="error")
    return ti


class CellSort:
    """A counting sort of ``n`` points into ``total`` cells: each point's cell (``cell_index``,
    a ti.func from a position to a flat cell index), the cells' counts, their first slots by a
    prefix sum (Taichi's parallel one; a serial loop on the CPU backend, which has none), then the
    points' ids in cell order (``ids``: within a cell, in the order the scatter's atomics handed
    out slots). After ``build``, ``start[c]`` is cell c's first slot and ``cell_end`` (a ti.func
    of a cell) the slot after its last."""

    def __init__(self, ti: Any, arch: str, n: int, total: int, cell_index: Any):
        self.cell_of = cell_of = ti.field(ti.i32, shape=n)
        self.ids = ids = ti.field(ti.i32, shape=n)
        self.count = count = ti.field(ti.i32, shape=total)
        self.start = start = ti.field(ti.i32, shape=total)   # inclusive scan, then first slots
        self.cursor = cursor = ti.field(ti.i32, shape=total)
        self.scan = ti.algorithms.PrefixSumExecutor(total) if arch != "cpu" else None

        # taichi reads its kernels' parameter kinds from calls in the annotations
        @ti.kernel
        def count_cells(p: ti.template()):  # type: ignore[valid-type]
            for c in count:
                count[c] = 0
            for i in p:
                cell = cell_index(p[i])
                cell_of[i] = cell
                ti.atomic_add(count[cell], 1)
            for c in count:
                start[c] = count[c]

        @ti.kernel
        def serial_scan():   # the CPU backend has no parallel prefix sum
            ti.loop_config(serialize=True)
            for c in range(1, total):
                start[c] += start[c - 1]

        @ti.kernel
        def scatter():
            for c in start:
                start[c] -= count[c]
                cursor[c] = start[c]
            for i in cell_of:
                ids[ti.atomic_add(cursor[cell_of[i]], 1)] = i

        @ti.kernel
        def scatter_copy(p: ti.template(), ordered: ti.template()):  # type: ignore[valid-type]
            for c in start:
                start[c] -= count[c]
                cursor[c] = start[c]
            for i in p:
                slot = ti.atomic_add(cursor[cell_of[i]], 1)
                ordered[slot] = p[i]
                ids[slot] = i

        @ti.func
        def cell_end(cell):
            end = n
            if cell + 1 < total:
                end = start[cell + 1]
            return end

        self.cell_end = cell_end
        self.kernels = (count_cells, serial_scan, scatter, scatter_copy)

    def build(self, points: Any, ordered: Any = None) -> None:
        """Sort the points of the field ``points`` into their cells; ``ordered``: a field of the
        same shape that also receives the points themselves in cell order."""
        count_cells, serial_scan, scatter, scatter_copy = self.kernels
        count_cells(points)
        if self.scan is None:
            serial_scan()
        else:
            self.scan.run(self.start)
        if ordered is None:
            scatter()
        else:
            scatter_copy(points, ordered)
