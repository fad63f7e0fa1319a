"""``emberfx bench``: measured speed, always beside a baseline measured in the same run.

Each benchmark returns rows of {"name", "value", "unit", ...}. Absolute numbers mean something only
on a real GPU; the ratios (against the device's own buffer-copy bandwidth and against numpy on
this CPU) are what compare across machines.

GPU time is wall-clock time around many iterations encoded into one command buffer, closed by a
blocking read of a tiny buffer, so per-submit overhead is amortised the way a frame amortises it.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np

from emberfx.errors import EmberError



def _sync(device) -> None:
    """Wait until all submitted work is done: map a buffer that a new submission writes.

    Mapping waits for the last submission that used the buffer, and one queue completes its
    submissions in order. (A buffer no submission touched would map at once.)"""
    import wgpu

    usage = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
    probe = device.create_buffer(size=4, usage=usage)
    source = device.create_buffer(size=4, usage=wgpu.BufferUsage.COPY_SRC)
    encoder = device.create_command_encoder()
    encoder.copy_buffer_to_buffer(source, 0, probe, 0, 4)
    device.queue.submit([encoder.finish()])
    probe.map_sync("READ")
    probe.unmap()
    probe.destroy()
    source.destroy()


WARMUP_SECONDS = 0.5     # a hardware GPU idles at a low clock and takes this long to ramp up
REPEATS = 3              # measurements per figure; the fastest is reported


def _timed(device, encode, iterations: int, timestamps: bool = True) -> float:
    """Seconds per iteration of ``encode(encoder)``: the best of REPEATS submissions of
    ``iterations`` each, after WARMUP_SECONDS of the same work (at least one submission).

    The warm-up matters on the H200: from idle its SM clock starts near 345 MHz and reaches
    1980 MHz only under sustained load, so a cold measurement of a few milliseconds ran 2-4x
    slow. GPU time comes from timestamp queries written by two empty compute passes around the
    work (when the device has timestamp-query); otherwise wall time around submit + completion."""
    import wgpu

    start = time.perf_counter()
    while True:                            # warm-up: pipelines, first touch of memory, clocks
        encoder = device.create_command_encoder()
        for _ in range(iterations):
            encode(encoder)
        device.queue.submit([encoder.finish()])
        _sync(device)
        if time.perf_counter() - start >= WARMUP_SECONDS:
            break
    stamps = None
    if timestamps and "timestamp-query" in device.features:
        stamps = device.create_query_set(type="timestamp", count=2)
        resolved = device.create_buffer(
            size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
    best = float("inf")
    for _ in range(REPEATS):
        encoder = device.create_command_encoder()
        if stamps is not None:
            encoder.begin_compute_pass(timestamp_writes={
                "query_set": stamps, "end_of_pass_write_index": 0}).end()
        for _ in range(iterations):
            encode(encoder)
        if stamps is not None:
            encoder.begin_compute_pass(timestamp_writes={
                "query_set": stamps, "beginning_of_pass_write_index": 1}).end()
            encoder.resolve_query_set(stamps, 0, 2, resolved, 0)
        begin = time.perf_counter()
        device.queue.submit([encoder.finish()])
        _sync(device)
        seconds = (time.perf_counter() - begin) / iterations
        if stamps is not None:
            t0, t1 = np.frombuffer(device.queue.read_buffer(resolved), np.uint64)
            gpu = float(t1 - t0) * 1e-9 / iterations
            seconds = gpu if gpu > 0 else seconds
        best = min(best, seconds)
    return best


def copy_bandwidth(device, nbytes: int) -> float:
    """Device-to-device copy, bytes read + written per second (the roofline for a streaming pass)."""
    import wgpu

    usage = wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.STORAGE
    a = device.create_buffer(size=nbytes, usage=usage)
    b = device.create_buffer(size=nbytes, usage=usage)
    seconds = _timed(device, lambda enc: enc.copy_buffer_to_buffer(a, 0, b, 0, nbytes), 20)
    a.destroy()
    b.destroy()
    return 2 * nbytes / seconds


def compute_copy_bandwidth(ctx, nbytes: int) -> float:
    """A vec4 copy in a compute shader (shaders/bench/copy.wgsl), bytes read + written per second."""
    import wgpu

    from emberfx import wgsl

    device = ctx.device
    usage = wgpu.BufferUsage.STORAGE
    a = device.create_buffer(size=nbytes, usage=usage)
    b = device.create_buffer(size=nbytes, usage=usage)
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": wgsl.create_module(device, "bench/copy.wgsl"),
                                "entry_point": "main"})
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": a, "offset": 0, "size": nbytes}},
        {"binding": 1, "resource": {"buffer": b, "offset": 0, "size": nbytes}}])
    grid = ctx.grid((nbytes // 16 + 255) // 256)

    def encode(encoder):
        cp = encoder.begin_compute_pass(label="bench:copy")
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, group)
        cp.dispatch_workgroups(*grid)
        cp.end()

    seconds = _timed(device, encode, 20)
    a.destroy()
    b.destroy()
    return 2 * nbytes / seconds


def numpy_particle_steps(n: int, attractors: int = 0, steps: int = 3) -> float:
    """The same semi-implicit Euler update in numpy (float32), particle-steps per second."""
    rng = np.random.default_rng(0)
    pos = rng.random((n, 3), dtype=np.float32)
    vel = rng.random((n, 3), dtype=np.float32)
    age = np.zeros(n, np.float32)
    life = np.full(n, 1e9, np.float32)
    g = np.array([0, -9.81, 0], np.float32)
    wells = rng.random((attractors, 3), dtype=np.float32)
    h, drag = np.float32(1 / 60), np.float32(0.2)
    start = time.perf_counter()
    for _ in range(steps):
        alive = (age < life)[:, None]
        acc = g - drag * vel
        for well in wells:
            r = well - pos
            s = (r * r).sum(axis=1, keepdims=True) + np.float32(0.01)
            acc += r / (s * np.sqrt(s))
        vel += acc * h * alive
        pos += vel * h * alive
        age += h * alive[:, 0]
    return n * steps / (time.perf_counter() - start)


def _emitter_scene(capacity: int, allocation: str, attractors: int = 0):
    from emberfx.scene import loads_scene

    wells = "".join(f"""
