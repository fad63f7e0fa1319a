"""The Engine's notices (runtime/core/events.py): the table's order and announcements, and on
the GPU that the emitters sample the vector fields the force_field system announces, whichever
system was made first, and that two Engines alive together hear only their own notices."""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.core.events import Events
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.model.transforms import rotation_matrix

# ----------------------------------------------------------------------------------- the table


Log = list[tuple[str, tuple]]


class Listener:
    def __init__(self, log: Log, tag: str):
        self.log, self.tag = log, tag

    def heard(self, *args) -> None:
        self.log.append((self.tag, args))


def test_handlers_run_in_the_order_set_each_once():
    events, log = Events(), Log()
    first, second = Listener(log, "first"), Listener(log, "second")
    events.set_handler("moved", second.heard)
    events.set_handler("moved", first.heard)
    events.set_handler("moved", second.heard)   # again: still once, in its first place
    events.dispatch_event("moved", 1, "x")
    events.dispatch_event("other")
    assert log == [("second", (1, "x")), ("first", (1, "x"))]
    events.remove_handler("moved", second.heard)
    events.remove_handler("moved", second.heard)   # nothing left to remove: no error
    events.dispatch_event("moved")
    assert log[2:] == [("first", ())]


def test_forget_removes_every_handler_of_one_owner():
    events, log = Events(), Log()
    gone, kept = Listener(log, "gone"), Listener(log, "kept")
    for name in ("a", "b"):
        events.set_handler(name, gone.heard)
        events.set_handler(name, kept.heard)
    events.forget(gone)
    events.dispatch_event("a")
    events.dispatch_event("b")
    assert log == [("kept", ()), ("kept", ())]


def test_an_announcement_reaches_handlers_set_later_until_forgotten():
    events, log = Events(), Log()
    early, late, later = Listener(log, "early"), Listener(log, "late"), Listener(log, "later")
    events.set_handler("state", early.heard)
    events.announce("state", 1)
    events.announce("state", 2)
    events.set_handler("state", late.heard)   # hears the last announcement at once
    assert log == [("early", (1,)), ("early", (2,)), ("late", (2,))]
    events.dispatch_event("plain", 3)         # a plain notice is not kept
    events.set_handler("plain", later.heard)
    events.forget_announcements()
    events.set_handler("state", later.heard)
    assert log[3:] == []


def test_a_failing_handler_stops_the_dispatch_and_reaches_the_sender():
    events, log = Events(), Log()

    def broken() -> None:
        raise RuntimeError("handler failed")

    events.set_handler("x", broken)
    events.set_handler("x", Listener(log, "after").heard)
    with pytest.raises(RuntimeError, match="handler failed"):
        events.dispatch_event("x")
    assert log == []


# ------------------------------------------------------------------------------------ the GPU

DT = 1.0 / 60.0
HEAD = f"""
[scene]
name = "events"
seed = 5
fixed_dt = {DT!r}
size = [16, 16]
[camera]
kind = "orthographic"
height = 4.0
"""
ROTATION = (0.0, 30.0, 10.0)
STRENGTH = 2.0
DUST = """
[[entity]]
name = "dust"
[entity.emitter]
capacity = 64
rate = 0.0
bursts = [{ time = 0.0, count = 64 }]
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
shape = { kind = "box", size = [1.0, 1.0, 1.0] }
"""
WIND = f"""
[[entity]]
name = "wind"
[entity.force_field]
kind = "vector_field"
field = "wind.npy"
size = [2.0, 2.0, 2.0]
rotation_deg = {list(ROTATION)}
strength = {STRENGTH}
tile = true
"""


def uniform_field(tmp_path, vector) -> np.ndarray:
    samples = np.zeros((2, 3, 2, 3), np.float32)
    samples[...] = vector
    np.save(tmp_path / "wind.npy", samples)
    return samples


def velocity_after_two_steps(engine) -> np.ndarray:
    engine.step(2)   # births at rest, then one step of the field's force
    return engine.state("dust")["velocity"].astype(np.float64)


def pushed(vector) -> np.ndarray:
    """The velocity after one step of a uniform field ``vector`` (in the box's frame)."""
    return STRENGTH * DT * (rotation_matrix(ROTATION) @ np.asarray(vector, np.float64))


@pytest.mark.parametrize("field_first", [True, False])
def test_emitters_sample_the_field_whichever_system_came_first(gpu, tmp_path, field_first):
    """With the field entity first, the force_field system announces the samples before the
    emitter system exists; the emitter hears the kept announcement when it is made."""
    uniform_field(tmp_path, (1.0, 0.0, 0.0))
    text = HEAD + (WIND + DUST if field_first else DUST + WIND)
    with Engine(loads_scene(text, path=tmp_path / "scene.toml")) as engine:
        v = velocity_after_two_steps(engine)
    np.testing.assert_allclose(v, np.tile(pushed((1.0, 0.0, 0.0)), (len(v), 1)),
                               rtol=1e-5, atol=1e-7)


def test_two_engines_hear_only_their_own_notices(gpu, tmp_path):
    """A's set_field is announced to A's emitters only: B, alive beside it and adapting to a
    change of its own afterwards, still samples its own field; and A samples the new one."""
    uniform_field(tmp_path, (0.0, 1.0, 0.0))
    scene = loads_scene(HEAD + WIND + DUST, path=tmp_path / "scene.toml")
    with Engine(scene) as a, Engine(scene) as b:
        a.set_field("wind", np.full((2, 2, 2, 3), -3.0, np.float32))
        b.passes_changed()   # B's systems adapt now: only B's announcements may count
        va, vb = velocity_after_two_steps(a), velocity_after_two_steps(b)
    np.testing.assert_allclose(vb, np.tile(pushed((0.0, 1.0, 0.0)), (len(vb), 1)),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(va, np.tile(pushed((-3.0, -3.0, -3.0)), (len(va), 1)),
                               rtol=1e-5, atol=1e-6)


def test_a_restart_forgets_the_old_world_s_fields(gpu, tmp_path):
    """A reload with a new seed releases the world: the new world's emitter hears no
    announcement of the old world's vector field, which the new scene no longer has."""
    uniform_field(tmp_path, (1.0, 0.0, 0.0))
    with Engine(loads_scene(HEAD + WIND + DUST, path=tmp_path / "scene.toml")) as engine:
        engine.step()
        engine.reload(loads_scene(HEAD.replace("seed = 5", "seed = 6") + DUST,
                                  path=tmp_path / "scene.toml"))
        v = velocity_after_two_steps(engine)
    assert np.abs(v).max() == 0.0
