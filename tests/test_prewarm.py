"""Emitter prewarm: batched submissions give exactly the bytes of stepping one step at a time,
the work is bounded (capacity x steps) with a one-line error, and a long prewarm says so."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import emberfx.systems.emitter.prewarm as emitter_prewarm
from emberfx.core import step_batches
from emberfx.core.errors import SceneError
from emberfx.core.frame_graph import SIMULATION_PHASES, FrameGraph, Phase
from emberfx.core.step_batches import StepBatching
from emberfx.core.system import StepInfo
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter import step_upload
from emberfx.systems.emitter.component import MAX_PREWARM_WORK, Emitter

DT = 0.02
STEPS = 31                      # prime: no batch size above 1 divides it
PREWARM = STEPS * DT
HEAD = f"""
[scene]
name = "prewarm"
seed = 9
fixed_dt = {DT!r}
size = [32, 32]
[camera]
kind = "orthographic"
height = 6.0
"""
# ragged capacities (none a multiple of the 256-slot block), a burst inside the prewarm window,
# a gusting wind (its force record changes every step) and an attractor
SCENE = HEAD + f"""
[[entity]]
name = "gust"
[entity.force_field]
kind = "wind"
direction = [1.0, 0.0, 0.0]
strength = 2.0
gust = 0.8
frequency = 3.0

[[entity]]
name = "well"
[entity.attractor]
position = [0.5, 1.0, 0.0]
strength = 3.0

[[entity]]
name = "small"
[entity.emitter]
capacity = 1000
rate = 900.0
lifetime = [0.1, 0.5]
speed = [0.5, 2.0]
drag = 0.3
prewarm = {PREWARM!r}

[[entity]]
name = "ragged"
[entity.emitter]
capacity = 4097
rate = 3000.0
lifetime = [0.2, 0.9]
shape = {{ kind = "sphere", radius = 0.3 }}
bursts = [{{ time = 0.0, count = 700 }}]
prewarm = {PREWARM!r}

[[entity]]
name = "tiny"
[entity.emitter]
capacity = 300
rate = 200.0
lifetime = 2.0
affected_by = ["well"]
prewarm = {PREWARM!r}
"""
CAPACITIES = {"small": 1000, "ragged": 4097, "tiny": 300}
BATCH_WORK = 7000   # particle-steps per submission in the test: batches of 7, 1 and 23 steps


def stepwise_prewarm(system, pool) -> None:
    """The reference: each prewarm step uploads its uniforms with queue.write_buffer, as a
    normal step does, and is submitted alone."""
    dt, seed = system.shared.fixed_dt, system.shared.seed
    steps = pool.component.prewarm_steps(dt)
    graph = FrameGraph([p for p in pool.passes if p.phase in SIMULATION_PHASES
                        and p.phase != Phase.READBACK], system.resources.persistent())
    for k in range(steps):
        step = StepInfo(frame=emitter_prewarm.PREWARM_FRAMES + k, dt=dt, seed=seed)
        step_upload.upload(system, pool.buffers, [pool], pool.arrays, step, (k - steps) * dt)
        system.records.upload_pool(pool)   # its params and counters (pages hold them)
        encoder = system.device.create_command_encoder(label="test:prewarm:stepwise")
        graph.encode(encoder, {})
        system.device.queue.submit([encoder.finish()])
    pool.births.last_position = None


def states(engine) -> dict:
    return {name: engine.state(name) for name in CAPACITIES}


def assert_identical(batched: dict, stepwise: dict) -> None:
    for name in CAPACITIES:
        assert batched[name].keys() == stepwise[name].keys()
        for key, value in stepwise[name].items():
            assert np.array_equal(batched[name][key], value), f"{name}: {key} differs"


def test_batched_prewarm_is_byte_identical_to_stepping_one_step_at_a_time(gpu, monkeypatch):
    batching = StepBatching(work=BATCH_WORK)
    batches = {name: step_batches.batch_steps(cap, batching) for name, cap in CAPACITIES.items()}
    assert batches == {"small": 7, "ragged": 1, "tiny": 23}
    assert STEPS % 7 and STEPS % 23   # the last batch of each is a partial one
    scene = loads_scene(SCENE)
    with Engine(scene, step_batching=batching) as batched_engine:
        batched = states(batched_engine)
        counters = {n: batched_engine.system_of(n, "emitter").counters(batched_engine.entity_ref(n))
                    for n in CAPACITIES}
        monkeypatch.setattr(emitter_prewarm, "prewarm", stepwise_prewarm)
        with Engine(scene) as stepwise_engine:
            stepwise = states(stepwise_engine)
            assert_identical(batched, stepwise)
            for n in CAPACITIES:
                system = stepwise_engine.system_of(n, "emitter")
                assert counters[n] == system.counters(stepwise_engine.entity_ref(n))
            # the prewarm is real: the pools are busy before the first step
            assert all(batched[n]["alive"].sum() > 0 for n in CAPACITIES)
            # and it leaves the birth bookkeeping (carry, bursts) as stepping does
            batched_engine.step(4)
            stepwise_engine.step(4)
            assert_identical(states(batched_engine), states(stepwise_engine))


def test_prewarm_batches_respect_the_work_per_submission():
    batch_steps, default = step_batches.batch_steps, step_batches.DEFAULT
    assert batch_steps(1) == default.steps
    big = 4_000_000
    assert batch_steps(big) == max(1, default.work // big)
    assert batch_steps(default.work + 1) == 1
    fewer = StepBatching(steps=5, work=1000)
    assert batch_steps(1, fewer) == 5 and batch_steps(300, fewer) == 3


def test_the_prewarm_bound_is_on_work_not_seconds():
    capacity = 1 << 20
    steps_allowed = MAX_PREWARM_WORK // capacity          # 1024 steps
    dt = 0.05                                            # 51.2 s allowed, under the 60 s cap
    at_bound = Emitter(capacity=capacity, prewarm=steps_allowed * dt)
    assert at_bound.prewarm_steps(dt) == steps_allowed
    assert at_bound.prewarm_problem(dt) is None
    over = Emitter(capacity=capacity, prewarm=(steps_allowed + 1) * dt)
    problem = over.prewarm_problem(dt)
    assert problem is not None
    for number in (f"{MAX_PREWARM_WORK:,}", f"{capacity:,} slots", f"{steps_allowed + 1:,} steps",
                   f"{capacity * (steps_allowed + 1):,}", "51.2 s"):
        assert number in problem
    # the same seconds at a coarser timestep are fewer steps, and allowed
    assert over.prewarm_problem(0.1) is None
    # a small pool may prewarm for the full 60 s
    assert Emitter(capacity=200_000, prewarm=60.0).prewarm_problem(1 / 60) is None


def test_a_prewarm_beyond_the_bound_is_a_one_line_error_naming_entity_and_field(gpu):
    text = HEAD + """