[[entity]]
name = "well{k}"
[entity.attractor]
position = [{np.cos(k * 1.57):.3f}, 0.5, {np.sin(k * 1.57):.3f}]
strength = 1.0
softening = 0.1
""" for k in range(attractors))
    # Steady state ~90% full: rate * mean lifetime = 0.9 capacity.
    return loads_scene(f"""
[scene]
name = "bench"
size = [256, 256]
[[entity]]
name = "bench"
[entity.emitter]
capacity = {capacity}
rate = {0.9 * capacity / 2.0}
lifetime = [1.0, 3.0]
speed = [2.0, 5.0]
drag = 0.2
allocation = "{allocation}"
{wells}""", path="<bench>")


EMITTER_CASES = [(1 << 20, "ordered", 0), (1 << 20, "atomic", 0), (1 << 24, "ordered", 0),
                 (1 << 24, "atomic", 0), (1 << 20, "ordered", 4), (1 << 24, "ordered", 4)]


def bench_emitter() -> list[dict]:
    from emberfx.gpu import get_context

    ctx = get_context()
    rows = []
    copy_size = min(256 << 20, ctx.limits["max-buffer-size"] // 4)
    bandwidth = copy_bandwidth(ctx.device, copy_size)
    rows.append({"name": f"copy_buffer_to_buffer ({copy_size >> 20} MiB)", "value": bandwidth / 1e9,
                 "unit": "GB/s"})
    copy_size = min(copy_size, ctx.limits["max-storage-buffer-binding-size"] // 16 * 16)
    shader_bandwidth = compute_copy_bandwidth(ctx, copy_size)
    rows.append({"name": f"compute vec4 copy ({copy_size >> 20} MiB)",
                 "value": shader_bandwidth / 1e9, "unit": "GB/s"})
    bandwidth = max(bandwidth, shader_bandwidth)   # the better of the two is the roofline
    cases = [(attractors, _bench_emitter_case(ctx, capacity, allocation, attractors, bandwidth))
             for capacity, allocation, attractors in EMITTER_CASES]
    # numpy last: run first, it slowed the GPU figures that followed by a third (1M particles on
    # the H200, 0.061 -> 0.083 ms a step, standalone runs), for reasons outside emberfx
    numpy_rates = {}
    for attractors in (0, 4):
        numpy_rates[attractors] = numpy_particle_steps(1 << 20, attractors)
        rows.append({"name": f"numpy update, 1M, {attractors} attractors (this CPU)",
                     "value": numpy_rates[attractors] / 1e6, "unit": "M particle-steps/s"})
    for attractors, case_rows in cases:
        whole = case_rows[0]
        if whole["value"] is not None:
            whole["vs_numpy"] = whole["value"] * 1e9 / numpy_rates[attractors]
        rows += case_rows
    return rows


def _bench_emitter_case(ctx, capacity, allocation, attractors, bandwidth) -> list[dict]:
    from emberfx.engine import Engine
    from emberfx.frame_graph import SIMULATION_PHASES, FrameGraph, Phase

    label = f"{capacity / (1 << 20):.0f}M, {allocation}, {attractors} attractors"
    try:
        engine = Engine(_emitter_scene(capacity, allocation, attractors), size=(256, 256))
    except EmberError as exc:   # beyond this device's limits: say so, keep going
        return [{"name": f"emitter step ({label})", "value": None, "unit": "skipped",
                 "note": str(exc)}]
    rows = []
    engine.step(150)            # fill the pool towards steady state
    graph = engine._graph("rgba8unorm-srgb")
    iterations = 10 if ctx.is_software else 200
    seconds = _timed(ctx.device, lambda enc: graph.encode(enc, {}, phases=SIMULATION_PHASES),
                     iterations)
    rate = capacity / seconds
    rows.append({"name": f"emitter step ({label})", "value": rate / 1e9,
                 "unit": "G particle-steps/s", "ms_per_step": seconds * 1e3,
                 # bytes a step must move at least: read + write each 32-byte particle
                 "fraction_of_copy_bandwidth": 64 * capacity / seconds / bandwidth})
    # the update pass alone (integration, forces, free mask): the part Taichi's anchor measures
    update = next(p for p in graph.order if p.name.endswith(":emitter:update"))
    alone = FrameGraph([update], uploaded=set(update.reads))
    # Without the emit pass every repeat would age the pool until it is empty (the warm-up alone
    # is thousands of steps), and dead particles are cheap; a zero timestep keeps the
    # steady-state pool alive while the update runs the same instructions.
    from emberfx.system import StepInfo
    emitters = engine.system_of("bench", "emitter")
    emitters._upload_step(emitters.pools["bench"], StepInfo(frame=engine.clock.steps, dt=0.0,
                                                            seed=engine.scene.settings.seed),
                          start=0.0)
    seconds = _timed(ctx.device, lambda enc: alone.encode(enc, {}), iterations)
    rows.append({"name": f"  update pass alone ({label})", "value": capacity / seconds / 1e9,
                 "unit": "G particle-steps/s", "ms": seconds * 1e3,
                 "fraction_of_copy_bandwidth": 64 * capacity / seconds / bandwidth})
    # CPU time to encode one whole frame (all phases) in Python
    n = 100
    output = engine._output_texture
    _sync(ctx.device)               # the GPU thread would compete for this CPU
    for _ in range(20):             # warm-up: the first encodes create views and caches
        engine.encode(ctx.device.create_command_encoder(), output)
    start = time.perf_counter()
    for _ in range(n):
        encoder = ctx.device.create_command_encoder()
        engine.encode(encoder, output)       # every phase: simulate, draw, present
        encoder.finish()
    cpu = (time.perf_counter() - start) / n
    _sync(ctx.device)
    start = time.perf_counter()
    for _ in range(10):
        engine.step(1)
    _sync(ctx.device)
    step_wall = (time.perf_counter() - start) / 10
    rows.append({"name": f"  CPU encode, one frame ({label})", "value": cpu * 1e6, "unit": "us",
                 "passes": len([p for p in graph.order if p.phase != Phase.READBACK])})
    rows.append({"name": f"  Engine.step wall time ({label})", "value": step_wall * 1e3,
                 "unit": "ms"})
    engine.close()
    return rows


def numpy_life_rate(size: int = 2048, generations: int = 3) -> float:
    """Cell updates per second of an np.roll Life step on this CPU (the usual numpy baseline)."""
    rng = np.random.default_rng(1)
    cells = rng.random((size, size)) < 0.3
    start = time.perf_counter()
    for _ in range(generations):
        c = cells.astype(np.uint8)
        n = sum(np.roll(np.roll(c, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                if (dx, dy) != (0, 0))
        cells = (n == 3) | (cells & (n == 2))
    return size * size * generations / (time.perf_counter() - start)


def bench_life() -> list[dict]:
    from emberfx.camera import Camera
    from emberfx.engine import Engine
    from emberfx.frame_graph import FrameGraph, Phase
    from emberfx.gpu import get_context
    from emberfx.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.life_component import Life

    ctx = get_context()
    rows = []
    numpy_rate = numpy_life_rate()
    rows.append({"name": "numpy np.roll Life, 2048x2048 (this CPU)", "value": numpy_rate / 1e9,
                 "unit": "Gcell/s"})
    copy_size = min(256 << 20, ctx.limits["max-storage-buffer-binding-size"] // 16 * 16)
    bandwidth = compute_copy_bandwidth(ctx, copy_size)
    rows.append({"name": f"compute vec4 copy ({copy_size >> 20} MiB)", "value": bandwidth / 1e9,
                 "unit": "GB/s"})
    sizes = [(4096, 4096)] if ctx.is_software else [(16384, 16384), (65536, 32768)]
    generations = 8 if ctx.is_software else 16
    from emberfx.systems import life as life_system

    # (memory, pingpong kernel): the default first, then the single-generation kernels it replaced
    variants = [("pingpong", "sweep"), ("pingpong", "quad"), ("pingpong", "word"),
                ("inplace", None)]
    default_kernel = life_system.PINGPONG_KERNEL
    for width, height in sizes:
        baseline, sweep_row = None, None      # the quad kernel: the default before the sweep
        for memory, kernel in variants:
            life_system.PINGPONG_KERNEL = kernel or default_kernel
            try:
                scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic"), [EntitySpec(
                    "life", {"life": Life(size=(width, height), density=0.3, memory=memory,
                                          steps_per_frame=generations)})])
                engine = Engine(scene, size=(64, 64))
            except EmberError as exc:
                rows.append({"name": f"life step ({width}x{height}, {memory})", "value": None,
                             "unit": "skipped", "note": str(exc)})
                continue
            layer = engine.system_of("life", "life").layers["life"]
            label = f"{width}x{height}, {memory}" + {
                "sweep": f", {life_system.SWEEP_GENS} generations per dispatch "
                         f"({layer.sweep.lanes}-lane subgroups, {layer.sweep.chunk} rows each)"
                         if layer.sweep else "",
                "quad": ", 1 generation per dispatch, 4 words/invocation",
                "word": ", 1 generation per dispatch, 1 word/invocation"}.get(
                    layer.kernel if memory == "pingpong" else None, "")
            if memory == "pingpong" and layer.kernel != kernel:
                rows.append({"name": f"life step ({width}x{height}, {kernel} kernel)",
                             "value": None, "unit": "skipped",
                             "note": f"not available here; the layer uses {layer.kernel}"})
                engine.close()
                continue
            steps = [p for p in engine._graph("rgba8unorm-srgb").order if p.phase == Phase.SIMULATE]
            graph = FrameGraph(steps, uploaded={r for p in steps for r in p.reads})
            iterations = 3 if ctx.is_software else 20
            seconds = _timed(ctx.device, lambda enc: graph.encode(enc, {}), iterations)
            rate = width * height * generations / seconds
            row = {"name": f"life step ({label})", "value": rate / 1e9, "unit": "Gcell/s",
                   "ms_per_generation": seconds / generations * 1e3, "vs_numpy": rate / numpy_rate}
            if kernel == "quad":
                baseline = rate
            elif kernel == "sweep":
                sweep_row = row
            if kernel in ("quad", "word") or memory == "inplace":
                # each generation reads and writes every word once
                bytes_moved = 2 * (width + 31) // 32 * 4 * height * generations
                row["fraction_of_copy_bandwidth"] = bytes_moved / seconds / bandwidth
            rows.append(row)
            engine.close()
        if sweep_row and baseline:
            sweep_row["vs_quad_kernel"] = sweep_row["value"] * 1e9 / baseline
    life_system.PINGPONG_KERNEL = default_kernel
    return rows + _lifelib_rows(sizes[0], generations, rows)


def _lifelib_rows(size, generations: int, gpu_rows: list[dict]) -> list[dict]:
    """python-lifelib on the same soup as the first GPU size, when it is installed."""
    import importlib.util

    if importlib.util.find_spec("lifelib") is None:
        return []
    from emberfx.bench_lifelib import lifelib_rate
    from emberfx.systems.life_patterns import random_soup

    width, height = size
    # the GPU rows' soup: scene seed 1, entity index 0 (the Life system's seed is seed ^ f(index))
    cells = random_soup(width, height, 0.3, 1)
    # lifelib's rate grows with the span it advances at once; 64 generations is its better side
    lifelib_generations = max(generations, 64)
    rate = lifelib_rate(cells, lifelib_generations)
    default = next((r["value"] for r in gpu_rows if r["name"].startswith(f"life step ({width}x")
                    and r["value"] is not None), None)
    row = {"name": f"python-lifelib (CPU), {width}x{height} soup, unbounded plane, "
                   f"{lifelib_generations} generations", "value": rate / 1e9, "unit": "Gcell/s"}
    if default is not None:
        row["emberfx_default_vs_lifelib"] = default * 1e9 / rate
    return [row]


def bench_particle_life() -> list[dict]:
    """Steps per second of the grid (counting sort) and all-pairs neighbour searches, 2D, about
    20 particles per r_max x r_max cell."""
    from emberfx.camera import Camera
    from emberfx.engine import Engine
    from emberfx.frame_graph import FrameGraph, Phase
    from emberfx.gpu import get_context
    from emberfx.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.particle_life_component import ParticleLife

    ctx = get_context()
    rows = []
    if ctx.is_software:
        cases = [("grid", n) for n in (50_000, 200_000)] + [("all_pairs", n) for n in (1000, 4000)]
        cases += [("grid", n) for n in (1000, 4000)]
    else:
        cases = [("grid", n) for n in (50_000, 1 << 20, 1 << 22)]
        cases += [(m, n) for n in (4000, 16000, 64000) for m in ("grid", "all_pairs")]
    r_max = 0.02
    for mode, n in cases:
        side = max(3.2 * r_max, math.sqrt(n / 20.0) * r_max)
        label = f"{n:,} particles, {mode}"
        try:
            scene = Scene(SceneSettings(seed=2), Camera(kind="orthographic"), [EntitySpec(
                "swarm", {"particle_life": ParticleLife(count=n, species=6, r_max=r_max,
                                                        box=(side, side), neighbours=mode)})])
            engine = Engine(scene, size=(64, 64))
        except EmberError as exc:
            rows.append({"name": f"particle life step ({label})", "value": None,
                         "unit": "skipped", "note": str(exc)})
            continue
        engine.step(20)              # let clusters form: neighbour counts grow
        steps = [p for p in engine._graph("rgba8unorm-srgb").order
                 if p.phase in (Phase.CLEAR, Phase.SIMULATE)]
        graph = FrameGraph(steps, uploaded={r for p in steps for r in p.reads})
        iterations = 3 if ctx.is_software else 20
        seconds = _timed(ctx.device, lambda enc: graph.encode(enc, {}), iterations)
        rows.append({"name": f"particle life step ({label})", "value": 1.0 / seconds,
                     "unit": "steps/s", "ms_per_step": seconds * 1e3,
                     "particle_steps_per_s": n / seconds})
        engine.close()
    return rows


def bench_cloth() -> list[dict]:
    """Vertex-substeps per second of the explicit cloth step (12 springs per vertex, 16 substeps
    per step, top edge pinned), beside the compute-copy roofline."""
    from emberfx.camera import Camera
    from emberfx.engine import Engine
    from emberfx.frame_graph import FrameGraph, Phase
    from emberfx.gpu import get_context
    from emberfx.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.cloth_component import Cloth

    ctx = get_context()
    copy_size = min(256 << 20, ctx.limits["max-storage-buffer-binding-size"] // 16 * 16)
    bandwidth = compute_copy_bandwidth(ctx, copy_size)
    rows = [{"name": f"compute vec4 copy ({copy_size >> 20} MiB)", "value": bandwidth / 1e9,
             "unit": "GB/s"}]
    sizes = (64, 256) if ctx.is_software else (64, 256, 1024)
    for side in sizes:
        scene = Scene(SceneSettings(seed=1), Camera(kind="orthographic"), [EntitySpec(
            "cloth", {"cloth": Cloth(resolution=(side, side), size=(2.0, 2.0), pins="top-edge",
                                     substeps=16)})])
        engine = Engine(scene, size=(64, 64))
        engine.step(2)
        steps = [p for p in engine._graph("rgba8unorm-srgb").order if p.phase == Phase.SIMULATE]
        graph = FrameGraph(steps, uploaded={r for p in steps for r in p.reads})
        iterations = 2 if ctx.is_software else 20
        seconds = _timed(ctx.device, lambda enc: graph.encode(enc, {}), iterations)
        rate = side * side * 16 / seconds
        rows.append({"name": f"cloth {side}x{side}, 16 substeps", "value": rate / 1e6,
                     "unit": "M vertex-substeps/s", "ms_per_step": seconds * 1e3,
                     # a substep reads 2 x 16 B of its own state + neighbours (cached), writes 32 B
                     "fraction_of_copy_bandwidth": 64 * side * side * 16 / seconds / bandwidth})
        engine.close()
        rows += _taichi_rows(side, rate)
    return rows


def _taichi_rows(side: int, emberfx_rate: float) -> list[dict]:
    """The same model in Taichi, when Taichi is installed (it is not a dependency)."""
    import importlib.util

    if importlib.util.find_spec("taichi") is None:
        return []
    from emberfx.bench_taichi import taichi_cloth_rate

    rows = []
    for arch in ("cpu", "vulkan", "cuda"):
        try:
            rate = taichi_cloth_rate(side, arch)
        except Exception as exc:   # that backend is not available here
            rows.append({"name": f"  taichi {arch}, {side}x{side}", "value": None,
                         "unit": "unavailable", "note": str(exc).splitlines()[0][:80]})
            continue
        rows.append({"name": f"  taichi {arch}, {side}x{side}", "value": rate / 1e6,
                     "unit": "M vertex-substeps/s", "emberfx_vs_taichi": emberfx_rate / rate})
    return rows


def bench_fractal() -> list[dict]:
    """Pixel-iterations per second of the escape-time pass (every iteration of every pixel
    counted), 1920x1080, beside numpy doing the same float32 iteration on the CPU."""
    from emberfx.camera import Camera
    from emberfx.engine import Engine
    from emberfx.frame_graph import Dispatch, FrameGraph, Pass, Phase
    from emberfx.gpu import get_context
    from emberfx.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.fractal_component import Fractal

    ctx = get_context()
    rows = []
    w, h = 1920, 1080
    for label, fields in (("full set, 256 iterations", dict(center=(-0.5, 0.0), max_iterations=256)),
                          ("seahorse valley, 2000 iterations",
                           dict(center=(-0.7453, 0.1127), zoom=60.0, max_iterations=2000))):
        scene = Scene(SceneSettings(), Camera(kind="orthographic"),
                      [EntitySpec("set", {"fractal": Fractal(resolution=(w, h), **fields)})])
        engine = Engine(scene, size=(64, 64))
        total = int(engine.state("set")["iterations"].sum())
        layer = engine.system_of("set", "fractal").layers["set"]
        escape = next(p for p in layer.passes if p.name.endswith(":escape"))
        always = Pass(escape.name, Phase.RENDER,
                      Dispatch(escape.op.pipeline, escape.op.bind_groups,
                               (-(-w // 16), -(-h // 16), 1)), escape.reads, escape.writes)
        graph = FrameGraph([always], uploaded=set(always.reads))
        seconds = _timed(ctx.device, lambda enc: graph.encode(enc, {}), 2 if ctx.is_software else 20)
        rows.append({"name": f"fractal {w}x{h}, {label}", "value": total / seconds / 1e9,
                     "unit": "G pixel-iterations/s", "ms_per_frame": seconds * 1e3})
        engine.close()
    # numpy, float32, a 480x270 patch of the first view
    f = np.float32
    px, py = np.meshgrid(np.arange(480, dtype=f), np.arange(270, dtype=f))
    cr = f(-0.5) + (px + f(0.5) - f(240)) * f(3.0 / 270)
    ci = -(py + f(0.5) - f(135)) * f(3.0 / 270)
    zr, zi = np.zeros_like(cr), np.zeros_like(ci)
    start, work = time.perf_counter(), 0
    active = np.ones(cr.shape, bool)
    for _ in range(256):
        work += int(active.sum())
        zr, zi = zr * zr - zi * zi + cr, f(2) * zr * zi + ci
        active &= zr * zr + zi * zi <= f(4)
        zr, zi = np.where(active, zr, 0), np.where(active, zi, 0)
    rows.append({"name": "numpy float32 escape time, 480x270 (this CPU)",
                 "value": work / (time.perf_counter() - start) / 1e9, "unit": "G pixel-iterations/s"})
    return rows


def bench_post() -> list[dict]:
    """Milliseconds per 1920x1080 frame for each post pass, alone (timestamps), and the naive
    global-memory Sobel beside the tiled one."""
    from emberfx.engine import OUTPUT_FORMAT, Engine
    from emberfx.frame_graph import Dispatch, FrameGraph, Pass
    from emberfx.gpu import get_context
    from emberfx.scene import loads_scene

    ctx = get_context()
    scene = loads_scene("""
