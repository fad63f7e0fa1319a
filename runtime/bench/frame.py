"""``emberfx bench frame``: CPU milliseconds per frame of scenes/sampler.toml.

A frame is what the window does each display refresh at 60 Hz with one fixed step per frame:
``engine.step(1)`` (scripts, component sync, uniform writes, frame-graph encoding, submit) and
``engine.draw_to(texture)`` (the same for drawing), with counters read back every
``WINDOW_READBACK_EVERY`` steps as the window does (a row shows every step too). The GPU's own
time is left out in two ways, both reported:

- pipelined: frames back to back, as the window runs them; the GPU works on frame n while Python
  prepares frame n + 1. ``queue.submit`` is timed separately and left out, so a submit that waits
  for a busy GPU does not count. Right for a real GPU, whose frame (about 1 ms for the sampler on
  the H200) is shorter than the CPU's.
- GPU idle: the bench waits (untimed) for the GPU before each step and each draw. On a software
  adapter the "GPU" is the same CPU cores, and Python timed while its rasteriser threads run comes
  out slower, so this is the headline there.

A row takes one cost out: the same frames with no counters read back at all, which says what a
step's readback costs (its map wakes wgpu-py's poll thread). Two baselines: the same loop on a
scene with no entities (the engine's fixed cost per frame), and the wgpu calls of one sampler
frame replayed with nothing around them (frame_calls.py: what the frame would cost if the
engine's own Python took no time, with these passes, on this host).

The headline is measured in ROUNDS rounds, each between two timings of a fixed Python workload
(host.py). A shared host runs a vCPU at different speeds from one minute to the next; the rounds
whose workload ran within 10% of the run's fastest give the frame at the fastest host speed the
run saw, beside the median of all rounds. (A run the host slowed throughout shows it in the
reference's absolute figure: about 0.6 ms on the H200's host at full speed.)
"""

from __future__ import annotations

import time
from importlib import resources

import numpy as np

from emberfx.app.window import WINDOW_READBACK_EVERY
from emberfx.bench.frame_calls import call_counts, record_calls, replay, replay_by_kind
from emberfx.bench.harness import output_texture, sync
from emberfx.bench.host import full_speed_rounds, python_reference_ms
from emberfx.core import native_calls

TARGET_MS = 1.5   # CPU per sampler frame, pipelined, submit calls excluded
WARMUP_FRAMES = 20
MEASURED_FRAMES = 60
ROUNDS = 5        # rounds of the headline, each timed between two host references
SOFTWARE_ROUNDS = 3
NO_READBACK = 1 << 30   # steps between readbacks that no measured loop reaches


class _SubmitTimer:
    """Wraps ``device.queue.submit`` to add up the seconds spent inside it."""

    def __init__(self, queue):
        self.queue, self.original, self.seconds = queue, queue.submit, 0.0

    def __enter__(self):
        def timed_submit(buffers):
            t0 = time.perf_counter()
            try:
                return self.original(buffers)
            finally:
                self.seconds += time.perf_counter() - t0

        self.queue.submit = timed_submit
        return self

    def __exit__(self, *exc):
        del self.queue.submit   # the instance attribute: the class's method shows through again


def measure_frames(engine, pipelined: bool, frames: int = MEASURED_FRAMES,
                   warmup: int = WARMUP_FRAMES) -> dict:
    """Milliseconds per frame, CPU side: medians of ``frame`` (step + draw), ``step``, ``draw``
    (each including its submits), ``submit`` and ``thread_cpu``; ``python`` is the median frame
    without its submits, split into ``python_step`` + ``python_draw`` by their shares of all the
    measured frames. So the two parts add up to ``python`` and neither exceeds it, which the
    medians of the parts would not promise."""
    wait = (lambda: None) if pipelined else (lambda: sync(engine.device))
    texture = output_texture(engine)
    steps, draws, step_submits, draw_submits, thread = [], [], [], [], []
    with _SubmitTimer(engine.device.queue) as submit:
        for index in range(warmup + frames):
            wait()
            submit.seconds = 0.0
            with engine.frame():   # as the window: the step and the draw in one submission
                c0, t0 = time.thread_time(), time.perf_counter()
                engine.step(1)
                t1, c1 = time.perf_counter(), time.thread_time()
                step_submit = submit.seconds
                wait()
                submit.seconds = 0.0
                c2, t2 = time.thread_time(), time.perf_counter()
                engine.draw_to(texture)
                t3, c3 = time.perf_counter(), time.thread_time()
            if index >= warmup:
                steps.append(t1 - t0)
                draws.append(t3 - t2)
                step_submits.append(step_submit)
                draw_submits.append(submit.seconds)
                thread.append((c1 - c0) + (c3 - c2))
    sync(engine.device)
    texture.destroy()
    step_python = np.subtract(steps, step_submits)
    draw_python = np.subtract(draws, draw_submits)
    python = step_python + draw_python
    ms = lambda xs: float(np.median(xs) * 1e3)   # noqa: E731
    step_share = float(step_python.sum() / python.sum()) if python.sum() > 0 else 0.5
    return {"frame": ms(np.add(steps, draws)), "step": ms(steps), "draw": ms(draws),
            "submit": ms(np.add(step_submits, draw_submits)), "python": ms(python),
            "python_step": ms(python) * step_share, "python_draw": ms(python) * (1 - step_share),
            "thread_cpu": ms(thread)}


