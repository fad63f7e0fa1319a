"""The trail family on a real GPU (lavapipe in CI), against the emitter's own data read each step.

The oracle keeps, per source slot, the positions the emitter reports (``state(source)``) at
each sample, newest first, and knows a birth from the emitter's data alone: a particle's age is
exactly 0.0 after the step that bore it (the emitter ages only particles alive before the
step). Positions are copied, never computed, so the comparison is exact.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.core.readback import read_buffer
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene

DT = 1.0 / 60.0


def scene_text(capacity=300, length=5, every=1, allocation="ordered", trail_first=True,
               rate=3000.0, lifetime="[0.1, 0.2]", source="jet", **trail_fields):
    """A trail "tail" on an emitter "jet"; ``trail_fields`` are more trail lines, as TOML."""
    fields = {"source": f'"{source}"', "length": length, "every": every, "width": 0.05,
              **trail_fields}
    trail = '\n[[entity]]\nname = "tail"\n[entity.trail]\n' + "".join(
        f"{key} = {value}\n" for key, value in fields.items())
    emitter = f"""
[[entity]]
name = "jet"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = {lifetime}
speed = [1.0, 3.0]
position = [0.5, -0.25, 0.0]
direction = [0.3, 1.0, 0.1]
spread_deg = 25.0
allocation = "{allocation}"
"""
    head = f"""