[[entity]]
name = "post"
[entity.bloom]
[entity.edge_detect]
[entity.tonemap]
""", path="<bench>")
    engine = Engine(scene, size=(1920, 1080))
    engine.render()
    rows = []
    iterations = 3 if ctx.is_software else 50
    post = [p for p in engine._graph(OUTPUT_FORMAT).order
            if ":post:" in p.name or p.name == "post:copy"]
    for p in post:
        graph = FrameGraph([p], uploaded=set(p.reads))
        # wall clock around one submission of many: lavapipe's timestamps came back far too
        # small around these texture passes (0.07 ms for what takes 30 ms)
        seconds = _timed(ctx.device, lambda enc: graph.encode(enc, {}), iterations, timestamps=False)
        rows.append({"name": f"post pass {p.name.split(':post:')[-1]}, 1920x1080",
                     "value": seconds * 1e3, "unit": "ms"})
        if p.name.endswith(":post:edge_detect"):
            naive = ctx.compute_pipeline("post/edge_detect_naive.wgsl")
            group = ctx.device.create_bind_group(
                layout=naive.get_bind_group_layout(0),
                entries=[{"binding": e["binding"], "resource": e["resource"]}
                         for e in _bind_entries_of(p, engine)])
            alone = FrameGraph([Pass("bench:naive", p.phase, Dispatch(naive, (group,), p.op.groups),
                                     p.reads, p.writes)], uploaded=set(p.reads))
            seconds = _timed(ctx.device, lambda enc: alone.encode(enc, {}), iterations,
                             timestamps=False)
            rows.append({"name": "post pass edge_detect, naive global loads (reference)",
                         "value": seconds * 1e3, "unit": "ms"})
    engine.close()
    return rows


def _bind_entries_of(pass_, engine) -> list[dict]:
    """The edge_detect pass's resources, rebound for the naive pipeline (same bindings)."""
    import wgpu

    from emberfx.systems.post import edge_settings

    system = engine.system_of("post", "edge_detect")
    edge = next(e for e in system.effects if e.key == "edge_detect")
    settings = engine.device.create_buffer_with_data(
        data=edge_settings(edge.component) + bytes(48), usage=wgpu.BufferUsage.UNIFORM)
    return [{"binding": 0, "resource": {"buffer": settings}},
            {"binding": 1, "resource": engine._scene_texture.create_view()},
            {"binding": 2, "resource": system._scratch("temp", engine.size).create_view()}]


def bench_frame() -> list[dict]:
    from emberfx.bench_frame import bench_frame as run

    return run()


BENCHMARKS = {"emitter": bench_emitter, "life": bench_life, "particle_life": bench_particle_life,
              "cloth": bench_cloth, "fractal": bench_fractal, "post": bench_post,
              "frame": bench_frame}
NAMES = list(BENCHMARKS)


def main(names: list[str], as_json: bool = False) -> int:
    from emberfx.gpu import get_context

    ctx = get_context()
    results = {"adapter": ctx.label, "benchmarks": {}}
    for name in names or NAMES:
        print(f"[bench] {name} on {ctx.label} ...", file=sys.stderr)
        results["benchmarks"][name] = BENCHMARKS[name]()
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"adapter: {ctx.label}")
    for name, rows in results["benchmarks"].items():
        print(f"\n{name}")
        for row in rows:
            value = "-" if row["value"] is None else f"{row['value']:.3f}"
            extra = "  ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                              for k, v in row.items() if k not in ("name", "value", "unit"))
            print(f"  {row['name']:<58} {value:>10} {row['unit']:<19} {extra}")
    return 0
