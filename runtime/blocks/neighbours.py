"""A reusable GPU neighbour grid: points sorted into uniform cells (over a box, or hashed over
all of space) by a counting sort, as frame-graph passes a family inserts wherever its step needs
a fresh grid (each step, or each substep of a solver).

    shape = GridShape.covering(lower, upper, cell_size=radius)
    grid = NeighbourGrid(self.build, "fountain:grid", "fountain/particles", n, shape,
                         stride=2, position=0, copy=2)
    passes += grid.passes(Phase.SIMULATE)
    # afterwards a shader that includes common/neighbours_query.wgsl and binds
    # grid.query_bindings() walks the 27 cells around any point (see that file); its pass
    # takes constants=grid.query_constants() (the grid's mode; none for a box grid)

The points are records of ``stride`` vec4f with the position in the xyz of vec4f ``position``.
Passes (``<name>:...``), each one dispatch:

  clear          zero the per-cell counts
  assign         each point's cell (common/neighbours_assign.wgsl) and the cell's count; the count
                 each atomicAdd returned is the point's slot in the cell's run. With ``alive``
                 (a WGSL file defining ``point_alive(i)``, swapped in for
                 common/neighbours_alive.wgsl), dead points go to a dead cell past the last,
                 whose run no query visits: a grid over every slot of a pool with dead slots
  cells:scan:*   the exclusive prefix sum of the counts: each cell's first slot, and one past
                 the last cell: where the dead cell's run starts (emberfx.blocks.scan)
  scatter        each point index at its cell's first slot plus its own (no atomics)
  order          each cell's run sorted by point index (a workgroup per cell), and, with
                 copy > 0, the first ``copy`` vec4f of each record copied in that order: the
                 snapshot that queries read

So every slot's point is the same on every run, whatever order threads ran in, and two runs
give the same bytes. Cells, in one of two modes (common/neighbours.wgsl):

  box      GridShape.covering(lower, upper, cell_size): the box [origin, origin + cells *
           cell_size); a point outside it (or not finite) counts in the nearest border cell.
           Queries stay exact for such points, because clamping never moves two cells further
           apart; only the border cells grow crowded. A query reads the three cells of a row as
           one run: 9 runs in 3D.
  hashed   GridShape.hashed(cell_size, buckets, dims): for points with no bounds. Cells of edge
           cell_size over all of space, each cell's integer coordinates hashed into one of
           ``buckets`` (a power of two; by default the next one >= 2 x points, from 64 up to
           2^22) buckets, which take the place of the cells in every buffer, the scan and the
           order pass (``shape.count`` is the buckets). A query opens each of the 27 cells on its
           own and skips the points of a shared bucket that lie in another cell, so each point
           comes once: 27 runs, one more position read and cell computation per point of each
           run, and the points of the cells that share its buckets as skipped candidates. A
           point with a non-finite coordinate counts in one defined far cell.

The grid's buffers are registry resources of the points' owner and family, named
``<owner>/<prefix>cell_of`` ... (``cell_count`` ends as the cells' first slots), so they go when
the entity goes.

Queries bind group 1 (common/neighbours_query.wgsl); a shader whose group 1 is taken includes
``query_include(group)`` in its place.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import wgpu

from emberfx.blocks.scan import PrefixScan
from emberfx.core import wgsl
from emberfx.core.bindings import PassBuilder
from emberfx.core.frame_graph import Pass, Phase
from emberfx.core.layout import struct_dtype
from emberfx.core.resources import BufferView

PARAMS = struct_dtype("common/neighbours.wgsl", "GridParams")
POINT_GROUP = wgsl.workgroup_size("common/neighbours_assign.wgsl")[0]   # points per workgroup
STORAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
MAX_CELLS = (1 << 32) - 2
"""cells a grid may have: cell indices are u32, one more is the dead cell (the device's buffer
limits come first)"""
MAX_BUCKETS = 1 << 31
"""buckets a hashed grid may have: the largest power of two below MAX_CELLS"""
DEFAULT_BUCKETS = (64, 1 << 22)
"""a hashed grid's default bucket count: the next power of two >= 2 x points, within these"""
QUERY = "common/neighbours_query.wgsl"
ASSIGN = "common/neighbours_assign.wgsl"
ALIVE = "common/neighbours_alive.wgsl"
GRID_BOX = wgsl.int_constant("common/neighbours.wgsl", "GRID_BOX")
GRID_HASHED = wgsl.int_constant("common/neighbours.wgsl", "GRID_HASHED")


