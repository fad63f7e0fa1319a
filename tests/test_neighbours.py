"""The shared neighbour grid (emberfx.blocks.neighbours) built on the GPU and queried through
common/neighbours_query.wgsl by a test-only shader, against a brute-force numpy oracle: ragged
point sets (none, one, all in one cell, points on cell borders, points outside the grid's box,
a 2D grid), per-query neighbour counts exactly, neighbour position sums to 1e-5 relative; and
the build itself: runs sorted by point index, the snapshot in slot order, two builds the same
bytes. The hashed grid (GridShape.hashed) the same way, with each point's bucket against a numpy
copy of the hash, over unbounded and non-finite points and bucket counts so small that most of
the 27 cells around a point share buckets."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.blocks.neighbours import GridShape, NeighbourGrid
from emberfx.core import wgsl
from emberfx.core.bindings import PassBuilder
from emberfx.core.frame_graph import FrameGraph, Phase
from emberfx.core.readback import read_array
from emberfx.core.resources import Resources

USAGE = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
RADIUS = 0.1
CELL = 0.125            # a power of two: points on cell borders are exact multiples
STRIDE, POSITION = 2, 1  # records of (velocity-like word, position): the position is not first

COUNT_SHADER = wgsl.register("test/neighbour_count.wgsl", """\
// test/neighbour_count.wgsl  --  pass `test:count` (tests/test_neighbours.py only)
//
// For each query point, the number of grid points within `radius` (strictly) and the sum of
// their positions, through the walk of common/neighbours_query.wgsl.
// Bindings (group 0): 0 query (uniform CountParams), 1 queries (read vec4f), 2 counts (rw u32),
//   3 sums (rw vec4f); group 1: the grid's (common/neighbours_query.wgsl)

//! include common/neighbours_query.wgsl

struct CountParams { radius: f32, count: u32, _a: u32, _b: u32 };

@group(0) @binding(0) var<uniform> query: CountParams;
@group(0) @binding(1) var<storage, read> queries: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> sums: array<vec4f>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
    let i = id.x;
    if (i >= query.count) { return; }
    let x = queries[i].xyz;
    let r2 = query.radius * query.radius;
    var n = 0u;
    var s = vec3f(0.0);
    var walk = neighbour_walk(x);
    while (neighbour_next(&walk)) {
        let y = neighbour_position(walk.slot);
        let d = y - x;
        if (dot(d, d) < r2) {
            n += 1u;
            s += y;
        }
    }
    counts[i] = n;
    sums[i] = vec4f(s, 0.0);
}
""")


EVEN_ALIVE = wgsl.register("test/neighbours_even_alive.wgsl", """\
// test/neighbours_even_alive.wgsl: the alive test of tests/test_neighbours.py's grid with dead
// points (no pass or bindings of its own): points with an even index (the position's w) live.