[scene]
name = "trails-test"
seed = 7
fixed_dt = {DT!r}
size = [64, 48]
[camera]
kind = "perspective"
position = [0.0, 0.5, 6.0]
target = [0.0, 0.5, 0.0]
"""
    return head + (trail + emitter if trail_first else emitter + trail)


def make(**kw) -> Engine:
    return Engine(loads_scene(scene_text(**kw)), size=(64, 48))


class RingOracle:
    """Per slot, the last ``length`` sampled positions, newest first; a slot born since the
    previous sample is filled with its position at this sample. Before any sample: zeros."""

    def __init__(self, capacity: int, length: int):
        self.rings = np.zeros((capacity, length, 3), np.float32)
        self.born_pending = np.zeros(capacity, bool)
        self.rebirths = 0   # fills of a ring that held another particle's path

    def step(self, state: dict) -> None:
        """After every step: note the births (alive with age exactly 0)."""
        self.born_pending |= state["alive"] & (state["age"] == 0.0)

    def sample(self, state: dict) -> None:
        born = self.born_pending & state["alive"]
        position = state["position"]
        self.rebirths += int((born & np.any(self.rings != 0.0, axis=(1, 2))).sum())
        self.rings[:, 1:] = self.rings[:, :-1].copy()
        self.rings[:, 0] = position
        self.rings[born] = position[born][:, None, :]
        self.born_pending[:] = False


@pytest.mark.parametrize("allocation", ["ordered", "atomic"])
@pytest.mark.parametrize("capacity", [300, 1])   # not multiples of the 256-slot workgroup
# a random lifetime gives a reborn slot a new lifetime; a fixed one leaves only its age reset
@pytest.mark.parametrize("lifetime", ["[0.1, 0.2]", "0.1"])
def test_points_are_the_emitters_positions_at_each_step_newest_first(gpu, allocation, capacity,
                                                                     lifetime):
    length = 5
    engine = make(capacity=capacity, length=length, allocation=allocation, lifetime=lifetime)
    oracle = RingOracle(capacity, length)
    for n in range(24):
        engine.step()
        source = engine.state("jet")
        oracle.step(source)
        oracle.sample(source)
        points = engine.state("tail")["points"]
        assert points.shape == (capacity, length, 3) and points.dtype == np.float32
        assert np.array_equal(points, oracle.rings), f"step {n}"
    if capacity > 1:   # lifetimes of 6-12 steps: slots died and were born again
        assert oracle.rebirths > 0
    engine.close()


def test_a_slot_born_in_the_last_step_holds_its_birth_position_everywhere(gpu):
    engine = make(capacity=300, length=7)
    seen = 0
    for _ in range(15):
        engine.step()
        source = engine.state("jet")
        points = engine.state("tail")["points"]
        newborn = np.nonzero(source["alive"] & (source["age"] == 0.0))[0]
        for slot in newborn:
            assert np.array_equal(points[slot], np.repeat(source["position"][slot][None], 7, 0))
            assert np.any(source["position"][slot] != 0.0)   # a real place, not the origin
        seen += len(newborn)
    assert seen > 300   # the pool turned over: births into slots that held a trail
    engine.close()


def test_every_third_step_samples_and_holds_in_between(gpu):
    every, length = 3, 4
    engine = make(capacity=260, length=length, every=every)
    oracle = RingOracle(260, length)
    for n in range(20):
        engine.step()
        source = engine.state("jet")
        oracle.step(source)
        if n % every == 0:   # the first step samples, then every third
            oracle.sample(source)
        assert np.array_equal(engine.state("tail")["points"], oracle.rings), f"step {n}"
    assert oracle.rebirths > 0
    engine.close()


def test_the_draw_is_one_indirect_ribbon_per_alive_particle(gpu):
    length = 6
    engine = make(capacity=300, length=length)
    engine.step(9)
    engine.render()
    args = np.frombuffer(read_buffer(engine.device, engine.resources["tail/trail_args"]),
                         np.uint32)
    alive = int(engine.state("jet")["alive"].sum())
    assert alive > 0
    assert args.tolist() == [6 * (length - 1), alive, 0, 0]
    assert [p for p in engine.passes() if ":trail:" in p] == [
        "tail:trail:sample", "tail:trail:prepare", "tail:trail:draw"]
    engine.close()


ORTHOGRAPHIC = 'kind = "orthographic"\ncenter = [0.0, 0.5]\nheight = 5.0\n'


@pytest.mark.parametrize("camera", ["perspective", "orthographic"])
def test_new_rings_draw_nothing_and_older_ones_draw_ribbons(gpu, camera):
    """After the first step every ring holds one repeated point (no ribbon from the origin):
    the picture is exactly the emitter's alone. Later the ribbons add light."""
    def picture(text, steps):
        engine = Engine(loads_scene(text), size=(96, 72))
        engine.step(steps)
        image = engine.render().astype(np.int64)
        engine.close()
        return image

    with_trail = scene_text(capacity=300, length=8, trail_first=False, lifetime="1.0", width=0.1)
    if camera == "orthographic":
        perspective = with_trail[with_trail.index('kind = "perspective"'):
                                 with_trail.index("\n[[entity]]")]
        with_trail = with_trail.replace(perspective, ORTHOGRAPHIC)
    alone = with_trail[:with_trail.index('\n[[entity]]\nname = "tail"')]
    assert np.array_equal(picture(with_trail, 1), picture(alone, 1))
    later_with, later_alone = picture(with_trail, 20), picture(alone, 20)
    brighter = (later_with[..., :3] - later_alone[..., :3]).sum(axis=2)
    assert brighter.min() >= 0            # additive: light is only added
    assert (brighter > 0).sum() > 50      # ribbons behind the particles


def test_trail_on_the_emitters_own_entity(gpu):
    text = scene_text(capacity=100, length=3, trail_first=False)
    text = text.replace('\n[[entity]]\nname = "tail"\n', "\n")   # the trail table joins "jet"
    engine = Engine(loads_scene(text), size=(32, 24))
    assert engine.entity_names() == ["jet"]
    oracle = RingOracle(100, 3)
    for _ in range(4):
        engine.step()
        source = engine.state("jet")
        oracle.step(source)
        oracle.sample(source)
    state = engine.state("jet")
    assert np.array_equal(state["points"], oracle.rings)
    assert state["position"].shape == (100, 3)   # the emitter's state is there as well
    assert "jet/trail_points" in engine.resources and "jet/particles" in engine.resources
    engine.close()


