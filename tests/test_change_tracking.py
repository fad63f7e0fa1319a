"""Change tracking by field metadata: every component field declares what an edit of it costs
(live, passes, rebuild), and setting a field, a nested field or changing a list in place marks
the entity dirty, so a step looks at the edited components only.

The oracles: a hand-written hook that counts calls (tracking), exact particle counts from bursts
added in place (edits reach the GPU), the frame graph's pass names and the emitter's pool shape
(what each change class does), and a count of validations (nothing is looked at without an
edit)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import typing

import msgspec
import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model import registry, scene
from emberfx.model.camera import Camera
from emberfx.model.components import (
    Change,
    Tracked,
    TrackedList,
    change_of,
    changed_between,
    live,
    track,
    undeclared_fields,
)
from emberfx.model.scene import Scene, SceneSettings
from emberfx.systems.emitter.component import Burst, ColorStop, Emitter, Shape

DT = 1.0 / 60.0


def nested_dataclasses(cls: type, seen: set[type]) -> None:
    """``cls`` and every dataclass its fields' type hints name, recursively."""
    if cls in seen:
        return
    seen.add(cls)
    hints = typing.get_type_hints(cls)

    def walk(hint):
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            nested_dataclasses(hint, seen)
        for arg in typing.get_args(hint):
            walk(arg)

    for f in dataclasses.fields(cls):
        walk(hints[f.name])


# ------------------------------------------------------------------------------ the declarations

def test_every_field_of_every_registered_component_declares_its_change_class():
    classes: set[type] = set()
    for registered in registry.component_types().values():
        nested_dataclasses(registered.cls, classes)
    assert {Emitter, Shape, Burst, ColorStop} <= classes
    undeclared = [f"{cls.__qualname__}.{f.name}" for cls in classes
                  for f in dataclasses.fields(cls)
                  if not isinstance(f.metadata.get("change"), Change)]
    assert undeclared == []
    assert all(issubclass(cls, Tracked) for cls in classes)
    for cls in classes:   # no leftover class-level lists of the old kind
        assert not hasattr(cls, "RELOAD_FIELDS") and not hasattr(cls, "PASS_FIELDS"), cls


@pytest.mark.parametrize("key, field, expected", [
    ("emitter", "capacity", Change.REBUILD), ("emitter", "blend", Change.REBUILD),
    ("emitter", "rate", Change.LIVE), ("emitter", "shape", Change.LIVE),
    ("cloth", "resolution", Change.REBUILD), ("cloth", "wireframe", Change.PASSES),
    ("cloth", "pin_offset", Change.LIVE), ("life", "steps_per_frame", Change.PASSES),
    ("life", "rule", Change.REBUILD), ("life", "alive_color", Change.LIVE),
    ("force_field", "kind", Change.PASSES), ("attractor", "position", Change.LIVE),
    ("fractal", "display", Change.PASSES), ("fractal", "resolution", Change.REBUILD),
    ("particle_life", "count", Change.REBUILD), ("particle_life", "blend", Change.REBUILD),
    ("bloom", "intensity", Change.LIVE),
])
def test_declared_change_classes_follow_what_the_systems_do(key, field, expected):
    assert change_of(registry.component_types()[key].cls, field) is expected


def test_a_component_class_that_declares_nothing_is_refused_at_registration():
    @dataclasses.dataclass(slots=True)
    class Loose(Tracked):
        declared: int = live(1)
        forgotten: int = 2

    assert undeclared_fields(Loose) == ["test_a_component_class_that_declares_nothing_is_"
                                        "refused_at_registration.<locals>.Loose.forgotten"]
    with pytest.raises(RuntimeError, match=r"Loose\.forgotten"):
        registry.component("loose-test-key")(Loose)
    assert "loose-test-key" not in registry.component_types()