def query_include(group: int) -> str:
    """The name of common/neighbours_query.wgsl with its bindings in bind group ``group``, for
    a shader that uses group 1 for its own."""
    if group == 1:
        return QUERY
    text = wgsl.read_text(QUERY).replace("@group(1)", f"@group({group})")
    return wgsl.register(f"common/neighbours_query@{group}.wgsl", text)


@dataclass(frozen=True)
class GridShape:
    """Cells per axis over the box [origin, origin + cells * cell_size) (cells z = 1: 2D); or,
    with ``buckets`` > 0, a hashed grid: cells of edge ``cell_size`` over all of space from
    ``origin``, hashed into ``buckets`` buckets (cells (0, 0, 0), or (0, 0, 1) in 2D)."""
    origin: tuple[float, float, float]
    cell_size: tuple[float, float, float]
    cells: tuple[int, int, int]
    buckets: int = 0

    @property
    def is_hashed(self) -> bool:
        return self.buckets > 0

    @property
    def count(self) -> int:
        """Cells (a hashed grid: buckets): the length of the per-cell buffers and the scan."""
        if self.is_hashed:
            return self.buckets
        return self.cells[0] * self.cells[1] * self.cells[2]

    @classmethod
    def covering(cls, lower: Sequence[float], upper: Sequence[float],
                 cell_size: float) -> GridShape:
        """Cubic cells of edge ``cell_size`` (the largest query radius, or more) from ``lower``,
        as many per axis as cover ``upper`` (at least one). 2D: give two coordinates."""
        _check_cell_size(cell_size)
        if len(lower) != len(upper) or len(lower) not in (2, 3):
            raise ValueError(f"neighbour grid: expected 2 or 3 coordinates for both corners, "
                             f"found {len(lower)} and {len(upper)}")
        cells = [max(1, math.ceil((hi - lo) / cell_size)) for lo, hi in zip(lower, upper)]
        origin = [float(v) for v in lower]
        if len(cells) == 2:
            cells.append(1)
            origin.append(0.0)
        shape = cls((origin[0], origin[1], origin[2]), (cell_size,) * 3,
                    (cells[0], cells[1], cells[2]))
        shape.check()
        return shape

    @classmethod
    def hashed(cls, cell_size: float, buckets: int | None = None, dims: int = 3, *,
               points: int = 0, origin: Sequence[float] | None = None) -> GridShape:
        """A hashed grid for unbounded points: cubic cells of edge ``cell_size`` (the largest
        query radius, or more) over all of space, from ``origin`` (default 0), each cell's
        integer coordinates hashed into one of ``buckets`` buckets (a power of two; None: the
        next power of two >= 2 x ``points``, at least 64 and at most 2^22). ``dims`` = 2: the z
        coordinate is ignored (every point in the z = 0 layer of cells)."""
        _check_cell_size(cell_size)
        if dims not in (2, 3):
            raise ValueError(f"neighbour grid: expected dims 2 or 3, found {dims}")
        if buckets is None:
            low, high = DEFAULT_BUCKETS
            buckets = min(high, max(low, 1 << max(0, 2 * points - 1).bit_length()))
        at = [0.0, 0.0, 0.0] if origin is None else [float(v) for v in origin]
        if len(at) == 2:
            at.append(0.0)
        if len(at) != 3 or not all(math.isfinite(v) for v in at):
            raise ValueError(f"neighbour grid: expected a finite origin of 2 or 3 coordinates, "
                             f"found {origin}")
        shape = cls((at[0], at[1], at[2]), (cell_size,) * 3, (0, 0, 1 if dims == 2 else 0),
                    int(buckets))
        shape.check()
        return shape

    def describe(self) -> str:
        if self.is_hashed:
            return f"{self.buckets:,} buckets"
        return f"{'x'.join(map(str, self.cells))} cells"

    def check(self) -> None:
        if self.is_hashed:
            b = self.buckets
            if b & (b - 1) or b > MAX_BUCKETS:
                raise ValueError(f"neighbour grid: expected a power of two of at most "
                                 f"{MAX_BUCKETS:,} buckets, found {b:,}")
            return
        if self.buckets < 0 or min(self.cells) < 1:
            raise ValueError(f"neighbour grid: expected at least one cell per axis and "
                             f"buckets >= 0, found cells {self.cells}, buckets {self.buckets}")
        if self.count > MAX_CELLS:
            raise ValueError(f"neighbour grid: {'x'.join(map(str, self.cells))} = "
                             f"{self.count:,} cells; expected at most {MAX_CELLS:,} (a larger "
                             f"cell size, or a smaller box)")

    def record(self, n: int, stride: int, position: int, copy: int) -> bytes:
        rec = np.zeros((), PARAMS)
        rec["origin"][:3] = self.origin
        rec["cell_size"][:3] = self.cell_size
        if self.is_hashed:
            rec["cell_size"][3] = 1.0 / self.cell_size[0]
        rec["grid"] = (*self.cells, self.count)
        rec["count"], rec["stride"], rec["position"], rec["copy"] = n, stride, position, copy
        rec["mode"] = GRID_HASHED if self.is_hashed else GRID_BOX
        return rec.tobytes()


