"""The fluid family's position-based fluids step (systems/fluid, shaders/fluid) written in Taichi,
for `emberfx bench fluid` to compare against in the same run. Taichi is not a dependency: this
module is used only when `import taichi` works (install it for benchmarking).

The same model and parameters (PbfModel, from the Fluid component through the fluid system's own
functions): predict (gravity, clamped into the bounds), a counting-sort grid with cells of the
kernel radius h, ``iterations`` of (density and lambda with the walls' density; the correction
with s_corr and the walls' gradient, clamped into the bounds; predictions ping-pong), the
velocity from the move, XSPH viscosity. No vorticity confinement (the bench's fluid has none) and
no colliders (the bench's scene has none). Unlike emberfx's grid, a cell's points are in the
order the scatter's atomics handed out slots (no sort per cell), so sums run in an order that
may change between runs."""

import math
import time
from dataclasses import dataclass

import numpy as np

from emberfx.bench.harness import stdout_to_stderr
from emberfx.bench.taichi_grid import CellSort, start_taichi


@dataclass(frozen=True)
class PbfModel:
    """The constants of a PBF step, as systems/fluid writes them into FluidParams."""
    h: float                     # kernel radius
    volume: float                # V = (2 r)^3
    lower: tuple                 # lowest particle centre per axis
    upper: tuple                 # highest
    gravity: tuple
    dt: float                    # substep
    poly6: float                 # poly6 coefficient over the rest lattice's sum
    spiky: float                 # spiky gradient coefficient (negative)
    relaxation: float            # the constraint's epsilon
    rest_density: float
    s_corr_scale: float          # k / S0
    inverse_w_dq: float          # 1 / W(dq)
    viscosity: float             # XSPH c
    wall_distance: float         # a wall's plane from the centres that touch it
    iterations: int
    grid_origin: tuple           # the neighbour grid's lower corner (the fluid system's grid)
    grid_cells: tuple            # its cells per axis, of edge h


def pbf_model(fluid, dt: float) -> PbfModel:
    """The PbfModel of a Fluid component for substeps of ``dt`` seconds (FluidSystem's
    params_record, field by field)."""
    from emberfx.blocks.neighbours import GridShape
    from emberfx.systems.fluid.system import (
        PARK_CELLS,
        RELAXATION,
        S_CORR_RADIUS,
        lattice_density,
        lattice_gradient_sum,
        poly6_coefficient,
        spiky_coefficient,
        wall_distance,
    )

    h, r = fluid.kernel, fluid.particle_radius
    s0 = lattice_gradient_sum(fluid)
    w_dq = poly6_coefficient(h) * (h * h * (1.0 - S_CORR_RADIUS ** 2)) ** 3
    # the same cells as the fluid system's grid: which cell a neighbour was sorted into decides
    # whether a later iteration, whose positions have moved since the build, still finds it
    grid = GridShape.covering((fluid.bounds.lower - PARK_CELLS * h).tolist(),
                              fluid.bounds.upper.tolist(), h)
    return PbfModel(
        h=h, volume=(2.0 * r) ** 3, lower=tuple(fluid.bounds.lower + r),
        upper=tuple(fluid.bounds.upper - r), gravity=tuple(fluid.gravity), dt=dt,
        poly6=poly6_coefficient(h) / lattice_density(fluid), spiky=spiky_coefficient(h),
        relaxation=RELAXATION * s0, rest_density=fluid.rest_density,
        s_corr_scale=fluid.surface_tension / s0, inverse_w_dq=1.0 / w_dq,
        viscosity=fluid.viscosity, wall_distance=wall_distance(fluid),
        iterations=fluid.iterations, grid_origin=grid.origin, grid_cells=grid.cells)