def measure_rounds(engine, pipelined: bool, rounds: int = ROUNDS, frames: int = MEASURED_FRAMES,
                   warmup: int = WARMUP_FRAMES) -> dict:
    """``measure_frames`` ``rounds`` times, timing the host reference (host.py) before and after
    each round. Returns the medians of the rounds' figures, each round's figures (``rounds``),
    the slower of each round's two references (``references``, ms), and the medians of the
    rounds at the run's fastest host speed (``full_speed``; their indices in
    ``full_speed_rounds``)."""
    if rounds < 1:
        raise ValueError(f"measure_rounds: expected at least one round, found {rounds}")
    measured, references = [], []
    for _ in range(rounds):
        before = python_reference_ms()
        measured.append(measure_frames(engine, pipelined, frames=frames, warmup=warmup))
        references.append(max(before, python_reference_ms()))
    fast = full_speed_rounds(references)

    def medians(chosen: list[dict]) -> dict:
        out = {key: float(np.median([m[key] for m in chosen])) for key in chosen[0]}
        # the parts by their shares of the chosen rounds, so that they add up to the median
        share = sum(m["python_step"] for m in chosen) / max(sum(m["python"] for m in chosen),
                                                              1e-12)
        out["python_step"], out["python_draw"] = out["python"] * share, out["python"] * (1 - share)
        return out

    return {**medians(measured), "rounds": measured, "references": references,
            "full_speed": medians([measured[k] for k in fast]), "full_speed_rounds": fast}


def measure_wrapped(engine, pipelined: bool, pairs: int = 3) -> dict:
    """The frame with the compute runs' commands through wgpu-py's methods (``python``), as
    before they went through the C functions (core/native_calls.py), against the frame with
    them (``native``): medians of ``pairs`` measure_frames each, alternating, so that both see
    the same host speeds. {} where the C functions are not used."""
    if not native_calls.enabled:
        return {}
    wrapped, native = [], []
    try:
        for _ in range(pairs):
            native_calls.enabled = False
            wrapped.append(measure_frames(engine, pipelined)["python"])
            native_calls.enabled = True
            native.append(measure_frames(engine, pipelined)["python"])
    finally:
        native_calls.enabled = True
    return {"python": float(np.median(wrapped)), "native": float(np.median(native))}


def _one_frame(engine, texture) -> None:
    with engine.frame():
        engine.step(1)
        engine.draw_to(texture)


def measure_calls_alone(engine, pipelined: bool, frames: int = MEASURED_FRAMES,
                        warmup: int = WARMUP_FRAMES) -> dict:
    """The wgpu calls of one frame (a step without readback, and a draw) recorded and replayed
    alone: median milliseconds a replay (submits left out, as in measure_frames), the calls a
    frame makes, and (``by_kind_ms``) the median milliseconds of each kind of call a frame,
    from as many more replays with every call timed."""
    texture = output_texture(engine)
    every = engine.readback_every
    engine.readback_every = NO_READBACK   # a replayed readback would copy into a mapped buffer
    try:
        engine.step(1)
        calls = record_calls(lambda: _one_frame(engine, texture))
    finally:
        engine.readback_every = every
    wait = (lambda: None) if pipelined else (lambda: sync(engine.device))
    seconds, by_kind = [], []
    for index in range(warmup + frames):
        wait()
        took = replay(calls)
        if index >= warmup:
            seconds.append(took)
    for _ in range(frames):   # then each call timed, for the split by kind
        wait()
        by_kind.append(replay_by_kind(calls))
    sync(engine.device)
    texture.destroy()
    counts = call_counts(calls)
    kind_ms = {name: float(np.median([k[name] for k in by_kind]) * 1e3) for name in counts}
    return {"python": float(np.median(seconds) * 1e3), "calls": len(calls),
            "counts": dict(counts.most_common()),
            "by_kind_ms": dict(sorted(kind_ms.items(), key=lambda item: -item[1]))}


