"""``emberfx bench fluid``: steps per second of position-based fluids (systems/fluid) with 4 solver
iterations in 1 substep, on a slab of fluid LAYERS particles deep collapsing in a box (a dam break:
the neighbour counts are those of a liquid, about 33 within the kernel). The slab keeps its depth
at every size and grows sideways: a deeper column falls faster than one 1/60 s substep can hold
together (a cube of 32^3 particles, 0.64 m tall, blew apart within 25 steps), and a step of an
exploded fluid measures crowded cells, not the solver. Each row carries, as the anchors measured in
the same run, the roofline (a vec4 copy in a compute shader, the first row) and the bandwidth the
step would need if it only streamed its particle records once per pass (``streamed_GBs``). When
Taichi is installed, the same PBF model written in Taichi (emberfx.bench.taichi_fluid) runs from
the same starting positions in the same run: its rows carry emberfx's speed over it and how far its
particles are from emberfx's after the settling steps (``settled_rms_vs_emberfx``, in particle
radii: a check that both run the same model). Each emberfx row also gives the milliseconds of the
step's parts, each timed alone (``part_ms``). Rows are printed to stderr as they are measured.

Both time the same window of the collapse: WINDOW_STEPS steps after SETTLE_STEPS from rest.
emberfx repeats that window for its warm-up and its best of several submissions, each starting
with a copy of the settled positions and velocities back into the fluid's buffers (two copies of
16 bytes a particle, inside the timed span: under 0.1% of the window on a GPU).

Sizes: SIZES on a GPU, SOFTWARE_SIZES on a software adapter, Taichi at each (on its CPU backend
beside a software adapter)."""

from __future__ import annotations

import importlib.util

import numpy as np

from emberfx.bench.harness import copy_row, report, timed_passes
from emberfx.core.errors import EmberError

SIZES = (100_000, 1 << 18, 1 << 20, 1 << 22)
SOFTWARE_SIZES = (4096, 16384)   # lavapipe: a fraction of a second per step at these
ITERATIONS = 4
RADIUS = 0.01
LAYERS = 16   # the slab's depth in particles (0.32 m)
SETTLE_STEPS = 5   # steps before timing: the block has started to move
WINDOW_STEPS = (3, 20)   # steps both figures are timed over: software adapter, GPU


def fluid_case(n: int):
    """The Fluid component of about ``n`` particles: a slab of LAYERS x m x m on the lattice
    (m = the square root of n / LAYERS, rounded) against the left wall of a box twice its width
    and twice its depth, 1 substep."""
    from emberfx.systems.fluid.component import Bounds, FillBox, Fluid

    m = max(2, round((n / LAYERS) ** 0.5))
    half = m * RADIUS + 1e-7
    depth = LAYERS * RADIUS + 1e-7
    return Fluid(particle_radius=RADIUS, iterations=ITERATIONS, substeps=1,
                 fill=[FillBox(center=(half, depth, half), half_size=(half, depth, half))],
                 bounds=Bounds(center=(2 * half, 2 * depth, half),
                               half_size=(2 * half, 2 * depth, half)))


def timed_window(ctx, engine, name: str, passes, steps: int) -> float:
    """Seconds per step of ``passes`` (fluid ``name``'s step) over ``steps`` steps from the
    fluid's current state, which every timed submission restores first (see the module's
    docstring)."""
    import wgpu

    body = engine.system_of(name, "fluid").bodies[name]
    live = [body.buffers["position"], body.buffers["velocity"]]   # BufferViews
    saved = [ctx.device.create_buffer(size=v.size, usage=wgpu.BufferUsage.COPY_SRC
                                      | wgpu.BufferUsage.COPY_DST) for v in live]
    encoder = ctx.device.create_command_encoder()
    for view, copy in zip(live, saved):
        encoder.copy_buffer_to_buffer(view.buffer, view.offset, copy, 0, view.size)
    ctx.device.queue.submit([encoder.finish()])

    def restore(encoder) -> None:
        for view, copy in zip(live, saved):
            encoder.copy_buffer_to_buffer(copy, 0, view.buffer, view.offset, view.size)

    try:
        return timed_passes(ctx.device, passes, steps, timestamps=not ctx.is_software,
                            prologue=restore)
    finally:
        for buffer in saved:
            buffer.destroy()