def taichi_fluid(positions: np.ndarray, model: PbfModel, arch: str, settle: int,
                 steps: int) -> tuple[float, np.ndarray]:
    """Seconds per step of ``model`` in Taichi on ``arch`` ("cpu", "cuda", "vulkan"), timed over
    ``steps`` steps (wall time around ``ti.sync``) after ``settle`` steps from ``positions`` at
    rest, and the positions after the ``settle`` steps. Raises RuntimeError when the backend
    cannot start."""
    with stdout_to_stderr():
        return _run(positions, model, arch, settle, steps)


def _run(positions: np.ndarray, m: PbfModel, arch: str, settle: int, steps: int):
    ti = start_taichi(arch)
    n = len(positions)
    vec3 = ti.types.vector(3, ti.f32)
    lower, upper = np.asarray(m.lower), np.asarray(m.upper)
    origin = vec3(*m.grid_origin)
    dims = ti.Vector(list(m.grid_cells))
    total = int(np.prod(m.grid_cells))
    lo, hi, gravity = vec3(*m.lower), vec3(*m.upper), vec3(*m.gravity)
    h, h2, volume, dt = m.h, m.h * m.h, m.volume, m.dt
    wall_k = 0.25 * math.pi * m.poly6
    inwards = (1.0, -1.0)
    planes = (tuple(lower - m.wall_distance), tuple(upper + m.wall_distance))
    x = ti.Vector.field(3, ti.f32, shape=n)
    v = ti.Vector.field(3, ti.f32, shape=n)
    moved = ti.Vector.field(3, ti.f32, shape=n)
    predicted = [ti.Vector.field(3, ti.f32, shape=n) for _ in range(2)]
    lam = ti.field(ti.f32, shape=n)
    x.from_numpy(np.ascontiguousarray(positions, np.float32))
    v.fill(0.0)

    @ti.func
    def coords(q):
        return ti.max(0, ti.min(ti.floor((q - origin) / h, ti.i32), dims - 1))

    @ti.func
    def flat(c):
        return (c[2] * dims[1] + c[1]) * dims[0] + c[0]

    @ti.func
    def cell_index(q):
        return flat(coords(q))

    grid = CellSort(ti, arch, n, total, cell_index)
    start, ids, cell_end = grid.start, grid.ids, grid.cell_end

    @ti.func
    def rows(home, dy, dz):
        """[first, end) of the row of three cells (x - 1 .. x + 1) at (y + dy, z + dz): x is
        fastest in cell order, so they are one run; (-1, -1) outside the grid."""
        out = ti.Vector([-1, -1])
        y, z = home[1] + dy, home[2] + dz
        if 0 <= y < dims[1] and 0 <= z < dims[2]:
            low = ti.Vector([ti.max(home[0] - 1, 0), y, z])
            high = ti.Vector([ti.min(home[0] + 1, dims[0] - 1), y, z])
            out = ti.Vector([start[flat(low)], cell_end(flat(high))])
        return out

    @ti.func
    def poly6(r2):
        d = ti.max(h2 - r2, 0.0)
        return m.poly6 * d * d * d

    @ti.func
    def spiky_gradient(d, r):
        g = ti.Vector([0.0, 0.0, 0.0])
        if 0.0 < r < h:
            s = h - r
            g = d * (m.spiky * s * s / r)
        return g

    @ti.func
    def wall_primitive(z):
        z2 = z * z
        return z * (h2 ** 4 + z2 * (-4.0 / 3.0 * h2 ** 3 + z2 * (1.2 * h2 ** 2
                    + z2 * (-4.0 / 7.0 * h2 + z2 / 9.0))))

    @ti.func
    def wall(q):   # fluid/types.wgsl's wall_density: (gradient, density)
        density = 0.0
        gradient = ti.Vector([0.0, 0.0, 0.0])
        full = wall_primitive(h)
        for axis, side in ti.static(ti.ndrange(3, 2)):
            inward = ti.static(inwards[side])
            y = ti.max((q[axis] - ti.static(planes[side][axis])) * inward, 0.0)
            if y < h:
                s = h2 - y * y
                density += wall_k * (full - wall_primitive(y))
                gradient[axis] -= inward * wall_k * s * s * s * s
        return gradient, density

    @ti.kernel
    def predict(p: ti.template()):  # type: ignore[valid-type]
        for i in x:
            vi = v[i] + gravity * dt
            p[i] = ti.min(ti.max(x[i] + vi * dt, lo), hi)

    @ti.kernel
    def solve_lambda(p: ti.template()):  # type: ignore[valid-type]
        for i in p:
            pi = p[i]
            home = coords(pi)
            sum_w, sum_sq = 0.0, 0.0
            grad = ti.Vector([0.0, 0.0, 0.0])
            for dz, dy in ti.ndrange((-1, 2), (-1, 2)):
                row = rows(home, dy, dz)
                if row[0] >= 0:
                    for k in range(row[0], row[1]):
                        j = ids[k]
                        d = pi - p[j]
                        r2 = d.dot(d)
                        if r2 < h2:
                            sum_w += poly6(r2)
                            if j != i:
                                g = volume * spiky_gradient(d, ti.sqrt(r2))
                                grad += g
                                sum_sq += g.dot(g)
            wall_gradient, wall_density = wall(pi)
            grad += wall_gradient
            constraint = ti.max(volume * sum_w + wall_density - 1.0, 0.0)
            lam[i] = -constraint / (sum_sq + grad.dot(grad) + m.relaxation)

    @ti.kernel
    def correct(p: ti.template(), out: ti.template()):  # type: ignore[valid-type]
        for i in p:
            pi = p[i]
            home = coords(pi)
            lambda_i = lam[i]
            dp = ti.Vector([0.0, 0.0, 0.0])
            for dz, dy in ti.ndrange((-1, 2), (-1, 2)):
                row = rows(home, dy, dz)
                if row[0] >= 0:
                    for k in range(row[0], row[1]):
                        j = ids[k]
                        d = pi - p[j]
                        r2 = d.dot(d)
                        if j != i and r2 < h2:
                            ratio = poly6(r2) * m.inverse_w_dq
                            s_corr = -m.s_corr_scale * ratio * ratio * ratio * ratio
                            dp += (lambda_i + lam[j] + s_corr) * spiky_gradient(d, ti.sqrt(r2))
            wall_gradient, _ = wall(pi)
            out[i] = ti.min(ti.max(pi + volume * dp + lambda_i * wall_gradient, lo), hi)

    @ti.kernel
    def update(p: ti.template()):  # type: ignore[valid-type]
        for i in p:
            moved[i] = (p[i] - x[i]) / dt

    @ti.kernel
    def finish(p: ti.template()):  # type: ignore[valid-type]
        for i in p:
            pi = p[i]
            home = coords(pi)
            vi = moved[i]
            blend = ti.Vector([0.0, 0.0, 0.0])
            for dz, dy in ti.ndrange((-1, 2), (-1, 2)):
                row = rows(home, dy, dz)
                if row[0] >= 0:
                    for k in range(row[0], row[1]):
                        j = ids[k]
                        d = pi - p[j]
                        r2 = d.dot(d)
                        if j != i and r2 < h2:
                            blend += (moved[j] - vi) * poly6(r2)
            x[i] = pi
            v[i] = vi + m.viscosity * volume * blend

    def step():
        predict(predicted[0])
        grid.build(predicted[0])
        for k in range(m.iterations):
            solve_lambda(predicted[k % 2])
            correct(predicted[k % 2], predicted[(k + 1) % 2])
        final = predicted[m.iterations % 2]
        update(final)
        finish(final)

    for _ in range(settle):
        step()
    ti.sync()
    settled = x.to_numpy()
    begin = time.perf_counter()
    for _ in range(steps):
        step()
    ti.sync()
    return (time.perf_counter() - begin) / steps, settled
