"""The Emitter system on a real GPU (lavapipe in CI) against the numpy model in emitter_model.py."""

from __future__ import annotations

import emitter_model as model
import numpy as np
import pytest

from emberfx.core.errors import DeviceLimitError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene

DT = 1.0 / 60.0
MODES = ["ordered", "atomic", "ticket"]


def scene_text(capacity=1000, rate=600.0, lifetime="0.5", speed="[1.0, 3.0]", allocation="ordered",
               drag=0.3, extra=""):
    return f"""
[scene]
name = "test"
seed = 7
fixed_dt = {DT!r}
size = [64, 48]
[camera]
kind = "orthographic"
center = [0.0, 1.0]
height = 6.0
[[entity]]
name = "other"
[entity.emitter]
capacity = 3
rate = 0.0
[[entity]]
name = "jet"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = {lifetime}
speed = {speed}
position = [0.5, -0.25, 0.0]
direction = [0.3, 1.0, 0.1]
spread_deg = 25.0
gravity = [0.0, -9.81, 0.0]
drag = {drag}
allocation = "{allocation}"
{extra}
"""


def make(gpu, **kw) -> Engine:
    return Engine(loads_scene(scene_text(**kw)), size=(64, 48))


def counters(engine):
    return engine.system_of("jet", "emitter").counters(engine._ref("jet"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("capacity", [1000, 333])   # not a multiple of 256 or 32
def test_alive_count_is_rate_times_min_of_time_and_lifetime(gpu, mode, capacity):
    rate, life = 600.0, 0.5             # 10 per step; R L = 300 < capacity
    engine = make(gpu, capacity=capacity, rate=rate, lifetime=str(life), allocation=mode)
    per_step = rate * DT
    for n in range(1, 61):
        engine.step()
        alive = int(engine.state("jet")["alive"].sum())
        expected = rate * min(n * DT, life)
        assert abs(alive - expected) <= per_step + 1e-9, (n, alive, expected)


@pytest.mark.parametrize("mode", MODES)
def test_pool_smaller_than_rate_times_lifetime_stays_exactly_full(gpu, mode):
    engine = make(gpu, capacity=77, rate=600.0, lifetime="1.0", allocation=mode)
    engine.step(8)                       # 80 births asked for, 77 slots
    for _ in range(40):
        engine.step()
        c = counters(engine)
        assert c["alive"] == 77
        assert int(engine.state("jet")["alive"].sum()) == 77


@pytest.mark.parametrize("mode", MODES)
def test_births_are_exact_and_unique_per_step(gpu, mode):
    engine = make(gpu, capacity=300, rate=2400.0, lifetime="[0.1, 0.6]", allocation=mode)
    for _ in range(25):
        before = engine.state("jet")
        engine.step()
        after = engine.state("jet")
        c = counters(engine)
        # slots free after this step's ageing, before births: model the ageing in float32
        aged = before["age"] + np.float32(DT)
        survived = before["alive"] & (aged < before["lifetime"])
        free = ~survived
        newborn = after["alive"] & (after["age"] == 0.0)
        expected_births = min(c["step_budget"], int(free.sum()))
        assert c["born"] == expected_births == int(newborn.sum())
        assert not (newborn & survived).any()          # only free slots are born, each once
        if mode == "ordered":
            assert np.array_equal(np.flatnonzero(newborn),
                                  model.ordered_births(free, c["step_budget"]))
        if mode == "atomic":                           # the undo leaves exactly the unused budget
            assert c["budget"] == c["step_budget"] - c["born"]


def test_fractional_rate_carries_across_steps(gpu):
    rate = 7.3                           # 0.1217 births per step
    engine = make(gpu, capacity=100, rate=rate, lifetime="100.0")
    expected = np.cumsum(model.budgets(rate, DT, 200))
    for n in range(200):
        engine.step()
        assert int(engine.state("jet")["alive"].sum()) == expected[n]
    assert expected[-1] == int(rate * 200 * DT)


@pytest.mark.parametrize("mode", MODES)
def test_compaction_lists_exactly_the_alive_slots_in_order(gpu, mode):
    """The scan-based compaction: the draw's instance count is the alive count and the alive list
    is exactly the alive slots, in slot order (so it is the same on every run, in every mode)."""
    engine = make(gpu, capacity=1313, rate=3000.0, lifetime="[0.2, 0.9]", allocation=mode)
    system, ref = engine.system_of("jet", "emitter"), engine._ref("jet")
    for _ in range(30):
        engine.step()
        c = counters(engine)
        alive = engine.state("jet")["alive"]
        assert c["draw_vertices"] == 6
        assert c["draw_instances"] == c["alive"] == int(alive.sum())
        np.testing.assert_array_equal(system.alive_list(ref), np.flatnonzero(alive))


def test_births_and_integration_match_numpy_model(gpu):
    """Positions, velocities and lifetimes of every slot after each step, within float32 error:
    births from the PCG model, motion from semi-implicit Euler in float64."""
    engine = make(gpu, capacity=700, rate=1800.0, lifetime="[0.3, 0.8]", speed="[2.0, 5.0]")
    comp = engine.entity("jet").emitter
    pos, vel = np.zeros((700, 3)), np.zeros((700, 3))
    age, life = np.zeros(700), np.zeros(700)
    for frame, budget in enumerate(model.budgets(comp.rate, DT, 40)):
        alive = age < life
        p2, v2, a2 = model.integrate(pos[alive], vel[alive], age[alive], DT,
                                     comp.gravity, comp.drag)
        pos[alive], vel[alive], age[alive] = p2, v2, a2
        free = ~(age < life)
        slots = model.ordered_births(free, budget)
        pos[slots], vel[slots], life[slots] = model.spawn(
            slots, seed=7, entity=1, frame=frame, origin=comp.position, direction=comp.direction,
            spread_deg=comp.spread_deg, speed=comp.speed, lifetime=comp.lifetime)
        age[slots] = 0.0
        engine.step()
        gpu_state = engine.state("jet")
        np.testing.assert_array_equal(gpu_state["alive"], age < life)
        np.testing.assert_allclose(gpu_state["lifetime"], life, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(gpu_state["velocity"], vel, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(gpu_state["position"], pos, rtol=1e-4, atol=1e-4)


def test_two_engines_give_byte_identical_state(gpu):
    a = make(gpu, capacity=20000, rate=10000.0, lifetime="[0.5, 1.5]")
    b = make(gpu, capacity=20000, rate=10000.0, lifetime="[0.5, 1.5]")
    a.step(120)
    b.step(120)
    sa, sb = a.state("jet"), b.state("jet")
    assert sa.keys() == sb.keys()
    for key in sa:
        assert sa[key].tobytes() == sb[key].tobytes(), key
    assert 0 < sa["alive"].sum() < 20000   # the budget never covers every free slot


def test_zero_rate_and_tiny_pool_draw_nothing_and_render(gpu):
    engine = make(gpu, capacity=1, rate=0.0)
    engine.step(5)
    assert counters(engine)["draw_instances"] == 0
    image = engine.render()
    assert image.shape == (48, 64, 4)
    assert (image == image[0, 0]).all()          # only the background


def test_live_edit_of_rate_and_rebuild_on_capacity(gpu):
    engine = make(gpu, capacity=400, rate=600.0, lifetime="10.0")
    engine.step(3)
    engine.entity("jet").emitter.rate = 0.0
    engine.step(3)
    assert int(engine.state("jet")["alive"].sum()) == 30
    engine.entity("jet").emitter.capacity = 900
    engine.entity("jet").emitter.rate = 60.0
    engine.step(2)
    state = engine.state("jet")
    assert state["alive"].shape == (900,) and int(state["alive"].sum()) == 2


def test_capacity_beyond_device_limit_is_refused_with_numbers(gpu):
    with pytest.raises(DeviceLimitError) as info:
        make(gpu, capacity=1 << 28)
    message = str(info.value)
    assert "emitter.capacity" in message and "8,589,934,592 bytes" in message
    assert f"{gpu.limits['max-storage-buffer-binding-size']:,}" in message


def test_stats_report_counters_through_the_readback_ring(gpu):
    engine = make(gpu, capacity=1000, rate=600.0, lifetime="5.0")
    engine.step(10)
    stats = engine.stats()
    jet = stats["entities"]["jet"]
    assert stats["frame"] == 10 and stats["compute_passes_per_step"] == 1
    if stats["readback_frame"] is not None:       # late, never a stall
        # a step or two late on lavapipe; a GPU shared by many processes may land it later
        assert stats["readback_frame"] >= (7 if gpu.is_software else 0)
        assert jet["alive"] == 10 * (stats["readback_frame"] + 1)
    engine.state("jet")   # a blocking read: every copy in flight lands
    engine.step(1)        # and this step collects the newest, on any adapter
    stats = engine.stats()
    assert stats["readback_frame"] >= 9
    assert stats["entities"]["jet"]["alive"] == 10 * (stats["readback_frame"] + 1)
    engine.step(3)
    engine.render()
    assert engine.stats()["entities"]["jet"]["alive"] >= 100