fn point_alive(i: u32) -> bool {
    return (u32(points[i * grid.stride + grid.position].w) & 1u) == 0u;
}
""")


def clear_of_radius(points: np.ndarray, radius: float, margin: float = 1e-6) -> np.ndarray:
    """``points`` less one point of every pair whose distance lies within ``margin`` of
    ``radius`` (distances in float64 from the float32 values), so counts cannot hinge on
    rounding."""
    p = points.astype(np.float32).astype(np.float64)
    keep = np.ones(len(p), bool)
    if len(p) > 1:
        d = np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))
        close = np.abs(d - radius) < margin
        for i, j in zip(*np.nonzero(np.triu(close, 1))):
            if keep[i] and keep[j]:
                keep[j] = False
    return points[keep].astype(np.float32)


def oracle(points: np.ndarray, queries: np.ndarray, radius: float):
    """Brute force: per query, the points strictly within ``radius``, counted and summed."""
    p = points.astype(np.float64)
    q = queries.astype(np.float64)
    if len(p) == 0:
        return np.zeros(len(q), np.int64), np.zeros((len(q), 3)), np.zeros((len(q), 3))
    d = np.sqrt(((q[:, None, :] - p[None, :, :]) ** 2).sum(-1))
    within = d < radius
    return within.sum(1), within.astype(np.float64) @ p, within.astype(np.float64) @ np.abs(p)


def build_and_query(gpu, points: np.ndarray, queries: np.ndarray, shape: GridShape,
                    radius: float = RADIUS, builds: int = 1, alive: str | None = None,
                    constants: bool = True) -> dict:
    """Builds the grid over ``points`` (``builds`` times in the frame, as substeps would), then
    counts the
    neighbours of every query; returns the counts, sums and the build's outputs."""
    resources = Resources(gpu)
    build = PassBuilder(gpu, resources)
    n = len(points)
    records = np.zeros((n, STRIDE, 4), np.float32)
    records[:, POSITION, :3] = points
    records[:, POSITION, 3] = np.arange(n)
    records[:, 0, :] = np.arange(n)[:, None] * 0.5 + np.arange(4)   # a second word per record
    view = resources.buffer("t", "points", max(records.nbytes, 16), USAGE, family="test")
    if n:
        resources.write(view, records.tobytes())
    grid = NeighbourGrid(build, "t:grid", view, n, shape, stride=STRIDE, position=POSITION,
                         copy=STRIDE, alive=alive)
    m = len(queries)
    params = np.array([radius], np.float32).tobytes() + np.array([m, 0, 0], np.uint32).tobytes()
    uniform = resources.buffer("t", "query", 16,
                               wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
    resources.write(uniform, params)
    q = resources.buffer("t", "queries", max(16 * m, 16), USAGE)
    if m:
        resources.write(q, np.hstack([queries, np.zeros((m, 1))]).astype(np.float32).tobytes())
    counts = resources.buffer("t", "counts", max(4 * m, 4), USAGE)
    sums = resources.buffer("t", "sums", max(16 * m, 16), USAGE)
    passes = [p for k in range(builds) for p in grid.passes(Phase.SIMULATE, tag=f"s{k}")]
    passes.append(build.compute("t:count", Phase.SIMULATE, COUNT_SHADER,
                                (max(1, -(-m // 64)), 1, 1),
                                {"query": uniform, "queries": q, "counts": counts, "sums": sums,
                                 **grid.query_bindings()},
                                constants=grid.query_constants() if constants else None))
    graph = FrameGraph(passes, uploaded=resources.persistent())
    encoder = gpu.device.create_command_encoder()
    graph.encode(encoder, {})
    gpu.device.queue.submit([encoder.finish()])
    device = gpu.device
    out = {"counts": read_array(device, counts, np.uint32, m),
           "sums": read_array(device, sums, np.float32, 4 * m).reshape(m, 4)[:, :3],
           "cell_of": read_array(device, grid.cell_of, np.uint32, n),
           "cell_start": read_array(device, grid.cell_start, np.uint32, shape.count + 1),
           "cell_particles": read_array(device, grid.cell_particles, np.uint32, n),
           "snapshot": read_array(device, grid.snapshot, np.float32, 4 * STRIDE * n)
           .reshape(n, STRIDE, 4),
           "records": records}
    resources.release_all()
    return out


def check_against_oracle(out: dict, points: np.ndarray, queries: np.ndarray,
                         radius: float = RADIUS) -> None:
    count, total, magnitude = oracle(points, queries, radius)
    np.testing.assert_array_equal(out["counts"], count)
    error = np.abs(out["sums"].astype(np.float64) - total)
    assert np.all(error <= 1e-5 * magnitude + 1e-30), error.max()


def check_build(out: dict, shape: GridShape) -> None:
    """The counting sort's invariants, from the build's own cell of each point: cell_particles is
    every point once, ordered by (cell, index); each cell's start is the count before it; the
    snapshot is each slot's record."""
    n = len(out["cell_of"])
    cell_of = out["cell_of"]
    assert np.all(cell_of < shape.count)
    np.testing.assert_array_equal(out["cell_particles"], np.lexsort((np.arange(n), cell_of)))
    counts = np.bincount(cell_of, minlength=shape.count)
    np.testing.assert_array_equal(out["cell_start"], np.concatenate([[0], np.cumsum(counts)]))
    np.testing.assert_array_equal(out["snapshot"], out["records"][out["cell_particles"]])


def numpy_cells(points: np.ndarray, shape: GridShape) -> np.ndarray:
    origin = np.asarray(shape.origin[:points.shape[1]], np.float32)
    c = np.floor((points.astype(np.float32) - origin) / np.float32(CELL)).astype(np.int64)
    c = np.clip(c, 0, np.array(shape.cells[:points.shape[1]]) - 1)
    c = np.pad(c, ((0, 0), (0, 3 - points.shape[1])))
    return (c[:, 2] * shape.cells[1] + c[:, 1]) * shape.cells[0] + c[:, 0]


UNIT = GridShape.covering((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), CELL)
HASHED = GridShape.hashed(CELL, 1 << 12)
HASH_LIMIT = 1 << 30
MASK32 = 0xFFFFFFFF


def numpy_buckets(points: np.ndarray, shape: GridShape) -> np.ndarray:
    """Each point's bucket in a hashed grid, as common/neighbours.wgsl defines it: cell
    coordinates (float32 offsets times the float32 reciprocal of the cell edge, floored) clamped
    to +-2^30, a point with a non-finite coordinate in the cell (2^30, 2^30, 2^30), z = 0 in 2D;
    Teschner's prime XOR and the lowbias32 finalizer in 32-bit words."""
    p = points.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        inverse = np.float32(1.0 / shape.cell_size[0])
        f = np.floor((p - np.asarray(shape.origin, np.float32)) * inverse)
        f = np.clip(np.nan_to_num(f, nan=0.0), -HASH_LIMIT, HASH_LIMIT)
    c = np.where(np.all(np.isfinite(p), axis=1)[:, None], f, HASH_LIMIT).astype(np.int64)
    if shape.cells[2] == 1:
        c[:, 2] = 0
    u = c & MASK32
    h = ((u[:, 0] * 73856093) ^ (u[:, 1] * 19349663) ^ (u[:, 2] * 83492791)) & MASK32
    h ^= h >> 16
    h = (h * 0x7FEB352D) & MASK32
    h ^= h >> 15
    h = (h * 0x846CA68B) & MASK32
    h ^= h >> 16
    return h & (shape.buckets - 1)


def uniform_points(rng, n: int, low=0.0, high=1.0, dims: int = 3) -> np.ndarray:
    return clear_of_radius(rng.uniform(low, high, (n, dims)).astype(np.float32), RADIUS)


def test_empty_grid_finds_nothing(gpu):
    rng = np.random.default_rng(1)
    queries = rng.uniform(0, 1, (100, 3)).astype(np.float32)
    out = build_and_query(gpu, np.zeros((0, 3), np.float32), queries, UNIT)
    np.testing.assert_array_equal(out["counts"], 0)
    np.testing.assert_array_equal(out["cell_start"], 0)


def test_one_particle(gpu):
    points = np.array([[0.5, 0.25, 0.74]], np.float32)
    queries = np.array([[0.5, 0.25, 0.74], [0.45, 0.3, 0.8], [0.5, 0.25, 0.9],
                        [0.62, 0.25, 0.74]], np.float32)   # itself, near, far, across a cell
    out = build_and_query(gpu, points, queries, UNIT)
    np.testing.assert_array_equal(out["counts"], [1, 1, 0, 0])
    check_against_oracle(out, points, queries)
    check_build(out, UNIT)


@pytest.mark.parametrize("n", [40, 300])   # in workgroup memory, and past its 256 (bitonic)
def test_all_in_one_cell(gpu, n):
    rng = np.random.default_rng(n)
    points = clear_of_radius(rng.uniform(0.25, 0.375, (n, 3)).astype(np.float32), RADIUS)
    out = build_and_query(gpu, points, points, UNIT)
    assert len(np.unique(out["cell_of"])) == 1
    check_against_oracle(out, points, points)
    check_build(out, UNIT)


def test_points_on_cell_borders(gpu):
    rng = np.random.default_rng(7)
    points = rng.uniform(0, 1, (1500, 3))
    on_border = rng.random((1500, 3)) < 0.5          # about half the coordinates snapped
    points = np.where(on_border, np.round(points / CELL) * CELL, points)
    points = np.minimum(points, 1.0 - 1e-3)          # inside the box (the far border is outside)
    points = clear_of_radius(points.astype(np.float32), RADIUS)
    out = build_and_query(gpu, points, points, UNIT)
    # exact multiples of the cell size fall in the cell above the border
    np.testing.assert_array_equal(out["cell_of"], numpy_cells(points, UNIT))
    check_against_oracle(out, points, points)
    check_build(out, UNIT)


def test_points_outside_the_box_clamp_into_border_cells(gpu):
    rng = np.random.default_rng(11)
    points = uniform_points(rng, 1500, -0.6, 1.6)
    queries = np.vstack([points, rng.uniform(-1, 2, (200, 3)).astype(np.float32)])
    out = build_and_query(gpu, points, queries, UNIT)
    outside = np.any((points < 0) | (points >= 1), axis=1)
    assert outside.sum() > 500
    np.testing.assert_array_equal(out["cell_of"], numpy_cells(points, UNIT))
    check_against_oracle(out, points, queries)
    check_build(out, UNIT)


@pytest.mark.parametrize("radius", [RADIUS, CELL])   # below the cell size, and equal to it
def test_uniform_points_any_origin(gpu, radius):
    rng = np.random.default_rng(3)
    shape = GridShape.covering((-2.0, 1.0, 0.5), (-1.0, 1.75, 1.0), CELL)
    points = clear_of_radius(rng.uniform((-2, 1, 0.5), (-1, 1.75, 1), (2000, 3))
                             .astype(np.float32), radius)
    out = build_and_query(gpu, points, points, shape, radius)
    assert shape.cells == (8, 6, 4)
    check_against_oracle(out, points, points, radius)
    check_build(out, shape)


def test_2d_grid(gpu):
    rng = np.random.default_rng(5)
    shape = GridShape.covering((0.0, 0.0), (1.0, 1.0), CELL)
    flat = uniform_points(rng, 800, dims=2)
    points = np.hstack([flat, np.zeros((len(flat), 1), np.float32)])
    out = build_and_query(gpu, points, points, shape)
    assert shape.cells == (8, 8, 1)
    check_against_oracle(out, points, points)
    check_build(out, shape)


def test_dead_points_stay_out_of_every_cell(gpu):
    """A grid over every slot of a pool: the points the alive test calls dead (odd indices) go
    to the dead cell past the last; queries find only the live ones, and the cells' runs hold
    the live points in (cell, index) order."""
    rng = np.random.default_rng(13)
    points = uniform_points(rng, 2001)
    n = len(points)
    live = np.arange(n) % 2 == 0
    out = build_and_query(gpu, points, points, UNIT, alive=EVEN_ALIVE)
    check_against_oracle(out, points[live], points)
    cells = numpy_cells(points, UNIT)
    np.testing.assert_array_equal(out["cell_of"], np.where(live, cells, UNIT.count))
    alive_order = np.lexsort((np.arange(n)[live], cells[live]))
    np.testing.assert_array_equal(out["cell_particles"][:live.sum()],
                                  np.arange(n)[live][alive_order])
    assert out["cell_start"][-1] == live.sum()
    np.testing.assert_array_equal(out["cell_start"][:-1], np.concatenate(
        [[0], np.cumsum(np.bincount(cells[live], minlength=UNIT.count))[:-1]]))


def test_two_builds_are_the_same_bytes(gpu):
    rng = np.random.default_rng(9)
    points = rng.uniform(0.2, 0.45, (3000, 3)).astype(np.float32)   # crowded cells
    first = build_and_query(gpu, points, points, UNIT, builds=3)   # rebuilt per substep
    second = build_and_query(gpu, points, points, UNIT)
    for key in ("counts", "sums", "cell_start", "cell_particles", "snapshot"):
        assert first[key].tobytes() == second[key].tobytes(), key


def test_bad_shapes_and_layouts_are_refused(gpu):
    with pytest.raises(ValueError, match="cell size > 0"):
        GridShape.covering((0, 0, 0), (1, 1, 1), 0.0)
    with pytest.raises(ValueError, match="at most"):
        GridShape.covering((0, 0, 0), (1, 1, 1), 1e-4)
    resources = Resources(gpu)
    view = resources.buffer("t", "points", 64, USAGE, family="test")
    with pytest.raises(ValueError, match="position < stride"):
        NeighbourGrid(PassBuilder(gpu, resources), "t:grid", view, 2, UNIT, stride=2, position=2)
    with pytest.raises(ValueError, match="fewer than 3 records"):
        NeighbourGrid(PassBuilder(gpu, resources), "t:grid", view, 3, UNIT, stride=2)
    resources.release_all()


def test_bench_query_counts_like_the_oracle(gpu):
    """`emberfx bench neighbours`'s own query (bench/neighbours_count.wgsl) at a small size: each
    point's count lies between the oracle's counts at radius -/+ 1e-6, and the radius gives
    about the mean number of neighbours the bench promises."""
    from emberfx.bench.neighbours import MEAN_NEIGHBOURS, emberfx_query, radius_for

    n = 3000
    rng = np.random.default_rng(4)
    points = np.zeros((n, 4), np.float32)
    points[:, :3] = rng.random((n, 3), np.float32)
    radius = radius_for(n)
    seconds, counts, cells = emberfx_query(gpu, points, radius)
    assert seconds > 0 and cells == int(np.ceil(1 / radius))
    low, _, _ = oracle(points[:, :3], points[:, :3], radius - 1e-6)
    high, _, _ = oracle(points[:, :3], points[:, :3], radius + 1e-6)
    assert np.all((low <= counts) & (counts <= high))
    assert 0.8 * MEAN_NEIGHBOURS < counts.mean() - 1 < 1.05 * MEAN_NEIGHBOURS


def test_hashed_grid_empty_and_one_point(gpu):
    rng = np.random.default_rng(21)
    queries = rng.uniform(-5, 5, (100, 3)).astype(np.float32)
    out = build_and_query(gpu, np.zeros((0, 3), np.float32), queries, HASHED)
    np.testing.assert_array_equal(out["counts"], 0)
    np.testing.assert_array_equal(out["cell_start"], 0)
    points = np.array([[-0.5, 0.25, 7.74]], np.float32)
    queries = np.array([[-0.5, 0.25, 7.74], [-0.45, 0.3, 7.8], [-0.5, 0.25, 7.9],
                        [-0.62, 0.25, 7.74]], np.float32)   # itself, near, far, across a cell
    out = build_and_query(gpu, points, queries, HASHED)
    np.testing.assert_array_equal(out["counts"], [1, 1, 0, 0])
    np.testing.assert_array_equal(out["cell_of"], numpy_buckets(points, HASHED))
    check_against_oracle(out, points, queries)
    check_build(out, HASHED)


@pytest.mark.parametrize("n", [40, 300])   # in workgroup memory, and past its 256 (bitonic)
def test_hashed_grid_all_in_one_cell(gpu, n):
    rng = np.random.default_rng(n + 1)
    points = clear_of_radius(rng.uniform(-0.375, -0.25, (n, 3)).astype(np.float32), RADIUS)
    out = build_and_query(gpu, points, points, HASHED)
    assert len(np.unique(out["cell_of"])) == 1
    check_against_oracle(out, points, points)
    check_build(out, HASHED)


def test_hashed_grid_unbounded_points(gpu):
    """Clusters scattered over +-1e3 (cell coordinates up to +-8000), points on cell borders,
    and queries between the clusters; each point's bucket is the numpy hash's."""
    rng = np.random.default_rng(23)
    centres = rng.uniform(-1e3, 1e3, (40, 3))
    points = (centres[:, None, :] + rng.uniform(-0.15, 0.15, (40, 50, 3))).reshape(-1, 3)
    points[::7] = np.round(points[::7] / CELL) * CELL
    points = clear_of_radius(points.astype(np.float32), RADIUS)
    queries = np.vstack([points, rng.uniform(-1e3, 1e3, (200, 3)).astype(np.float32),
                         (centres + 0.2).astype(np.float32)])
    out = build_and_query(gpu, points, queries, HASHED)
    assert np.abs(points).max() > 900 and np.median(out["counts"][:len(points)]) > 2
    np.testing.assert_array_equal(out["cell_of"], numpy_buckets(points, HASHED))
    check_against_oracle(out, points, queries)
    check_build(out, HASHED)


def test_hashed_grid_non_finite_points(gpu):
    """Points with an infinite or NaN coordinate go to the bucket of cell (2^30, 2^30, 2^30) and
    are nobody's neighbour; the finite ones are found as without them, also beyond 2^30 cells."""
    rng = np.random.default_rng(29)
    finite = uniform_points(rng, 600, -1.0, 1.0)
    odd = np.array([[np.inf, 0.0, 0.0], [0.1, -np.inf, 0.2], [np.nan, 0.5, 0.5],
                    [0.0, 0.0, np.nan], [np.inf, np.inf, np.inf]], np.float32)
    far = np.array([[3e8, 0.0, 0.0], [3e8, 0.0, 0.05], [-3e8, 1e9, 2e9]], np.float32)
    points = np.vstack([finite[:300], odd, far, finite[300:]])
    queries = np.vstack([finite, far])
    out = build_and_query(gpu, points, queries, HASHED)
    expected = numpy_buckets(points, HASHED)
    np.testing.assert_array_equal(out["cell_of"], expected)
    assert len(np.unique(expected[300:305])) == 1
    check_against_oracle(out, np.vstack([finite, far]), queries)
    check_build(out, HASHED)


@pytest.mark.parametrize("origin", [(0.0, 0.0, 0.0), (0.05, -0.3, 1.7)])
def test_hashed_grid_cells_not_a_power_of_two(gpu, origin):
    """Cells of edge 0.3 (inexact in binary), half the coordinates on cell borders (the float32
    nearest k x 0.3 from the origin, where a quotient and a product by the reciprocal round apart
    about one time in ten), radius 0.25: each point's cell is the numpy one's, and the walk,
    which recomputes the cells of a bucket's points, still finds every neighbour once."""
    rng = np.random.default_rng(53)
    cell, radius = 0.3, 0.25
    shape = GridShape.hashed(cell, 512, origin=origin)
    centres = rng.uniform(-30.0, 30.0, (30, 3))   # many distinct borders, 100 cells apart
    points = (centres[:, None, :] + rng.uniform(-0.45, 0.45, (30, 50, 3))).reshape(-1, 3)
    points += origin
    on_border = rng.random((1500, 3)) < 0.5
    points = np.where(on_border, np.round((points - origin) / cell) * cell + origin, points)
    points = clear_of_radius(points.astype(np.float32), radius)
    out = build_and_query(gpu, points, points, shape, radius=radius)
    np.testing.assert_array_equal(out["cell_of"], numpy_buckets(points, shape))
    check_against_oracle(out, points, points, radius=radius)
    assert out["counts"].mean() > 3
    check_build(out, shape)


# few points per bucket: llvmpipe stops a loop after 65535 iterations (over all of a walk's
# calls and the lanes that run together), and with 1 bucket every walk skips 27 x n points
@pytest.mark.parametrize("buckets, n", [(1, 400), (4, 1000), (8, 2000)])
def test_hashed_grid_shared_buckets_visit_each_point_once(gpu, buckets, n):
    """With 8 buckets or fewer, most of the 27 cells around every query share a bucket (27 > 8):
    the walk must still give each point once, from its own cell."""
    rng = np.random.default_rng(31 + buckets)
    shape = GridShape.hashed(CELL, buckets)
    points = uniform_points(rng, n, -0.5, 0.5)
    queries = np.vstack([points, rng.uniform(-0.7, 0.7, (100, 3)).astype(np.float32)])
    out = build_and_query(gpu, points, queries, shape)
    np.testing.assert_array_equal(out["cell_of"], numpy_buckets(points, shape))
    check_against_oracle(out, points, queries)
    check_build(out, shape)


def test_hashed_2d_grid_ignores_z(gpu):
    """A 2D hashed grid puts every z in the cell layer z = 0, so a slab of points is exact too."""
    rng = np.random.default_rng(37)
    shape = GridShape.hashed(CELL, 256, dims=2)
    flat = rng.uniform(-3.0, 3.0, (1500, 2))
    points = clear_of_radius(np.hstack([flat, rng.uniform(-0.2, 0.2, (1500, 1))])
                             .astype(np.float32), RADIUS)
    out = build_and_query(gpu, points, points, shape)
    assert shape.cells == (0, 0, 1) and shape.count == 256
    np.testing.assert_array_equal(out["cell_of"], numpy_buckets(points, shape))
    check_against_oracle(out, points, points)
    check_build(out, shape)


def test_hashed_grid_dead_points(gpu):
    rng = np.random.default_rng(41)
    points = uniform_points(rng, 2001, -2.0, 2.0)
    n = len(points)
    live = np.arange(n) % 2 == 0
    shape = GridShape.hashed(CELL, 64)
    out = build_and_query(gpu, points, points, shape, alive=EVEN_ALIVE)
    check_against_oracle(out, points[live], points)
    buckets = numpy_buckets(points, shape)
    np.testing.assert_array_equal(out["cell_of"], np.where(live, buckets, shape.count))
    assert out["cell_start"][-1] == live.sum()
    alive_order = np.lexsort((np.arange(n)[live], buckets[live]))
    np.testing.assert_array_equal(out["cell_particles"][:live.sum()],
                                  np.arange(n)[live][alive_order])


def test_hashed_grid_two_builds_are_the_same_bytes(gpu):
    rng = np.random.default_rng(43)
    points = rng.uniform(-0.3, 0.3, (3000, 3)).astype(np.float32)   # crowded cells
    shape = GridShape.hashed(CELL, 16)
    first = build_and_query(gpu, points, points, shape, builds=3)
    second = build_and_query(gpu, points, points, shape)
    for key in ("counts", "sums", "cell_start", "cell_particles", "snapshot"):
        assert first[key].tobytes() == second[key].tobytes(), key


def test_hashed_grid_query_without_its_constants_finds_nothing(gpu):
    """A query pipeline compiled for a box grid (no NB_MODE constant) over a hashed grid ends its
    walks at once rather than reading buckets as rows of cells."""
    rng = np.random.default_rng(47)
    points = uniform_points(rng, 500, -0.5, 0.5)
    out = build_and_query(gpu, points, points, HASHED, constants=False)
    np.testing.assert_array_equal(out["counts"], 0)
    check_build(out, HASHED)


def test_hashed_shapes(gpu):
    assert GridShape.hashed(0.5, points=1000).buckets == 2048
    assert GridShape.hashed(0.5, points=1024).buckets == 2048
    assert GridShape.hashed(0.5).buckets == 64
    assert GridShape.hashed(0.5, points=1 << 30).buckets == 1 << 22
    shape = GridShape.hashed(0.5, 8, dims=2, origin=(1.0, 2.0))
    assert (shape.count, shape.cells, shape.origin) == (8, (0, 0, 1), (1.0, 2.0, 0.0))
    with pytest.raises(ValueError, match="power of two"):
        GridShape.hashed(0.5, 12)
    with pytest.raises(ValueError, match="power of two"):
        GridShape.hashed(0.5, 1 << 32)
    with pytest.raises(ValueError, match="dims 2 or 3"):
        GridShape.hashed(0.5, 8, dims=4)
    with pytest.raises(ValueError, match="cell size > 0"):
        GridShape.hashed(float("nan"), 8)
    resources = Resources(gpu)
    view = resources.buffer("t", "points", 64, USAGE, family="test")
    grid = NeighbourGrid(PassBuilder(gpu, resources), "t:grid", view, 2, GridShape.hashed(0.5, 8))
    grid.set_shape(GridShape.hashed(0.25, 8))
    assert grid.shape.cell_size[0] == 0.25
    with pytest.raises(ValueError, match="16 buckets differ from the 8 buckets"):
        grid.set_shape(GridShape.hashed(0.25, 16))
    with pytest.raises(ValueError, match="a box grid in place of the hashed grid"):
        grid.set_shape(GridShape.covering((0, 0, 0), (1, 1, 0.5), 0.5))
    grid = NeighbourGrid(PassBuilder(gpu, resources), "t:grid2", view, 2, HASHED, stride=2,
                         position=1, copy=1, prefix="b_")
    with pytest.raises(ValueError, match=r"expected copy > position \(1\), found 1"):
        grid.query_bindings()
    resources.release_all()
