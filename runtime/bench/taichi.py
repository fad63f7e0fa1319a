"""The same explicit cloth model in Taichi, for `emberfx bench cloth` to compare against in the
same run (Taichi is what a Python simulation user would pick instead). Taichi is not a
dependency: this module is used only when `import taichi` works (install it for benchmarking)."""

import time

from emberfx.bench.harness import stdout_to_stderr


def taichi_cloth_rate(side: int, arch: str, substeps: int = 16, steps: int = 4) -> float:
    """Vertex-substeps per second of 12-spring explicit cloth on Taichi's ``arch``
    ("cpu", "vulkan", "cuda"); raises RuntimeError when the backend cannot start."""
    with stdout_to_stderr():
        return _rate(side, arch, substeps, steps)


def _rate(side: int, arch: str, substeps: int, steps: int) -> float:
    import taichi as ti

    ti.reset()
    ti.init(arch=getattr(ti, arch), default_fp=ti.f32, offline_cache=False, log_level="error")
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
