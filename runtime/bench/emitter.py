"""``emberfx bench emitter``: particle-steps per second of a steady-state emitter pool (the whole
step and the update pass alone), beside the copy rooflines and numpy's update on this CPU, plus
the CPU cost of encoding a frame and of ``Engine.step``. Ordered pools also time the other
paths of the step in the same run as baselines (the multi-pass step, and the three-pass or the
one-pass step: systems/emitter/step.py), and the passes after the update alone."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from emberfx.bench.collisions import collision_rows
from emberfx.bench.harness import (
    compute_copy_bandwidth,
    copy_bandwidth,
    output_texture,
    sync,
    timed_passes,
)
from emberfx.core.errors import EmberError
from emberfx.systems.emitter import step
from emberfx.systems.emitter.shader_names import UPDATE_RANKED
from emberfx.systems.emitter.structs import PARTICLE
from emberfx.systems.emitter.tuning import EmitterTuning

PARTICLE_BYTES = PARTICLE.itemsize   # what a step reads and writes of each slot at least


def one_pass_choices(tuning: EmitterTuning, pool) -> dict[str, bool]:
    """Switches of the one-pass step (systems/emitter/tuning.py) timed both ways in the same
    run, with the value each took for ``pool`` under ``tuning``."""
    return {"rank_after_next": tuning.rank_after_next,
            "births_in_update": pool.sim.births_here[pool.variant],
            "prefetch_particles": step.tile_shape(tuning, pool, pool.sim)[1]}


def step_baselines(tuning: EmitterTuning, pool,
                   one_pass_allowed: bool) -> list[tuple[str, EmitterTuning]]:
    """The other paths of the ordered step that ``pool``'s step (taken under ``tuning``) is
    timed against in the same run, each as the tuning that takes it: the multi-pass step;
    where the step took one pass, the three-pass step and the one pass with each of
    one_pass_choices flipped; else the one-pass step where the adapter allows it
    (``one_pass_allowed``)."""
    baselines = [("multi-pass step", replace(tuning, fused_ranks=False, one_pass=False))]
    if pool.sim.one_pass:
        baselines.append(("three-pass step", replace(tuning, one_pass=False)))
        for choice, taken in one_pass_choices(tuning, pool).items():
            flipped: dict[str, Any] = {choice: not taken}
            baselines.append((f"one-pass step, {choice}={not taken}", replace(tuning, **flipped)))
    elif one_pass_allowed:
        baselines.append(("one-pass step", replace(tuning, one_pass=True)))
    return baselines


EMITTER_CASES = [(1 << 20, "ordered", 0), (1 << 20, "atomic", 0), (1 << 24, "ordered", 0),
                 (1 << 24, "atomic", 0), (1 << 20, "ordered", 4), (1 << 24, "ordered", 4)]


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


def emitter_scene(capacity: int, allocation: str, attractors: int = 0):
    from emberfx.model.scene import loads_scene

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


def bench_emitter() -> list[dict]:
    from emberfx.core.gpu import get_context

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
    cases = [(attractors, emitter_case(ctx, capacity, allocation, attractors, bandwidth))
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
    return rows + same_size_copy_rows(ctx, cases, bandwidth) + collision_rows(ctx, bandwidth)


def same_size_copy_rows(ctx, cases, bandwidth: float) -> list[dict]:
    """A compute copy of each pool size's particle bytes; each whole step's row gets its
    fraction of that copy's rate (``of_same_size_copy``). The roofline is a 256 MiB copy; a copy
    of a small pool's own bytes pays the launch and the ramp that a step of that pool pays too,
    so it is what bounds the small pools. ``cases``: (attractors, rows) in EMITTER_CASES order."""
    rows = []
    for capacity in sorted({capacity for capacity, _, _ in EMITTER_CASES}):
        nbytes = PARTICLE_BYTES * capacity
        if nbytes > ctx.limits["max-storage-buffer-binding-size"]:
            continue
        copy = compute_copy_bandwidth(ctx, nbytes)
        rows.append({"name": f"compute vec4 copy of {capacity / (1 << 20):g}M particles' bytes",
                     "value": copy / 1e9, "unit": "GB/s",
                     "fraction_of_copy_bandwidth": copy / bandwidth})
        for (case_capacity, _, _), (_, case_rows) in zip(EMITTER_CASES, cases):
            whole = case_rows[0]
            if case_capacity == capacity and whole["value"] is not None:
                whole["of_same_size_copy"] = whole["value"] * 1e9 * 2 * nbytes / capacity / copy
    return rows


def fused_step_rows(ctx, engine, capacity, attractors, label, seconds, bandwidth,
                    iterations) -> list[dict]:
    """The step's passes after the update alone (ranks and spawn, or births), and the same
    scene's step by the other paths in this run, each on a second engine filled the same way:
    the multi-pass step (``fused_ranks`` off), and the three-pass step (update, ranks, spawn) when
    the step took one pass (emitter/update_ranked.wgsl) with the same step with each of
    one_pass_choices flipped, or the one-pass step where the adapter allows it and the step
    did not take it. A one-pass step reports its look-back's stalls
    (waits that gave up: a wrong step; 0 expected)."""
    from emberfx.core.frame_graph import SIMULATION_PHASES
    from emberfx.engine.engine import Engine

    rows = []
    for short in ("ranks", "spawn", "births"):   # repeated alone: the same work, not values
        alone = [p for p in engine.frame_passes() if p.name.endswith(f":emitter:{short}")]
        if alone:
            rows.append({"name": f"  {short} pass alone ({label})", "unit": "ms",
                         "value": timed_passes(ctx.device, alone, iterations) * 1e3})
    system = engine.system_of("bench", "emitter")
    pool = system.pools["bench"]
    if pool.sim.one_pass:
        rows.append({"name": f"  one-pass look-back stalls ({label})", "unit": "count",
                     "value": look_back_stalls(ctx, engine)})
    for name, tuning in step_baselines(system.tuning, pool, ctx.keeps_resident_workgroups_running):
        other = Engine(emitter_scene(capacity, "ordered", attractors), size=(256, 256),
                       emitter_tuning=tuning)
        other.step(150)
        baseline = timed_passes(ctx.device, other.frame_passes(SIMULATION_PHASES), iterations)
        rows.append({"name": f"  {name} ({label})", "value": capacity / baseline / 1e9,
                     "unit": "G particle-steps/s", "ms_per_step": baseline * 1e3,
                     "passes": len(other.frame_passes(SIMULATION_PHASES)),
                     "fraction_of_copy_bandwidth":
                         2 * PARTICLE_BYTES * capacity / baseline / bandwidth,
                     "speedup_of_the_step": baseline / seconds})
        other.close()
    return rows


def look_back_stalls(ctx, engine) -> int:
    """Waits of the one-pass step's look-back that gave up since the pool was made."""
    from emberfx.core import wgsl
    from emberfx.core.readback import read_array

    tiles = engine.system_of("bench", "emitter").pools["bench"].sim.buffers["tiles"]
    return int(read_array(ctx.device, tiles, np.uint32)[wgsl.int_constant(UPDATE_RANKED,
                                                                           "STALLS")])