[[entity]]
name = "huge"
[entity.emitter]
capacity = 4000000
prewarm = 60.0
"""
    with pytest.raises(SceneError) as caught:   # the loader checks it, so validate refuses it
        loads_scene(text, path="huge.toml")
    check_message(str(caught.value))
    # a scene built in Python skips the loader: the engine refuses it before allocating
    scene = loads_scene(HEAD, path="huge.toml")
    scene.add("huge", emitter=Emitter(capacity=4_000_000, prewarm=60.0))
    with pytest.raises(SceneError) as caught:
        Engine(scene)
    check_message(str(caught.value))


def check_message(message: str) -> None:
    assert "\n" not in message
    where, _, detail = message.partition(": entity 'huge': emitter.prewarm: ")
    assert where.endswith("huge.toml") and detail
    steps = round(60.0 / DT)
    assert f"4,000,000 slots x {steps:,} steps" in message
    assert f"= {4_000_000 * steps:,}" in message
    assert f"<= {MAX_PREWARM_WORK:,} particle-steps" in message


def test_the_cli_reports_the_bound_in_one_line_without_a_traceback(gpu, tmp_path):
    scene = tmp_path / "huge.toml"
    scene.write_text(HEAD + """
[[entity]]
name = "huge"
[entity.emitter]
capacity = 4000000
prewarm = 60.0
""")
    result = subprocess.run(
        [sys.executable, "-m", "emberfx", "render", str(scene), "--frames", "1",
         "--out", str(tmp_path / "out.png")], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr
    assert errors[0].startswith("emberfx: error: ")
    assert "entity 'huge': emitter.prewarm:" in errors[0]
    assert "4,000,000 slots x 3,000 steps" in errors[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.png").exists()


def test_a_long_prewarm_says_that_it_runs(gpu, capsys):
    text = HEAD + f"""
[[entity]]
name = "warm"
[entity.emitter]
capacity = 1000
rate = 500.0
prewarm = {PREWARM!r}
"""
    with Engine(loads_scene(text), step_batching=StepBatching(notice_work=1000 * STEPS)):
        pass
    err = capsys.readouterr().err
    assert (f"emberfx: entity 'warm': prewarming {PREWARM:g} s = {STEPS} steps of 1,000 slots "
            f"({1000 * STEPS:,} particle-steps)") in err
    with Engine(loads_scene(text), step_batching=StepBatching(notice_work=1000 * STEPS + 1)):
        pass
    assert "prewarming" not in capsys.readouterr().err   # a short one stays quiet