def frame_rows(sampler: dict, second: dict, every_step: dict, empty: dict, mode: str,
               other: str, passes: int, size: str, calls: dict | None = None,
               no_readback: dict | None = None, wrapped: dict | None = None) -> list[dict]:
    """The bench's rows. Indented rows break the row above them down ("of which") or measure
    the same frames another way; names fit the bench table's name column. ``no_readback``:
    the same frames with no counters read back at all; its row carries what one readback
    costs a step (the readback every step's frame less it). ``wrapped``: the same frames with
    the compute runs' commands through wgpu-py's methods (core/native_calls.py off), the
    baseline of the C calls."""
    no_submit = "ms (no submit)"
    return [
        {"name": f"sampler frame, CPU, {mode} ({passes} passes, {size})",
         "value": sampler["python"], "unit": no_submit, "target_ms": TARGET_MS,
         "of_target": sampler["python"] / TARGET_MS},
        {"name": f"  rounds at the run's fastest host speed "
                 f"({len(sampler['full_speed_rounds'])} of {len(sampler['rounds'])})",
         "value": sampler["full_speed"]["python"],
         "unit": no_submit, "of_target": sampler["full_speed"]["python"] / TARGET_MS,
         "rounds_ms": [round(r["python"], 4) for r in sampler["rounds"]]},
        {"name": "  host reference, fixed Python workload (fastest round)",
         "value": min(sampler["references"]), "unit": "ms",
         "rounds_ms": [round(ms, 4) for ms in sampler["references"]],
         "slowest_over_fastest": max(sampler["references"]) / min(sampler["references"])},
        {"name": "  of which simulation step", "value": sampler["python_step"],
         "unit": no_submit},
        {"name": "  of which drawing", "value": sampler["python_draw"], "unit": no_submit},
        {"name": "  queue.submit calls (driver), not in the above", "value": sampler["submit"],
         "unit": "ms"},
        {"name": "  the same frames, CPU time of the Python thread",
         "value": sampler["thread_cpu"], "unit": "ms (incl. submit)"},
        {"name": f"sampler frame, CPU, {other}", "value": second["python"], "unit": no_submit},
        {"name": f"sampler frame, CPU, {mode}, readback every step",
         "value": every_step["python"], "unit": no_submit},
    ] + ([] if no_readback is None else [
        {"name": f"sampler frame, CPU, {mode}, no readback", "value": no_readback["python"],
         "unit": no_submit,
         # a step's copy into the ring, map_async (which wakes wgpu-py's poll thread) and read
         "readback_ms": every_step["python"] - no_readback["python"]}]) + [
    ] + ([] if not wrapped else [
        {"name": f"sampler frame, CPU, {mode}, wgpu-py calls (baseline)",
         "value": wrapped["python"], "unit": no_submit,
         # against the frame measured in turn with it (the C calls), not the headline's rounds
         "with_c_calls_ms": wrapped["native"],
         "speedup": wrapped["python"] / max(wrapped["native"], 1e-12)}]) + [
        {"name": f"empty scene frame, CPU, {mode} (baseline)", "value": empty["python"],
         "unit": no_submit, "sampler_over_empty": sampler["python"] / empty["python"]},
    ] + ([] if calls is None else [
        {"name": f"sampler frame's wgpu calls alone ({calls['calls']}, replayed)",
         "value": calls["python"], "unit": no_submit,
         "of_the_frame": calls["python"] / sampler["python"], "calls": calls["counts"],
         # each kind's median ms a frame, every call timed (submit included)
         "by_kind_ms": {k: round(v, 4) for k, v in calls.get("by_kind_ms", {}).items()}}])


def bench_frame() -> list[dict]:
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import Scene, SceneSettings, load_scene

    path = resources.files("emberfx.scenes") / "sampler.toml"
    with resources.as_file(path) as real_path:
        scene = load_scene(real_path)
        with Engine(scene) as engine:
            software = engine.adapter.info.get("adapter_type") == "CPU"
            mode, other = ("GPU idle", "pipelined") if software else ("pipelined", "GPU idle")
            passes = len(engine.passes())
            every_step = measure_frames(engine, pipelined=not software)
            engine.readback_every = NO_READBACK
            no_readback = measure_frames(engine, pipelined=not software)
            engine.readback_every = WINDOW_READBACK_EVERY
            # a software adapter's frame takes ~30 ms of GPU work: fewer rounds keep the bench short
            sampler = measure_rounds(engine, pipelined=not software,
                                      rounds=SOFTWARE_ROUNDS if software else ROUNDS)
            second = measure_frames(engine, pipelined=software)
            wrapped = measure_wrapped(engine, pipelined=not software)
            calls = measure_calls_alone(engine, pipelined=not software)
    with Engine(Scene(SceneSettings(name="empty"))) as empty_engine:
        empty = measure_frames(empty_engine, pipelined=not software)
    size = "x".join(map(str, scene.settings.size))
    return frame_rows(sampler, second, every_step, empty, mode, other, passes, size, calls,
                      no_readback, wrapped)