def test_the_change_between_two_values_is_the_largest_declared_among_the_differing_fields():
    base = Emitter()
    assert changed_between(Emitter, base, Emitter()) is None
    assert changed_between(Emitter, base, dataclasses.replace(base, rate=5.0)) is Change.LIVE
    both = dataclasses.replace(base, rate=5.0, capacity=7)
    assert changed_between(Emitter, base, both) is Change.REBUILD
    shaped = dataclasses.replace(base, shape=Shape(radius=0.1))
    assert changed_between(Emitter, base, shaped) is Change.LIVE
    burst = dataclasses.replace(base, bursts=[Burst()])
    assert changed_between(Emitter, base, burst) is Change.LIVE


# --------------------------------------------------------------------------------------- tracking

class Counter:
    """Counts the hook's calls and keeps the field each named (None: something nested)."""

    def __init__(self):
        self.calls = 0
        self.fields: list[str | None] = []

    def __call__(self, field):
        self.calls += 1
        self.fields.append(field)


def tracked_emitter() -> tuple[Emitter, Counter]:
    emitter = Emitter(bursts=[Burst(count=3)], color=[ColorStop(0.0, "#ffffff"),
                                                      ColorStop(1.0, "#000000")])
    hook = Counter()
    track(emitter, hook)
    return emitter, hook


# the field each edit's hook call names: a field of the component set, else None
NAMED = {"field": "rate", "nested object replaced": "shape"}