def emitter_case(ctx, capacity, allocation, attractors, bandwidth) -> list[dict]:
    from emberfx.core.frame_graph import SIMULATION_PHASES, Phase
    from emberfx.core.system import StepInfo
    from emberfx.engine.engine import Engine

    label = f"{capacity / (1 << 20):.0f}M, {allocation}, {attractors} attractors"
    try:
        engine = Engine(emitter_scene(capacity, allocation, attractors), size=(256, 256))
    except EmberError as exc:   # beyond this device's limits: say so, keep going
        return [{"name": f"emitter step ({label})", "value": None, "unit": "skipped",
                 "note": str(exc)}]
    rows = []
    engine.step(150)            # fill the pool towards steady state
    iterations = 10 if ctx.is_software else 200
    seconds = timed_passes(ctx.device, engine.frame_passes(SIMULATION_PHASES), iterations)
    rate = capacity / seconds
    rows.append({"name": f"emitter step ({label})", "value": rate / 1e9,
                 "unit": "G particle-steps/s", "ms_per_step": seconds * 1e3,
                 # bytes a step must move at least: read + write each particle
                 "fraction_of_copy_bandwidth": 2 * PARTICLE_BYTES * capacity / seconds / bandwidth})
    if allocation == "ordered":
        rows += fused_step_rows(ctx, engine, capacity, attractors, label, seconds, bandwidth,
                                iterations)
    # the update pass alone (integration, forces, free mask): the part Taichi's anchor measures
    update = [p for p in engine.frame_passes() if p.name.endswith(":emitter:update")]
    # Without the emit pass every repeat would age the pool until it is empty (the warm-up alone
    # is thousands of steps), and dead particles are cheap; a zero timestep keeps the
    # steady-state pool alive while the update runs the same instructions. before_step is the
    # hook the engine calls with each step's timing; here it uploads dt = 0.
    engine.system_of("bench", "emitter").before_step(
        StepInfo(frame=engine.clock.steps, dt=0.0, seed=engine.scene.settings.seed))
    seconds = timed_passes(ctx.device, update, iterations)
    rows.append({"name": f"  update pass alone ({label})", "value": capacity / seconds / 1e9,
                 "unit": "G particle-steps/s", "ms": seconds * 1e3,
                 "fraction_of_copy_bandwidth": 2 * PARTICLE_BYTES * capacity / seconds / bandwidth})
    # CPU time to encode one whole frame (all phases) in Python
    n = 100
    output = output_texture(engine)
    sync(ctx.device)                # the GPU thread would compete for this CPU
    for _ in range(20):             # warm-up: the first encodes create views and caches
        engine.encode(ctx.device.create_command_encoder(), output)
    start = time.perf_counter()
    for _ in range(n):
        encoder = ctx.device.create_command_encoder()
        engine.encode(encoder, output)       # every phase: simulate, draw, present
        encoder.finish()
    cpu = (time.perf_counter() - start) / n
    sync(ctx.device)
    start = time.perf_counter()
    for _ in range(10):
        engine.step(1)
    sync(ctx.device)
    step_wall = (time.perf_counter() - start) / 10
    rows.append({"name": f"  CPU encode, one frame ({label})", "value": cpu * 1e6, "unit": "us",
                 "passes": len([p for p in engine.frame_passes() if p.phase != Phase.READBACK])})
    rows.append({"name": f"  Engine.step wall time ({label})", "value": step_wall * 1e3,
                 "unit": "ms"})
    output.destroy()
    engine.close()
    return rows