def test_the_trail_rebuilds_when_the_source_is_rebuilt(gpu, tmp_path):
    engine = make(capacity=300, length=4)
    engine.step(3)
    engine.entity("jet").emitter.capacity = 333   # a live edit: the pool is made again
    oracle = RingOracle(333, 4)
    for n in range(6):
        engine.step()
        source = engine.state("jet")
        oracle.step(source)
        oracle.sample(source)
        assert np.array_equal(engine.state("tail")["points"], oracle.rings), f"step {n}"
    engine.entity("jet").emitter.blend = "alpha"  # same capacity, new buffers: bound again
    engine.step(2)
    engine.render()
    assert engine.state("tail")["points"].shape == (333, 4, 3)

    path = tmp_path / "scene.toml"   # a hot reload of the file with another capacity
    path.write_text(scene_text(capacity=129, length=4))
    engine.reload(load_scene(path))
    oracle = RingOracle(129, 4)
    for n in range(5):
        engine.step()
        source = engine.state("jet")
        oracle.step(source)
        oracle.sample(source)
        assert np.array_equal(engine.state("tail")["points"], oracle.rings), f"step {n}"
    engine.render()
    engine.close()


def test_deleting_the_source_leaves_a_trail_that_draws_nothing_until_it_returns(gpu):
    engine = make(capacity=300, length=4)
    engine.step(3)
    engine.delete("jet")
    assert not [p for p in engine.passes() if ":trail:" in p]
    engine.step(2)
    engine.render()
    assert engine.state("tail")["points"].shape == (0, 4, 3)
    engine.spawn("jet", {"emitter": {"capacity": 50, "rate": 600.0}})
    assert [p for p in engine.passes() if ":trail:" in p] == [
        "tail:trail:sample", "tail:trail:prepare", "tail:trail:draw"]
    engine.step()
    source = engine.state("jet")
    points = engine.state("tail")["points"]
    assert points.shape == (50, 4, 3)
    alive = source["alive"]
    assert alive.sum() == 10   # 600 per second, one step
    assert np.array_equal(points[alive], np.repeat(source["position"][alive][:, None], 4, 1))
    engine.close()


def test_live_edits_of_width_color_and_every_apply_without_a_rebuild(gpu):
    engine = make(capacity=300, length=4)
    engine.step(2)
    before = engine.resources["tail/trail_points"]
    trail = engine.entity("tail").trail
    trail.width = 0.1
    trail.color = ["#ffffff", "#00000000"]
    trail.every = 2
    engine.step(2)
    assert engine.resources["tail/trail_points"] is before
    engine.render()
    engine.close()


# validation ----------------------------------------------------------------------------------

def scene_error(text: str) -> str:
    with pytest.raises(SceneError) as info:
        loads_scene(text)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_misspelt_source_is_refused_with_a_suggestion():
    message = scene_error(scene_text(source="jte"))
    assert "tail" in message and "trail.source" in message
    assert "no entity named 'jte'" in message and "did you mean 'jet'" in message


def test_a_source_without_an_emitter_is_refused():
    text = scene_text(source="well") + """
[[entity]]
name = "well"
[entity.attractor]
position = [0.0, 0.0, 0.0]
"""
    message = scene_error(text)
    assert "trail.source" in message
    assert "expected an entity with emitter, found 'well' with attractor" in message


@pytest.mark.parametrize("field, value", [
    ("length", 1), ("length", 257), ("every", 0), ("width", -0.1), ("color", '"orange"'),
    ("color", "[]"), ("width_curve", "[]"),
])
def test_bad_values_are_refused_naming_the_field(field, value):
    message = scene_error(scene_text(**{field: value}))
    assert f"trail.{field}" in message and "'tail'" in message and "expected" in message


def test_a_live_edit_naming_a_missing_source_is_undone(gpu):
    engine = make(capacity=50, length=3)
    engine.entity("tail").trail.source = "nowhere"
    with pytest.raises(SceneError) as info:
        engine.step()
    assert "trail.source" in str(info.value) and "nowhere" in str(info.value)
    assert engine.entity("tail").trail.source == "jet"
    engine.step()
    assert engine.state("tail")["points"].shape == (50, 3, 3)
    engine.close()


def test_the_cli_refuses_a_bad_source_in_one_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(scene_text(source="jte"))
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "trail.source" in lines[0] and "did you mean 'jet'" in lines[0]
