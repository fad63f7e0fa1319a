"""The Engine's lifecycle and API misuse: close(), thread ownership, each call in the Engine's own
esper world, components built in Python, bad arguments and live edits that fail.

Every test runs real engines on the test adapter (lavapipe in CI). The oracle for "nothing went
wrong" is a second engine of the same scene stepped the same number of times without the misuse:
the same scene and step count give the same bytes on one adapter.
"""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass
from typing import Annotated

import esper
import msgspec
import numpy as np
import pytest

from emberfx.core.errors import DeviceLimitError, EmberError, SceneError
from emberfx.core.system import System
from emberfx.engine.engine import Engine, Name
from emberfx.engine.engine_guard import EngineClosedError, EngineThreadError, EngineUsageError
from emberfx.model import registry
from emberfx.model.camera import Camera
from emberfx.model.components import Tracked, live
from emberfx.model.scene import EntitySpec, Scene, SceneSettings

SIZE = (32, 24)


def jet_scene(name: str = "jet", **emitter) -> Scene:
    """One small emitter with a sphere shape (so shape.radius matters to the particles)."""
    scene = Scene(SceneSettings(name="api", size=SIZE, seed=7), Camera(kind="orthographic"))
    scene.add(name, emitter={"capacity": 300, "rate": 600.0, "speed": [1.0, 2.0],
                             "shape": {"kind": "sphere", "radius": 0.5}, **emitter})
    return scene


def particles(engine: Engine, name: str = "jet") -> tuple[np.ndarray, np.ndarray]:
    state = engine.state(name)
    return state["position"].copy(), state["alive"].copy()


def assert_same_particles(engine: Engine, reference: Engine, name: str = "jet") -> None:
    """Bit-equal GPU state: the misuse changed nothing the simulation saw."""
    (p, a), (rp, ra) = particles(engine, name), particles(reference, name)
    assert a.sum() > 0, "the emitter should have live particles by now"
    np.testing.assert_array_equal(a, ra)
    np.testing.assert_array_equal(p, rp)


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text, text
    return text


# ------------------------------------------------------------------------------- close (item 4)

CLOSED_SCRIPT = textwrap.dedent("""
    import esper
    from emberfx.model.camera import Camera
    from emberfx.engine.engine import Engine
    from emberfx.engine.engine_guard import EngineClosedError
    from emberfx.model.scene import Scene, SceneSettings

    scene = Scene(SceneSettings(name="api", size=(32, 24)), Camera(kind="orthographic"))
    scene.add("jet", emitter={"capacity": 300, "rate": 600.0})
    engine = Engine(scene)
    engine.step(3)
    world = engine._world
    engine.close()
    engine.close()                                   # idempotent
    print("world gone", world not in esper.list_worlds())
    calls = {"step(1)": lambda: engine.step(1), "render()": engine.render,
             "state": lambda: engine.state("jet"), "entity": lambda: engine.entity("jet"),
             "spawn": lambda: engine.spawn("b", {"emitter": {}}),
             "reload": lambda: engine.reload(scene), "advance": lambda: engine.advance(0.1)}
    # and every other public method and property, whatever its arguments: the check comes first
    for name in dir(Engine):
        attr = getattr(Engine, name)
        if not name.startswith("_") and name != "close" and (callable(attr)
                                                            or isinstance(attr, property)):
            calls.setdefault(name, lambda name=name: getattr(engine, name)())
    for label, call in calls.items():
        try:
            call()
        except EngineClosedError as exc:
            print("refused", label, "|", exc)
        else:
            print("NOT REFUSED", label)
    """)


def test_every_method_after_close_raises_a_clear_error_instead_of_aborting(gpu, tmp_path):
    """In a subprocess: a wgpu panic on a destroyed buffer would abort (SIGABRT) the test run."""
    run = subprocess.run([sys.executable, "-c", CLOSED_SCRIPT], capture_output=True, text=True,
                         timeout=600, cwd=tmp_path)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    lines = run.stdout.splitlines()
    assert lines[0] == "world gone True"
    refused = [line for line in lines if line.startswith("refused ")]
    assert not [line for line in lines if line.startswith("NOT REFUSED")], run.stdout
    labels = {line.split()[1] for line in refused}
    assert {"step(1)", "render()", "state", "entity", "spawn", "reload", "advance", "passes",
            "stats", "draw_to", "profiling", "entity_names"} <= labels
    assert any("Engine.step: this Engine is closed; create a new Engine" in line
               for line in refused)


# ---------------------------------------------------------------------------- threads (item 6)