EDITS = {
    "field": lambda e: setattr(e, "rate", 5.0),
    "nested field": lambda e: setattr(e.shape, "radius", 0.25),
    "nested object replaced": lambda e: setattr(e, "shape", Shape(kind="box")),
    "list append": lambda e: e.bursts.append(Burst()),
    "list item": lambda e: e.size_curve.__setitem__(0, 2.0),
    "list slice": lambda e: e.size_curve.__setitem__(slice(0, 1), [2.0, 3.0]),
    "item field": lambda e: setattr(e.bursts[0], "count", 5),
    "stop field": lambda e: setattr(e.color[1], "t", 0.5),
    "extend": lambda e: e.alpha_curve.extend([0.5, 0.0]),
    "insert": lambda e: e.alpha_curve.insert(0, 0.0),
    "pop": lambda e: e.bursts.pop(),
    "remove": lambda e: e.bursts.remove(e.bursts[0]),
    "del": lambda e: e.bursts.__delitem__(0),
    "clear": lambda e: e.bursts.clear(),
    "sort": lambda e: e.alpha_curve.sort(),
    "reverse": lambda e: e.size_curve.reverse(),
    "+=": lambda e: e.size_curve.__iadd__([1.0]),
    "*=": lambda e: e.size_curve.__imul__(2),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_every_kind_of_edit_calls_the_hook_once(edit):
    emitter, hook = tracked_emitter()
    EDITS[edit](emitter)
    assert hook.calls == 1
    assert hook.fields == [NAMED.get(edit)]


def test_values_given_to_a_tracked_component_are_tracked_too():
    emitter, hook = tracked_emitter()
    emitter.bursts = [Burst()]             # a plain list becomes a tracked one
    assert type(emitter.bursts) is TrackedList and hook.calls == 1
    emitter.bursts[0].count = 9
    emitter.bursts.append(Burst())
    emitter.bursts[1].time = 2.0
    shape = Shape()
    emitter.shape = shape
    shape.radius = 0.75
    assert hook.calls == 6
    assert hook.fields == ["bursts", None, None, None, "shape", None]


def test_copies_pickles_and_conversions_carry_no_hook():
    emitter, hook = tracked_emitter()
    deep = copy.deepcopy(emitter)
    shallow = copy.copy(emitter)
    pickled = pickle.loads(pickle.dumps(emitter))
    replaced = dataclasses.replace(emitter, rate=7.0)
    converted = msgspec.convert(msgspec.to_builtins(emitter), Emitter, strict=True)
    assert deep == emitter and pickled == emitter and converted == emitter
    assert repr(deep) == repr(emitter) and "_on_change" not in repr(emitter)
    assert type(deep.bursts) is list and type(pickled.bursts) is list
    assert msgspec.to_builtins(emitter) == msgspec.to_builtins(deep)
    for other in (deep, shallow, pickled, replaced, converted):
        other.rate = 1.0
        other.shape = Shape(radius=0.1)
    deep.bursts.append(Burst())
    deep.bursts[0].count = 1
    pickled.color[0].t = 0.25
    converted.size_curve[0] = 0.5
    assert hook.calls == 0
    assert emitter.rate is None and len(emitter.bursts) == 1 and emitter.bursts[0].count == 3


def test_untracked_components_call_nothing():
    emitter, hook = tracked_emitter()
    track(emitter, None)
    emitter.rate = 3.0
    emitter.bursts.append(Burst())
    emitter.shape.radius = 0.2
    assert hook.calls == 0


# ------------------------------------------------------------------------ in the running Engine

def jet_engine(**emitter) -> Engine:
    scene = Scene(SceneSettings(name="tracking", size=(32, 24), seed=3, fixed_dt=DT),
                  Camera(kind="orthographic"))
    scene.add("jet", emitter={"capacity": 400, "rate": 0.0, "lifetime": 100.0, **emitter})
    return Engine(scene)


def alive(engine: Engine) -> int:
    return int(engine.state("jet")["alive"].sum())


def test_bursts_added_and_changed_in_place_reach_the_gpu(gpu):
    engine = jet_engine()
    engine.step(2)
    emitter = engine.entity("jet").emitter
    emitter.bursts.append(Burst(time=engine.clock.time, count=50))
    engine.step(1)
    assert alive(engine) == 50
    emitter.bursts.append(Burst(time=engine.clock.time + 1.5 * DT, count=10))
    engine.step(1)
    emitter.bursts[1].count = 7            # before it fires, in the second step from here
    engine.step(2)
    assert alive(engine) == 57
    engine.close()


def test_in_place_edits_are_validated_and_refused_edits_undone(gpu):
    engine = jet_engine(bursts=[{"time": 100.0, "count": 5}])
    emitter = engine.entity("jet").emitter
    bursts, curve = emitter.bursts, emitter.size_curve
    emitter.size_curve.append(-1.0)
    with pytest.raises(SceneError, match=r"^live edit: entity 'jet': emitter\.size_curve\[1\]: "
                                         r"expected float >= 0\.0, found -1\.0; the edit is "
                                         r"undone"):
        engine.step(1)
    assert emitter.size_curve == [1.0]
    emitter.bursts[0].count = 0
    with pytest.raises(SceneError, match=r"emitter\.bursts\[0\]\.count: expected int >= 1"):
        engine.step(1)
    assert emitter.bursts[0].count == 5
    emitter.shape.radius = -1.0
    with pytest.raises(SceneError, match=r"emitter\.shape\.radius: expected float >= 0\.0, "
                                         r"found -1\.0"):
        engine.step(1)
    assert emitter.shape.radius == 0.5
    # the lists were restored in place (references kept elsewhere stay right) and are tracked
    assert bursts is emitter.bursts and curve is emitter.size_curve
    assert bursts == [Burst(time=100.0, count=5)] and curve == [1.0]
    emitter.bursts.append(Burst(time=engine.clock.time, count=4))
    engine.step(1)
    assert alive(engine) == 4
    engine.close()


def test_a_step_without_edits_validates_nothing(gpu, monkeypatch):
    engine = jet_engine(rate=200.0)
    engine.step(2)
    calls = []
    real = scene.validated_copy

    def counted(value, key, **kwargs):
        calls.append(key)
        return real(value, key, **kwargs)

    monkeypatch.setattr(scene, "validated_copy", counted)
    engine.step(5)
    engine.render()
    assert calls == []
    engine.entity("jet").emitter.rate = 300.0
    engine.entity("jet").emitter.drag = 0.5
    engine.step(3)
    assert calls == ["emitter"]             # one look at the one edited component
    engine.close()


def test_edits_named_by_field_are_checked_against_the_last_valid_values(gpu):
    """A sync looks only at the fields set since the last one. The oracle: the values a fresh
    engine, given the same accepted edits in its scene, runs with (the GPU's particle records
    compared byte for byte)."""
    engine = jet_engine(rate=300.0)
    emitter = engine.entity("jet").emitter
    emitter.position = (0.5, 0.0, 0.0)
    emitter.drag = -1.0                     # refused, and with it the position set beside it
    with pytest.raises(SceneError, match=r"emitter\.drag"):
        engine.step(1)
    assert emitter.drag == 0.0 and emitter.position == (0.0, 0.0, 0.0)
    emitter.gravity = (0.0, -2.0, 0.0)      # the next edit names gravity alone
    emitter.position = emitter.position     # the very value: no change at all
    engine.step(3)
    emitter.size_curve.append(0.5)          # nested: every field looked at
    emitter.direction = (1.0, 1.0, 0.0)
    engine.step(2)
    assert emitter.position == (0.0, 0.0, 0.0) and emitter.gravity == (0.0, -2.0, 0.0)
    assert emitter.size_curve[-1] == 0.5 and emitter.direction == (1.0, 1.0, 0.0)
    oracle = jet_engine(rate=300.0, gravity=(0.0, -2.0, 0.0))
    oracle.step(3)                          # the refused step ran no step
    oracle.entity("jet").emitter.size_curve.append(0.5)
    oracle.entity("jet").emitter.direction = (1.0, 1.0, 0.0)
    oracle.step(2)
    got, want = engine.state("jet"), oracle.state("jet")
    for name in want:
        assert got[name].tobytes() == want[name].tobytes(), name
    assert alive(engine) > 0
    engine.close()
    oracle.close()


def test_each_change_class_does_what_it_declares(gpu):
    engine = jet_engine(rate=600.0)
    engine.step(4)
    system = engine.system_of("jet", "emitter")
    before = engine.state("jet")
    engine.entity("jet").emitter.gravity = (0.0, 0.0, 0.0)     # live: the pool stays
    engine.step(1)
    after = engine.state("jet")
    assert np.array_equal(before["alive"], after["alive"] & before["alive"])
    assert after["alive"].sum() >= before["alive"].sum() > 0
    engine.entity("jet").emitter.capacity = 123                # rebuild: a new pool
    engine.step(1)
    assert engine.state("jet")["alive"].shape == (123,)
    assert engine.system_of("jet", "emitter") is system
    engine.close()


CLOTH = {"resolution": [6, 5], "size": [1.0, 1.0], "substeps": 16}


def test_a_pass_class_edit_changes_the_passes_and_keeps_the_state(gpu):
    scene = Scene(SceneSettings(name="tracking", size=(32, 24), seed=3), Camera())
    scene.add("flag", cloth=CLOTH)
    engine = Engine(scene)
    engine.step(3)
    passes = engine.passes()
    position = engine.state("flag")["position"]
    engine.entity("flag").cloth.wireframe = True
    engine.step(1)
    assert len(engine.passes()) == len(passes) + 1 and set(passes) < set(engine.passes())
    reference = Engine(scene)
    reference.step(3)
    np.testing.assert_array_equal(position, reference.state("flag")["position"])
    engine.step(1)
    reference.step(2)                      # the wireframe pass only draws: same simulation
    np.testing.assert_array_equal(engine.state("flag")["position"],
                                  reference.state("flag")["position"])
    engine.close()
    reference.close()


def test_a_deleted_entitys_components_edit_nothing(gpu):
    engine = jet_engine()
    engine.spawn("other", {"emitter": {"capacity": 16}})
    kept = engine.entity("other").emitter
    engine.delete("other")
    kept.rate = -5.0                        # invalid, but no longer part of any scene
    kept.bursts.append(Burst())
    engine.step(1)
    assert engine.entity_names() == ["jet"]
    engine.close()

