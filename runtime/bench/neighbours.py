"""``emberfx bench neighbours``: the neighbour query alone, the shared neighbour grid
(emberfx.blocks.neighbours) built over uniformly random points in the unit cube and then, for
every point, the count of points within ``radius`` (bench/neighbours_count.wgsl: one invocation
per point in cell order, through common/neighbours_query.wgsl). The radius gives about
MEAN_NEIGHBOURS neighbours per point and is the cell size. Beside it, in the same run: the same
build and count over a hashed grid (GridShape.hashed, the default buckets) of the same points,
with its speed over the box grid's; the same algorithm in Taichi when it is installed
(emberfx.bench.taichi): counting-sort grid of the same cells, positions reordered by cell, one
thread per point, no atomics in the gather; and NVIDIA Warp's HashGrid built and queried with
the same radius when Warp is installed (emberfx.bench.warp_grid). Each baseline row carries
emberfx's speed over it and whether the counts were the same. Rows are printed to stderr as they
are measured."""

from __future__ import annotations

import importlib.util
import math

import numpy as np

from emberfx.bench.harness import report, timed_passes

MEAN_NEIGHBOURS = 35.0
"""expected points within the radius of a point, itself excluded"""
SIZES = (1 << 20, 1 << 22)
SOFTWARE_SIZES = (1 << 14, 1 << 16)   # lavapipe: seconds per build at these


def radius_for(n: int) -> float:
    """The radius whose ball holds MEAN_NEIGHBOURS of n uniform points in the unit cube."""
    return (MEAN_NEIGHBOURS * 3.0 / (4.0 * math.pi * n)) ** (1.0 / 3.0)


def bench_neighbours(sizes: tuple[int, ...] | None = None) -> list[dict]:
    from emberfx.blocks.neighbours import GridShape
    from emberfx.core.gpu import get_context

    ctx = get_context()
    rows: list[dict] = []
    for n in sizes or (SOFTWARE_SIZES if ctx.is_software else SIZES):
        rng = np.random.default_rng(n)
        points = np.zeros((n, 4), np.float32)
        points[:, :3] = rng.random((n, 3), np.float32)
        radius = radius_for(n)
        seconds, counts, cells = emberfx_query(ctx, points, radius)
        report(rows, {"name": f"neighbour grid build + count ({n:,} points)",
                      "value": n / seconds / 1e6, "unit": "M points/s", "ms": seconds * 1e3,
                      "mean_neighbours": float(counts.mean()) - 1.0, "cells": cells ** 3})
        hashed = GridShape.hashed(radius, points=n)
        hashed_seconds, hashed_counts, _ = emberfx_query(ctx, points, radius, hashed)
        report(rows, {"name": f"  hashed grid, same points ({hashed.buckets:,} buckets)",
                      "value": n / hashed_seconds / 1e6, "unit": "M points/s",
                      "ms": hashed_seconds * 1e3, "hashed_vs_box": seconds / hashed_seconds,
                      "same_counts": bool(np.array_equal(hashed_counts, counts))})
        taichi_rows(rows, ctx, points, radius, cells, seconds, counts)
        warp_rows(rows, ctx, points, radius, hashed.buckets, seconds, counts)
    return rows


def emberfx_query(ctx, points: np.ndarray, radius: float,
                  shape=None) -> tuple[float, np.ndarray, int]:
    """Seconds per build + count, each point's count (itself included) and cells per axis (0 for
    a hashed grid), over ``shape`` (default: the box grid over the unit cube, cells of edge
    ``radius``)."""
    import wgpu

    from emberfx.blocks.neighbours import GridShape, NeighbourGrid
    from emberfx.core.bindings import PassBuilder
    from emberfx.core.frame_graph import Phase
    from emberfx.core.readback import read_array
    from emberfx.core.resources import Resources

    n = len(points)
    resources = Resources(ctx)
    build = PassBuilder(ctx, resources)
    storage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    view = resources.buffer("bench", "points", points.nbytes, storage, family="bench")
    resources.write(view, points.tobytes())
    if shape is None:
        shape = GridShape.covering((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), radius)
    grid = NeighbourGrid(build, "bench:neighbours", view, n, shape)
    uniform = resources.buffer("bench", "query", 16,
                               wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
    resources.write(uniform, np.array([radius], np.float32).tobytes()
                    + np.array([n, 0, 0], np.uint32).tobytes())
    counts = resources.buffer("bench", "counts", 4 * n, storage)
    count = build.compute("bench:neighbours:count", Phase.SIMULATE, "bench/neighbours_count.wgsl",
                          ctx.grid(math.ceil(n / 256)),
                          {"query": uniform, "counts": counts, **grid.query_bindings()},
                          constants=grid.query_constants(),
                          does="each point's neighbours within the radius")
    passes = grid.passes(Phase.SIMULATE) + [count]
    seconds = timed_passes(ctx.device, passes, 2 if ctx.is_software else 20)
    by_slot = read_array(ctx.device, counts, np.uint32, n)
    order = read_array(ctx.device, grid.cell_particles, np.uint32, n)
    result = np.zeros(n, np.int64)
    result[order] = by_slot
    resources.release_all()
    return seconds, result, shape.cells[0]


def taichi_rows(rows: list[dict], ctx, points: np.ndarray, radius: float, cells: int,
                seconds: float, counts: np.ndarray) -> None:
    if importlib.util.find_spec("taichi") is None:
        return
    from emberfx.bench.taichi import taichi_neighbour_counts

    n = len(points)
    for arch in ("cpu",) if ctx.is_software else ("cuda", "vulkan"):
        name = f"  taichi {arch}, same algorithm ({n:,} points)"
        try:
            taichi_seconds, taichi_counts = taichi_neighbour_counts(points, radius, cells, arch)
        except RuntimeError as exc:
            report(rows, {"name": name, "value": None, "unit": "skipped", "note": str(exc)})
            continue
        report(rows, {"name": name, "value": n / taichi_seconds / 1e6, "unit": "M points/s",
                      "ms": taichi_seconds * 1e3, "emberfx_vs_taichi": taichi_seconds / seconds,
                      "same_counts": bool(np.array_equal(taichi_counts, counts))})


def warp_rows(rows: list[dict], ctx, points: np.ndarray, radius: float, buckets: int,
              seconds: float, counts: np.ndarray) -> None:
    """NVIDIA Warp's HashGrid over the same points (its CUDA device on a hardware adapter, its
    CPU on a software one), with about as many cells as the hashed grid has buckets; a row
    saying it was skipped when Warp is not installed."""
    n = len(points)
    device = "cpu" if ctx.is_software else "cuda"
    name = f"  warp HashGrid {device} ({n:,} points)"
    if importlib.util.find_spec("warp") is None:
        report(rows, {"name": name, "value": None, "unit": "skipped",
                      "note": "warp is not installed (pip install warp-lang)"})
        return
    from emberfx.bench.warp_grid import warp_neighbour_counts

    dim = max(4, round(buckets ** (1.0 / 3.0)))
    try:
        warp_seconds, warp_counts = warp_neighbour_counts(points, radius, dim, device)
    except RuntimeError as exc:
        report(rows, {"name": name, "value": None, "unit": "skipped", "note": str(exc)})
        return
    report(rows, {"name": name, "value": n / warp_seconds / 1e6, "unit": "M points/s",
                  "ms": warp_seconds * 1e3, "emberfx_vs_warp": warp_seconds / seconds,
                  "dim": dim, "same_counts": bool(np.array_equal(warp_counts, counts))})
