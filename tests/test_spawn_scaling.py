"""Spawning and deleting at run time: the cost of one spawn or delete does not grow with the
number of entities, and the counters read back stay right while entities come and go.

Scaling is measured, never wall-clock time: the per-spawn time in a world of WORLD_LARGE
emitters is compared with the per-spawn time in a world of WORLD_SMALL (10x fewer). The engine
steps a frame between rounds of spawns, as a script spawning from its update hook would, so each
spawn meets a built frame graph and readbacks in flight. The step itself is not timed: encoding
a frame costs what the frame holds, whatever was spawned. Each figure is the best of several
rounds, so another process on the machine inflates neither side.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene

WORLD_SMALL = 100
WORLD_LARGE = 1000
ROUNDS = 5
PER_ROUND = 10
MAX_RATIO = 3.0   # per-spawn cost at 10x the entities; growing with the world would give ~10

HEAD = """
[scene]
name = "spawning"
seed = 3
fixed_dt = 0.5
size = [32, 32]
[camera]
kind = "orthographic"
height = 6.0
"""
SMALL_EMITTER = {"capacity": 64, "rate": 10.0, "lifetime": 1.0}
_labels = itertools.count()


def world_of(count: int) -> Engine:
    engine = Engine(loads_scene(HEAD))
    for i in range(count):
        engine.spawn(f"base{i}", {"emitter": SMALL_EMITTER})
    engine.step()
    return engine


def best_round(engine: Engine, work) -> float:
    """The fastest of ROUNDS rounds of PER_ROUND calls of ``work(engine, label)``, seconds per
    call, with a step between rounds."""
    best = float("inf")
    for _ in range(ROUNDS):
        labels = [str(next(_labels)) for _ in range(PER_ROUND)]
        start = time.perf_counter()
        for label in labels:
            work(engine, label)
        best = min(best, time.perf_counter() - start)
        engine.step()
    return best / PER_ROUND


def spawn(engine: Engine, label: str) -> None:
    engine.spawn(f"new-{label}", {"emitter": SMALL_EMITTER})


def spawn_and_delete(engine: Engine, label: str) -> None:
    engine.spawn(f"brief-{label}", {"emitter": SMALL_EMITTER})
    engine.delete(f"brief-{label}")


def test_spawn_and_delete_cost_the_same_in_a_world_ten_times_larger(gpu):
    with world_of(WORLD_SMALL) as small, world_of(WORLD_LARGE) as large:
        costs = {}
        for name, work in (("spawn", spawn), ("spawn+delete", spawn_and_delete)):
            best_round(small, work)   # warm up: pipelines, allocator
            costs[name] = (best_round(small, work), best_round(large, work))
        for name, (in_small, in_large) in costs.items():
            ratio = in_large / in_small
            assert ratio <= MAX_RATIO, (
                f"{name}: {in_small * 1e3:.2f} ms per call with {WORLD_SMALL} entities, "
                f"{in_large * 1e3:.2f} ms with {WORLD_LARGE} (x{ratio:.1f})")
        # the large world simulates every entity: none was lost or left over
        assert len(large.entity_names()) == WORLD_LARGE + ROUNDS * PER_ROUND
        alive = [large.state(n)["alive"].sum() for n in ("base0", f"base{WORLD_LARGE - 1}")]
        assert all(a > 0 for a in alive)


def readback_alive(engine: Engine) -> tuple[int, dict[str, int]]:
    """Step until the readback ring has a result; (its frame, alive count per entity)."""
    for _ in range(20):
        engine.step()
        stats = engine.stats()
        if stats["readback_frame"] is not None:
            return stats["readback_frame"], {
                name: info["alive"] for name, info in stats["entities"].items() if "alive" in info}
    raise AssertionError("no readback in 20 steps")


def test_read_back_counters_stay_right_as_entities_come_and_go(gpu):
    """Entity i emits i + 1 particles per step (rate 2 (i + 1) /s, fixed_dt 0.5 s, long lives),
    so after the step of frame f, an entity spawned before frame s0 holds (f - s0 + 1)(i + 1).
    Spawning 40 emitters outgrows the first gather buffer; deletes leave holes that later
    spawns must not read."""
    engine = Engine(loads_scene(HEAD))
    first_step: dict[str, tuple[int, int]] = {}   # name -> (first frame, births per step)

    def add(i: int) -> None:
        name = f"e{i}"
        engine.spawn(name, {"emitter": {"capacity": 4096, "rate": 2.0 * (i + 1),
                                        "lifetime": 1000.0}})
        first_step[name] = (engine.stats()["frame"], i + 1)

    def check() -> None:
        frame, alive = readback_alive(engine)
        expected = {name: max(0, frame - s0 + 1) * per_step
                    for name, (s0, per_step) in first_step.items()}
        assert alive == expected, f"readback of frame {frame}"
        for name, (s0, per_step) in first_step.items():   # the GPU state agrees
            now = engine.stats()["frame"]
            assert int(engine.state(name)["alive"].sum()) == (now - s0) * per_step

    with engine:
        for i in range(3):
            add(i)
        check()
        for i in range(3, 40):
            add(i)
            if i % 7 == 0:
                engine.step()
        check()
        for i in range(0, 40, 3):
            engine.delete(f"e{i}")
            del first_step[f"e{i}"]
        for i in range(40, 45):
            add(i)
        check()


def test_a_spawned_force_reaches_the_emitters_already_running(gpu):
    """The emitters' update is compiled without the force loop while the scene has no force
    entity; spawning the first one (and deleting it) must switch every emitter over."""
    text = HEAD.replace("fixed_dt = 0.5", "fixed_dt = 0.125") + """
[[entity]]
name = "still"
[entity.emitter]
capacity = 256
rate = 8.0
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
"""
    dt, strength, softening = 0.125, 2.0, 0.1
    with Engine(loads_scene(text)) as engine:
        engine.step(2)
        before = engine.state("still")
        resting = before["alive"]
        assert resting.sum() == 2 and np.all(before["velocity"][resting] == 0.0)
        engine.spawn("well", {"attractor": {"position": [1.0, 0.0, 0.0], "strength": strength,
                                            "softening": softening}})
        engine.step()
        velocity = engine.state("still")["velocity"][resting]
        pull = strength / (1.0 + softening**2) ** 1.5        # |r| = 1 along +x
        np.testing.assert_allclose(velocity, [[pull * dt, 0.0, 0.0]] * 2, rtol=1e-5, atol=1e-7)
        engine.delete("well")
        engine.step()
        after = engine.state("still")["velocity"][resting]
        np.testing.assert_array_equal(after, velocity)        # no force left: v is unchanged