def _mode(shape: GridShape) -> str:
    return "hashed" if shape.is_hashed else "box"


def _check_cell_size(cell_size: float) -> None:
    if not (cell_size > 0.0 and math.isfinite(cell_size)):
        raise ValueError(f"neighbour grid: expected a finite cell size > 0, found {cell_size}")


class NeighbourGrid:
    def __init__(self, build: PassBuilder, name: str,
                 points: BufferView | str | Sequence[BufferView | str], n: int,
                 shape: GridShape, *, stride: int = 1, position: int = 0, copy: int = 1,
                 prefix: str = "", snapshot_key: str = "snapshot",
                 slots: Sequence[BufferView] | None = None,
                 pick: Callable[[], int] | None = None,
                 order: tuple[str, Sequence[Mapping]] | None = None,
                 alive: str | None = None):
        """Sort the first ``n`` points of ``points`` into the cells of ``shape``; ``name``
        prefixes the passes. ``points`` may be a list of buffers (ping-pong state): ``pick()``
        then names the one a build reads when the frame is encoded. ``copy``: vec4f of each
        record the snapshot keeps (0: none, a grid of indices only). ``slots``: buffers of n u32
        that the build may use as scratch (one per points variant), in place of its own.
        ``order``: a family's own order shader (it includes common/neighbours_runs.wgsl, and
        writes its own snapshot) and its bindings beyond the runs' (one map per variant).
        ``alive``: a WGSL file defining ``fn point_alive(i: u32) -> bool`` over the assign pass's
        ``points`` and ``grid``; the points it calls dead stay out of every cell."""
        views = [points] if isinstance(points, (BufferView, str)) else list(points)
        resources = build.resources
        self.points = [resources.buffer_view(v) if isinstance(v, str) else v for v in views]
        if not 0 <= position < stride or not 0 <= copy <= stride:
            raise ValueError(f"neighbour grid '{name}': expected 0 <= position < stride and "
                             f"copy <= stride, found position {position}, copy {copy}, "
                             f"stride {stride}")
        if order is not None and copy:
            raise ValueError(f"neighbour grid '{name}': an order shader of its own writes its "
                             f"own snapshot; expected copy = 0, found {copy}")
        for view in self.points:
            if view.size < 16 * stride * n:
                raise ValueError(f"neighbour grid '{name}': points buffer '{view.name}' holds "
                                 f"{view.size:,} bytes, fewer than {n:,} records of {stride} "
                                 f"vec4f")
        shape.check()
        self.build, self.name, self.n, self.shape = build, name, n, shape
        self.stride, self.position, self.copy = stride, position, copy
        self.pick, self.order = pick, order
        self.assign_shader = ASSIGN if alive is None else wgsl.derive(
            f"{ASSIGN.removesuffix('.wgsl')}+{alive.replace('/', '+')}", ASSIGN, {ALIVE: alive})
        owner, family = self.points[0].name.split("/", 1)[0], self.points[0].family

        def buffer(key: str, size: int, usage: int = STORAGE) -> BufferView:
            what = f"neighbour grid '{name}': {key}"
            build.gpu.check_buffer_size(size, what)
            return resources.buffer(owner, f"{prefix}{key}", max(size, 4), usage, what=what,
                                    family=family)

        # read from storage by every pass: lavapipe inlines the uniform values a shader's
        # branches read and compiles a copy of the shader at each dispatch, never freeing one
        # (a flock in a box grew by 0.13 MB a step with the record in a uniform)
        self.params = buffer("grid_params", PARAMS.itemsize,
                             wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST)
        self.cell_of = buffer("cell_of", 4 * n)
        # the first slots after the scan, and the dead cell's
        self.cell_count = buffer("cell_count", 4 * (shape.count + 1))
        self.cell_particles = buffer("cell_particles", 4 * n)
        self.slots = list(slots) if slots is not None else [buffer("cell_slot", 4 * n)]
        self.snapshot = buffer(snapshot_key, 16 * copy * n) if copy else None
        self.scan = PrefixScan(build, f"{name}:cells", self.cell_count, shape.count + 1)
        self._written = b""
        self.set_shape(shape)

    @property
    def cell_start(self) -> BufferView:
        """Each cell's first slot (cell c's points are slots cell_start[c] up to
        cell_start[c + 1]; the entry past the last cell is the live points' count)."""
        return self.cell_count

    def set_shape(self, shape: GridShape) -> None:
        """A new box or cell size with the same number of cells or buckets (an edit); uploads
        the record when it changed."""
        if self._written and shape.is_hashed != self.shape.is_hashed:
            raise ValueError(f"neighbour grid '{self.name}': a {_mode(shape)} grid in place of "
                             f"the {_mode(self.shape)} grid its queries were compiled for; "
                             f"build a new grid")
        if shape.count != self.shape.count and self._written:
            raise ValueError(f"neighbour grid '{self.name}': {shape.describe()} differ from the "
                             f"{self.shape.describe()} its buffers were made for; build a new "
                             f"grid")
        record = shape.record(self.n, self.stride, self.position, self.copy)
        if record != self._written:
            self.build.resources.write(self.params, record)
            self.shape, self._written = shape, record

    def query_bindings(self) -> dict[str, BufferView]:
        """The bindings (group 1) of a shader that includes common/neighbours_query.wgsl."""
        if self.snapshot is None or self.copy <= self.position:
            raise ValueError(f"neighbour grid '{self.name}': queries read the positions from the "
                             f"snapshot; expected copy > position ({self.position}), found "
                             f"{self.copy}")
        return {"nb_grid": self.params, "nb_cell_start": self.cell_count,
                "nb_cell_particles": self.cell_particles, "nb_snapshot": self.snapshot}

    def query_constants(self) -> dict[str, int]:
        """The pipeline constants of a shader that includes common/neighbours_query.wgsl: the
        grid's mode, for a hashed grid (a box grid needs none); a query compiled without them
        finds nothing in a hashed grid."""
        return {"NB_MODE": GRID_HASHED} if self.shape.is_hashed else {}

    def _variants(self, make: Callable[[int], dict]) -> dict | list[dict]:
        """One binding map, or one per points variant when the points ping-pong."""
        count = max(len(self.points), len(self.slots))
        maps = [make(v) for v in range(count)]
        return maps[0] if count == 1 else maps

    def passes(self, phase: Phase = Phase.SIMULATE, clear_phase: Phase | None = None,
               tag: str = "") -> list[Pass]:
        """The build, in order; the counts' clear goes to ``clear_phase`` (default ``phase``).
        ``tag``: a build more than once a frame (each substep) needs a different tag for each
        copy of the passes, which it appends to their names (``<name>:assign:<tag>``)."""
        out = self._build_passes(phase, clear_phase)
        if tag:
            out = [dataclasses.replace(p, name=f"{p.name}:{tag}") for p in out]
        return out

    def _build_passes(self, phase: Phase, clear_phase: Phase | None) -> list[Pass]:
        build, gpu, name = self.build, self.build.gpu, self.name
        out = [build.clear(f"{name}:clear", clear_phase or phase, self.cell_count,
                           does="zeroes each grid cell's point count")]
        if self.n == 0:
            return out   # no points: every cell starts at slot 0
        points = lambda v: self.points[v % len(self.points)]  # noqa: E731
        slots = lambda v: self.slots[v % len(self.slots)]  # noqa: E731
        pick = self.pick if max(len(self.points), len(self.slots)) > 1 else None
        point_groups = gpu.grid(math.ceil(self.n / POINT_GROUP))
        out.append(build.compute(
            f"{name}:assign", phase, self.assign_shader, point_groups,
            self._variants(lambda v: {"grid": self.params, "points": points(v),
                                      "cell_of": self.cell_of, "cell_slot": slots(v),
                                      "cell_count": self.cell_count}),
            pick=pick, does="each point's grid cell and its slot in the cell's run"))
        out += self.scan.passes(phase)
        out.append(build.compute(
            f"{name}:scatter", phase, "common/neighbours_scatter.wgsl", point_groups,
            self._variants(lambda v: {"grid": self.params, "cell_of": self.cell_of,
                                      "cell_start": self.cell_count, "cell_slot": slots(v),
                                      "cell_particles": self.cell_particles}),
            pick=pick, does="each point's index at its cell's start plus its slot"))
        out.append(self.order_pass(phase))
        return out

    def order_pass(self, phase: Phase = Phase.SIMULATE) -> Pass:
        """The last pass of the build alone, for a family that counts and scatters in its own
        way into this grid's buffers."""
        runs = {"grid": self.params, "cell_start": self.cell_count,
                "cell_particles": self.cell_particles}
        groups = self.build.gpu.grid(self.shape.count)
        name = f"{self.name}:order"
        if self.order is not None:
            shader, extra = self.order
            variants = [{**runs, **e} for e in extra]
            return self.build.compute(
                name, phase, shader, groups, variants if len(variants) > 1 else variants[0],
                pick=self.pick if len(variants) > 1 else None,
                does="each cell's point indices in ascending order, records copied in that "
                     "order")
        if self.snapshot is None:
            return self.build.compute(name, phase, "common/neighbours_sort.wgsl", groups, runs,
                                      does="each cell's point indices in ascending order")
        snapshot = self.snapshot
        pick = self.pick if len(self.points) > 1 else None
        variants = [{**runs, "points": p, "snapshot": snapshot} for p in self.points]
        return self.build.compute(
            name, phase, "common/neighbours_order.wgsl", groups,
            variants if len(variants) > 1 else variants[0], pick=pick,
            constants={"COPY": self.copy},
            does=f"each cell's point indices in ascending order, {self.copy} vec4f of each "
                 f"record copied in that order (the snapshot)")
