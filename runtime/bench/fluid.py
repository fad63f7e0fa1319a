"""``emberfx bench fluid``: steps per second of position-based fluids (systems/fluid) with 4
solver iterations in 1 substep, on a block of fluid collapsing in a box (a dam break: the
neighbour counts are those of a liquid, about 33 within the kernel). Each row carries, as the
anchor measured in the same run, the device's buffer-copy bandwidth and the bandwidth the step
would need if it only streamed its particle records once per pass (``streamed_GBs``)."""

from __future__ import annotations

from emberfx.bench.harness import copy_bandwidth, timed_passes
from emberfx.core.errors import EmberError

SIZES = (100_000, 1 << 18, 1 << 20, 1 << 22)
SOFTWARE_SIZES = (4096, 16384)   # lavapipe: a fraction of a second per step at these
ITERATIONS = 4
RADIUS = 0.01
SETTLE_STEPS = 5   # steps before timing: the block has started to move


def fluid_case(n: int):
    """The Fluid component of about ``n`` particles: a cube of m^3 on the lattice (m = the cube
    root of n, rounded) against the left wall of a box twice its width, 1 substep."""
    from emberfx.systems.fluid.component import Bounds, FillBox, Fluid

    m = max(2, round(n ** (1.0 / 3.0)))
    half = m * RADIUS + 1e-7
    return Fluid(particle_radius=RADIUS, iterations=ITERATIONS, substeps=1,
                 fill=[FillBox(center=(half, half, half), half_size=(half, half, half))],
                 bounds=Bounds(center=(2 * half, 1.5 * half, half),
                               half_size=(2 * half, 1.5 * half, half)))


def bench_fluid(sizes: tuple[int, ...] | None = None) -> list[dict]:
    from emberfx.core.frame_graph import Phase
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings

    ctx = get_context()
    rows: list[dict] = []
    bandwidth = copy_bandwidth(ctx.device, 64 << 20)
    for n in sizes or (SOFTWARE_SIZES if ctx.is_software else SIZES):
        fluid = fluid_case(n)
        label = f"fluid step ({fluid.fill_count:,} particles, {ITERATIONS} iterations, 1 substep)"
        try:
            scene = Scene(SceneSettings(seed=4), Camera(kind="orthographic"),
                          [EntitySpec("water", {"fluid": fluid})])
            engine = Engine(scene, size=(64, 64))
        except EmberError as exc:
            rows.append({"name": label, "value": None, "unit": "skipped", "note": str(exc)})
            continue
        try:
            engine.step(SETTLE_STEPS)
            passes = engine.frame_passes({Phase.CLEAR, Phase.SIMULATE})
            seconds = timed_passes(ctx.device, passes, 3 if ctx.is_software else 20)
        finally:
            engine.close()
        # per pass at least one read of a vec4f record per particle: predict, the grid's
        # assign / scatter / order, 2 per iteration, update, curl, finish
        streamed = fluid.fill_count * 16 * (7 + 2 * ITERATIONS) / seconds / 1e9
        rows.append({"name": label, "value": 1.0 / seconds, "unit": "steps/s",
                     "ms": seconds * 1e3, "particles": fluid.fill_count,
                     "streamed_GBs": streamed, "copy_GBs": bandwidth / 1e9,
                     "passes": len(passes)})
    return rows