def test_an_engine_stepped_from_another_thread_is_refused_and_loses_no_step(gpu):
    engine, reference = Engine(jet_scene()), Engine(jet_scene())
    engine.step(4)
    errors: list[BaseException] = []

    def intruder():
        for call in (lambda: engine.step(3), engine.render, lambda: engine.state("jet"),
                     engine.close):
            try:
                call()
            except EmberError as exc:
                errors.append(exc)

    thread = threading.Thread(target=intruder, name="intruder")
    thread.start()
    thread.join()
    assert len(errors) == 4 and all(isinstance(e, EngineThreadError) for e in errors)
    message = one_line(errors[0])
    assert "thread 'intruder'" in message
    assert "an Engine belongs to the thread that created it ('MainThread')" in message
    engine.step(4)
    reference.step(8)
    assert engine.clock.steps == 8
    assert_same_particles(engine, reference)
    engine.close()
    reference.close()


def test_engines_created_in_worker_threads_work_there_side_by_side(gpu):
    """Sweeps and notebooks run Engines in worker threads: each owns its Engine, esper's world
    switching is shared by all of them, and spawning in one must not land in another."""
    results: dict[str, object] = {}

    def worker(label: str):
        try:
            engine = Engine(jet_scene(label))
            for i in range(6):
                engine.step(1)
                if i == 2:
                    engine.spawn(f"{label}-extra", {"emitter": {"capacity": 64, "rate": 300.0}})
            results[label] = (particles(engine, label), particles(engine, f"{label}-extra"),
                              engine.entity_names())
            engine.close()
        except BaseException as exc:   # reported by the main thread's assertion below
            results[label] = exc

    threads = [threading.Thread(target=worker, args=(label,)) for label in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for label in ("a", "b"):
        assert not isinstance(results[label], BaseException), results[label]
        reference = Engine(jet_scene(label))
        reference.step(3)
        reference.spawn(f"{label}-extra", {"emitter": {"capacity": 64, "rate": 300.0}})
        reference.step(3)
        (jet, extra, names) = results[label]
        assert names == [label, f"{label}-extra"]
        for got, want in zip((jet, extra), (particles(reference, label),
                                            particles(reference, f"{label}-extra"))):
            np.testing.assert_array_equal(got[1], want[1])
            np.testing.assert_array_equal(got[0], want[0])
        reference.close()


def test_an_engine_whose_thread_ended_may_be_closed_from_another(gpu):
    made: list[Engine] = []
    thread = threading.Thread(target=lambda: made.append(Engine(jet_scene())))
    thread.start()
    thread.join()
    with pytest.raises(EngineThreadError):
        made[0].step(1)                 # still not usable here
    made[0].close()                     # but its resources can be given back
    with pytest.raises(EngineClosedError):
        made[0].step(1)


def test_each_call_enters_the_engines_own_esper_world(gpu):
    a = Engine(jet_scene("a-jet"))
    b = Engine(jet_scene("b-jet"))

    def names_in_current_world() -> list[str]:
        return sorted(n.value for _, n in esper.get_component(Name))

    a.step(1)
    assert names_in_current_world() == ["a-jet"]
    b.passes()
    assert names_in_current_world() == ["b-jet"]
    a.spawn("a-extra", {"emitter": {"capacity": 16}})
    assert names_in_current_world() == ["a-extra", "a-jet"]
    b.state("b-jet")
    assert names_in_current_world() == ["b-jet"]
    a.delete("a-extra")
    assert names_in_current_world() == ["a-jet"]
    a.close()
    b.close()


# ----------------------------------------------------------- components built in Python (item 14)

def built_in_python():
    types = registry.component_types()
    Emitter, Life = types["emitter"].cls, types["life"].cls
    Cloth, ParticleLife = types["cloth"].cls, types["particle_life"].cls
    nested = Emitter()
    nested.shape.radius = -1.0
    return [
        ("emitter", Emitter(capacity=-1), "emitter.capacity: expected int >= 1, found -1"),
        ("life", Life(size=(0, 0)), "life.size[0]: expected int >= 1, found 0"),
        ("cloth", Cloth(resolution=(1, 1)), "cloth.resolution[0]: expected int >= 2, found 1"),
        ("particle_life", ParticleLife(count=0), "particle_life.count: expected int >= 1, found 0"),
        ("emitter", nested, "emitter.shape.radius: expected float >= 0.0, found -1.0"),
    ]


@pytest.mark.parametrize("case", range(5))
def test_scene_add_validates_components_built_in_python(case):
    key, component, expected = built_in_python()[case]
    scene = Scene()
    with pytest.raises(SceneError) as info:
        scene.add("x", **{key: component})
    assert one_line(info.value) == f"<scene>: entity 'x': {expected}"
    assert scene.entities == []          # refused whole


@pytest.mark.parametrize("case", range(5))
def test_engine_and_spawn_validate_components_built_in_python(gpu, case):
    key, component, expected = built_in_python()[case]
    scene = Scene(SceneSettings(size=SIZE))
    scene.entities.append(EntitySpec("x", {key: component}))   # past Scene.add's check
    with pytest.raises(SceneError, match=f"^<scene>: entity 'x': {_re(expected)}$"):
        Engine(scene)
    engine = Engine(jet_scene())
    with pytest.raises(SceneError, match=f"^spawn: entity 'x': {_re(expected)}$"):
        engine.spawn("x", {key: component})
    assert engine.entity_names() == ["jet"]
    engine.close()


def _re(text: str) -> str:
    import re

    return re.escape(text)


def test_a_component_edited_after_scene_add_is_checked_when_the_engine_starts(gpu):
    scene = jet_scene()
    scene.entity("jet").components["emitter"].shape.radius = -1.0
    with pytest.raises(SceneError, match=r"entity 'jet': emitter\.shape\.radius: expected float "
                                         r">= 0\.0, found -1\.0$"):
        Engine(scene)


def test_a_refused_nested_live_edit_is_never_uploaded(gpu):
    engine, reference = Engine(jet_scene()), Engine(jet_scene())
    engine.step(3)
    shape = engine.entity("jet").emitter.shape
    shape.radius = -1.0
    with pytest.raises(SceneError) as info:
        engine.step(1)
    assert one_line(info.value) == ("live edit: entity 'jet': emitter.shape.radius: expected "
                                    "float >= 0.0, found -1.0; the edit is undone, the last "
                                    "valid values stay")
    assert shape.radius == 0.5 and engine.entity("jet").emitter.shape is shape
    engine.step(5)
    reference.step(8)
    assert_same_particles(engine, reference)
    shape.radius = 0.25                 # a valid nested edit is noticed and used
    engine.step(4)
    reference.entity("jet").emitter.shape = type(shape)(kind="sphere", radius=0.25)
    reference.step(4)
    assert_same_particles(engine, reference)
    engine.close()
    reference.close()


# -------------------------------------------------------------------- API misuse (item 15)

@pytest.mark.parametrize("frames", [None, math.nan, math.inf, "3", 1.7, True, -1])
def test_step_refuses_what_is_not_a_whole_number_of_steps(gpu, frames):
    engine = Engine(jet_scene())
    engine.step(2)
    with pytest.raises(EngineUsageError) as info:
        engine.step(frames)
    assert one_line(info.value).startswith("step(frames): expected a whole number of steps >= 0, "
                                           "found ")
    assert engine.clock.steps == 2
    engine.step(np.int64(1))            # numpy integers are whole numbers
    assert engine.clock.steps == 3
    engine.close()


def test_names_scenes_and_sizes_of_the_wrong_kind_are_refused_in_one_line(gpu):
    scene = jet_scene()
    for call, expected in [
        (lambda: Engine(None), "Engine(scene): expected a Scene (e.g. from emberfx.load_scene) "
                               "or a path to a scene file, found None"),
        (lambda: Engine(scene, size=("a", "b")),
         "Engine(size): expected (width, height) in whole pixels, found ('a', 'b')"),
    ]:
        with pytest.raises(EmberError) as info:
            call()
        assert one_line(info.value) == expected
    engine = Engine(scene)
    engine.step(2)
    before = engine.scene
    for call, start in [
        (lambda: engine.state(None), "state(name): expected an entity name (a non-empty string)"),
        (lambda: engine.state(123), "state(name): expected an entity name"),
        (lambda: engine.entity(None), "entity(name): expected an entity name"),
        (lambda: engine.spawn("", {"emitter": {}}), "spawn(name): expected an entity name"),
        (lambda: engine.spawn(None, {"emitter": {}}), "spawn(name): expected an entity name"),
        (lambda: engine.spawn("b", None), "spawn 'b': expected a dict of components"),
        (lambda: engine.reload(None), "reload(scene): expected a Scene"),
        (lambda: engine.reload({"scene": {}}), "reload(scene): expected a Scene"),
        (lambda: engine.advance(math.nan), "advance(real_dt): expected a finite number"),
    ]:
        with pytest.raises(EmberError) as info:
            call()
        assert one_line(info.value).startswith(start)
    assert engine.entity_names() == ["jet"] and engine.scene is before
    assert engine.clock.steps == 2
    engine.close()


def test_a_failed_live_edit_keeps_the_last_valid_values_and_says_so_in_the_scene_wording(gpu):
    engine, reference = Engine(jet_scene()), Engine(jet_scene())
    engine.step(2)
    emitter = engine.entity("jet").emitter
    emitter.capacity = 0
    with pytest.raises(SceneError) as info:
        engine.step(1)
    message = one_line(info.value)
    assert message.startswith("live edit: entity 'jet': emitter.capacity: expected int >= 1, "
                              "found 0")
    assert "`" not in message and "$." not in message    # not msgspec's wording
    assert emitter.capacity == 300
    emitter.rate = 1e12                  # a step's births would overflow the GPU's u32 budget
    with pytest.raises(EmberError, match=r"emitter\.rate"):
        engine.step(1)
    assert emitter.rate == 600.0
    emitter.capacity = -5                # the rollback of this edit must not bring 1e12 back
    with pytest.raises(SceneError):
        engine.step(1)
    assert (emitter.rate, emitter.capacity) == (600.0, 300)
    engine.step(6)
    reference.step(8)
    assert_same_particles(engine, reference)
    engine.close()
    reference.close()


def test_a_capacity_the_device_refuses_rolls_back_and_later_rollbacks_stay_clean(gpu):
    engine = Engine(jet_scene())
    engine.step(2)
    emitter = engine.entity("jet").emitter
    emitter.capacity = 1 << 28           # valid for the file, beyond lavapipe's buffers
    emitter.rate = 300.0
    with pytest.raises(EmberError, match=r"capacity|buffer"):
        engine.step(1)
    assert (emitter.capacity, emitter.rate) == (300, 600.0)
    emitter.drag = -1.0
    with pytest.raises(SceneError, match=r"emitter\.drag"):
        engine.step(1)
    assert (emitter.capacity, emitter.rate, emitter.drag) == (300, 600.0, 0.0)
    engine.step(1)
    assert engine.state("jet")["alive"].shape == (300,)
    engine.close()


def test_a_script_naming_a_missing_entity_is_checked_like_the_file(gpu, tmp_path):
    (tmp_path / "ghost.py").write_text(textwrap.dedent("""
        done = False

        def on_update(ctx, dt):
            global done
            if not done:
                done = True
                ctx.entity("jet").emitter.affected_by = ["ghost"]
        """))
    (tmp_path / "scene.toml").write_text(textwrap.dedent("""
        [scene]
        size = [32, 24]
        seed = 7
        [camera]
        kind = "orthographic"
        [[entity]]
        name = "jet"
        script = "ghost.py"
        [entity.emitter]
        capacity = 300
        rate = 600.0
        [[entity]]
        name = "well"
        [entity.attractor]
        position = [0.0, 1.0, 0.0]
        """))
    engine = Engine(tmp_path / "scene.toml")
    with pytest.raises(SceneError) as info:
        engine.step(1)
    assert one_line(info.value) == (
        "live edit: entity 'jet': emitter.affected_by[0]: no entity named 'ghost'; expected one "
        "of: jet, well; the edit is undone, the last valid values stay")
    emitter = engine.entity("jet").emitter
    assert emitter.affected_by is None
    engine.step(2)
    emitter.affected_by = ["jet"]        # exists, but is no force
    with pytest.raises(SceneError, match=r"affected_by\[0\]: expected an entity with attractor"):
        engine.step(1)
    emitter.affected_by = ["well"]
    engine.step(1)
    assert engine.entity("jet").emitter.affected_by == ["well"]
    engine.close()


# A component whose system fails in the step for values the file format allows: the edit that
# led there is rolled back, as a device refusal would be.
@dataclass(slots=True)
class Fragile(Tracked):
    load: Annotated[int, msgspec.Meta(ge=0)] = live(1)


class FragileSystem(System):
    def add(self, entity, component):
        self.component = component

    def remove(self, entity):
        pass

    def before_step(self, step):
        if self.component.load > 10:
            raise DeviceLimitError(f"load {self.component.load} is more than this device takes")


def test_a_step_that_fails_after_a_live_edit_restores_the_last_valid_values(gpu, monkeypatch):
    registry.load_builtin_systems()
    monkeypatch.setitem(registry._TYPES, "fragile",
                        registry.ComponentType("fragile", Fragile, FragileSystem))
    scene = jet_scene()
    scene.add("load", fragile={"load": 2})
    engine = Engine(scene)
    engine.step(2)
    fragile = engine.entity("load").fragile
    fragile.load = 11
    with pytest.raises(DeviceLimitError):
        engine.step(1)
    assert fragile.load == 2 and engine.clock.steps == 2
    fragile.load = -1                    # refused at once; its rollback must not bring 11 back
    with pytest.raises(SceneError, match=r"fragile\.load: expected int >= 0, found -1"):
        engine.step(1)
    assert fragile.load == 2
    engine.step(3)
    assert engine.clock.steps == 5
    engine.close()