def part_ms(ctx, passes, iterations: int) -> dict[str, float]:
    """Milliseconds of the parts of a step, each timed alone from the state the window left:
    the neighbour grid's build as a whole (its passes count into buffers that its clear pass
    zeroes, so they repeat only together), and each other pass of the first substep on its own
    (``lambda_ms`` and ``correct_ms`` the first iteration's)."""
    out = {"grid_ms": timed_passes(ctx.device, [p for p in passes if ":fluid:grid:" in p.name],
                                   iterations) * 1e3}
    for kind in ("predict", "lambda", "correct", "update", "curl", "finish"):
        first = next((p for p in passes if f":fluid:{kind}:" in p.name), None)
        if first is not None:
            out[f"{kind}_ms"] = timed_passes(ctx.device, [first], iterations) * 1e3
    return out


def bench_fluid(sizes: tuple[int, ...] | None = None, baselines: bool = True) -> list[dict]:
    """The rows at ``sizes`` (default: SIZES, or SOFTWARE_SIZES on a software adapter), each
    followed by its Taichi rows when ``baselines`` and Taichi is installed."""
    from emberfx.core.frame_graph import Phase
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.camera import Camera
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings

    ctx = get_context()
    rows: list[dict] = []
    copy, bandwidth = copy_row(ctx)
    report(rows, copy)
    for n in sizes or (SOFTWARE_SIZES if ctx.is_software else SIZES):
        fluid = fluid_case(n)
        label = f"fluid step ({fluid.fill_count:,} particles, {ITERATIONS} iterations, 1 substep)"
        try:
            scene = Scene(SceneSettings(seed=4), Camera(kind="orthographic"),
                          [EntitySpec("water", {"fluid": fluid})])
            engine = Engine(scene, size=(64, 64))
        except EmberError as exc:
            report(rows, {"name": label, "value": None, "unit": "skipped", "note": str(exc)})
            continue
        try:
            start = engine.state("water")["position"]
            engine.step(SETTLE_STEPS)
            settled = engine.state("water")["position"]
            passes = engine.frame_passes({Phase.CLEAR, Phase.SIMULATE})
            steps = WINDOW_STEPS[0] if ctx.is_software else WINDOW_STEPS[1]
            seconds = timed_window(ctx, engine, "water", passes, steps)
            parts = part_ms(ctx, passes, 3 if ctx.is_software else 20)
        finally:
            engine.close()
        # per pass at least one read of a vec4f record per particle: predict, the grid's
        # assign / scatter / order, 2 per iteration, update, curl, finish
        streamed = fluid.fill_count * 16 * (7 + 2 * ITERATIONS) / seconds / 1e9
        report(rows, {"name": label, "value": 1.0 / seconds, "unit": "steps/s",
                      "ms": seconds * 1e3, "particles": fluid.fill_count,
                      "streamed_GBs": streamed, "roofline_GBs": bandwidth / 1e9,
                      "passes": len(passes), **parts})
        if baselines:
            taichi_rows(rows, ctx, fluid, scene.settings.fixed_dt, start, settled, seconds)
    return rows


def taichi_rows(rows: list[dict], ctx, fluid, fixed_dt: float, start: np.ndarray,
                settled: np.ndarray, seconds: float) -> None:
    """The Taichi PBF baseline's rows for one size (none without Taichi)."""
    if importlib.util.find_spec("taichi") is None:
        return
    from emberfx.bench.taichi_fluid import pbf_model, taichi_fluid

    model = pbf_model(fluid, fixed_dt)
    steps = WINDOW_STEPS[0] if ctx.is_software else WINDOW_STEPS[1]
    for arch in ("cpu",) if ctx.is_software else ("cuda", "vulkan"):
        name = f"  taichi {arch}, same PBF model ({fluid.fill_count:,} particles)"
        try:
            taichi_seconds, taichi_settled = taichi_fluid(start, model, arch, SETTLE_STEPS,
                                                          steps)
        except RuntimeError as exc:
            report(rows, {"name": name, "value": None, "unit": "skipped", "note": str(exc)})
            continue
        rms = float(np.sqrt(np.mean(np.sum((taichi_settled - settled) ** 2, axis=1))))
        report(rows, {"name": name, "value": 1.0 / taichi_seconds, "unit": "steps/s",
                      "ms": taichi_seconds * 1e3, "emberfx_vs_taichi": taichi_seconds / seconds,
                      "settled_rms_vs_emberfx": rms / fluid.particle_radius})
