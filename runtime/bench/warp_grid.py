"""NVIDIA Warp's HashGrid, for `emberfx bench neighbours` to compare the neighbour grid against in
the same run (Warp is what a Python simulation user on NVIDIA hardware would pick instead). Warp
is not a dependency: this module is imported only when `import warp` works (install
``warp-lang`` for benchmarking)."""

import time

import numpy as np
import warp as wp

from emberfx.bench.harness import stdout_to_stderr


@wp.kernel
def _count(grid: wp.uint64, points: wp.array(dtype=wp.vec3),  # type: ignore[valid-type]
           r2: float, counts: wp.array(dtype=wp.int32)):  # type: ignore[valid-type]
    """Each point's count of points with squared distance below r2 (itself included), one
    thread per point in the grid's cell order (hash_grid_point_id), as Warp's examples query."""
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    x = points[i]
    query = wp.hash_grid_query(grid, x, wp.sqrt(r2))
    # Warp's dynamic (mutable) variables are declared with a constructor call, not a literal
    index = int(0)  # noqa: UP018
    found = int(0)  # noqa: UP018
    while wp.hash_grid_query_next(query, index):
        d = points[index] - x
        if wp.dot(d, d) < r2:
            found += 1
    counts[i] = found


def warp_neighbour_counts(points, radius: float, dim: int, device: str,
                          repeats: int = 3) -> tuple[float, np.ndarray]:
    """The neighbour query of ``emberfx bench neighbours`` with Warp's HashGrid (``dim`` cells
    per axis, cells of edge ``radius``) on ``device`` ("cpu" or "cuda"): seconds per build +
    count (the best of ``repeats``, wall time around a device synchronize) and each point's
    count of points within ``radius`` (itself included). Raises RuntimeError when the device is
    not there."""
    with stdout_to_stderr():
        return _neighbours(points, radius, dim, device, repeats)


def _neighbours(points, radius: float, dim: int, device: str, repeats: int):
    wp.config.quiet = True
    wp.init()
    if device == "cuda" and not wp.is_cuda_available():
        raise RuntimeError("Warp found no CUDA device")
    n = len(points)
    positions = wp.array(np.ascontiguousarray(points[:, :3], np.float32), dtype=wp.vec3,
                         device=device)
    counts = wp.zeros(n, dtype=wp.int32, device=device)
    grid = wp.HashGrid(dim, dim, dim, device=device)
    r2 = float(np.float32(radius) * np.float32(radius))

    def run():
        grid.build(points=positions, radius=radius)
        wp.launch(_count, dim=n, inputs=[grid.id, positions, r2, counts], device=device)
        wp.synchronize_device(device)

    run()                                   # compile and warm up
    best = float("inf")
    for _ in range(repeats):
        begin = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - begin)
    return best, counts.numpy().astype(np.int64)
