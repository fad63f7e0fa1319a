"""esper is the world: scene entities are esper entities of the Engine's own esper world, their
components are esper components (there is no other store), systems are esper Processors run by
priority, and systems see other entities through an esper-backed query.

Oracles: object identity between what esper returns and what the Engine, scripts and systems
hand out; the scene file's entity order; esper's own current-world name; the order in which the
systems' before_step ran; a second engine of the same scene edited through the Engine's API."""

from __future__ import annotations

import statistics
import textwrap
import time

import esper
import numpy as np
import pytest

from emberfx.core.errors import EmberError
from emberfx.core.system import Priority, System
from emberfx.engine.engine import Engine, Name
from emberfx.engine.engine_guard import EngineClosedError
from emberfx.engine.scripting import InputState, ScriptContext
from emberfx.engine.world import EntityGoneError
from emberfx.model import registry
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings
from emberfx.systems.emitter.component import Emitter
from emberfx.systems.forces.forces import Attractor, ForceField

SIZE = (32, 24)


def scene_with(*entities: tuple[str, dict]) -> Scene:
    scene = Scene(SceneSettings(name="esper", size=SIZE, seed=11), Camera(kind="orthographic"))
    for name, components in entities:
        scene.add(name, **components)
    return scene


JET = {"emitter": {"capacity": 200, "rate": 600.0, "lifetime": 5.0}}


@pytest.fixture
def user_world():
    """A world of the test's own, current while the test runs (as a user's esper code would
    have), removed afterwards."""
    esper.switch_world("test-user-world")
    esper.create_entity(Name("user-thing"))
    yield "test-user-world"
    esper.switch_world("default")
    esper.delete_world("test-user-world")


# ------------------------------------------------------------------- entities and components

def test_every_entity_and_component_lives_in_the_engines_esper_world(gpu):
    engine = Engine(scene_with(("jet", JET), ("well", {"attractor": {"strength": 2.0}}),
                               ("gust", {"force_field": {"kind": "drag"}})))
    with engine.world:
        names = sorted((eid, n.value) for eid, n in esper.get_component(Name))
        assert [n for _, n in names] == ["jet", "well", "gust"]
        for eid, name in names:
            assert engine.world.entity(name) == eid
            held: tuple = esper.components_for_entity(eid)
            assert held[0] == Name(name)
            # the Engine's views hand out exactly esper's objects, in the scene's table order
            assert list(engine.components_of(name).values()) == list(held[1:])
            assert all(a is b for a, b in zip(engine.components_of(name).values(), held[1:]))
        jet = engine.world.entity("jet")
        assert engine.entity("jet").emitter is esper.component_for_entity(jet, Emitter)
        ((ref, well),) = engine.entities_with("attractor")
        assert well is esper.component_for_entity(ref.eid, Attractor) and ref.name == "well"
    engine.close()


def test_an_edit_through_esper_is_an_edit_of_the_scene(gpu):
    scene = scene_with(("jet", JET), ("well", {"attractor": {"position": [0.0, 2.0, 0.0]}}))
    engine, reference = Engine(scene), Engine(scene)
    engine.step(3)
    reference.step(3)
    with engine.world:
        ((_, well),) = esper.get_component(Attractor)
        well.strength = 40.0
    reference.entity("well").attractor.strength = 40.0
    engine.step(6)
    reference.step(6)
    a, b = engine.state("jet"), reference.state("jet")
    assert a["alive"].sum() > 0
    np.testing.assert_array_equal(a["alive"], b["alive"])
    np.testing.assert_array_equal(a["position"], b["position"])
    engine.close()
    reference.close()


def test_spawn_and_delete_are_esper_entities_too(gpu):
    engine = Engine(scene_with(("jet", JET)))
    engine.spawn("extra", {"attractor": {"strength": 1.0}})
    eid = engine.world.entity("extra")
    assert [e for e, _ in engine.world.get_component(Attractor)] == [eid]
    view = engine.entity("extra")
    engine.delete("extra")
    assert engine.world.get_component(Attractor) == []
    with engine.world:
        assert not esper.entity_exists(eid)
    with pytest.raises(EntityGoneError) as info:
        _ = view.attractor
    assert "\n" not in str(info.value) and "'extra'" in str(info.value)
    with pytest.raises(EmberError, match="no entity named 'extra'"):
        engine.world.entity("extra")
    engine.close()


def test_scripts_read_and_write_the_esper_components(gpu, tmp_path):
    (tmp_path / "calm.py").write_text(textwrap.dedent("""
        def on_update(ctx, dt):
            ctx.self.emitter.rate = 0.0
            ctx.entity("well").attractor.position = (1.0, 2.0, 3.0)
        """))
    (tmp_path / "scene.toml").write_text(textwrap.dedent("""
        [scene]
        size = [32, 24]
        [[entity]]
        name = "jet"
        script = "calm.py"
        [entity.emitter]
        capacity = 64
        [[entity]]
        name = "well"
        [entity.attractor]
        """))
    engine = Engine(tmp_path / "scene.toml")
    context = ScriptContext(engine, "jet", np.random.default_rng(0), InputState())
    with engine.world:
        jet, well = engine.world.entity("jet"), engine.world.entity("well")
        assert context.entity("jet").emitter is esper.component_for_entity(jet, Emitter)
        assert context.self.emitter is esper.component_for_entity(jet, Emitter)
    engine.step(1)
    with engine.world:
        assert esper.component_for_entity(jet, Emitter).rate == 0.0
        assert esper.component_for_entity(well, Attractor).position == (1.0, 2.0, 3.0)
    engine.close()


# ------------------------------------------------------------------------------------ worlds

def test_engines_never_see_each_others_entities_and_restore_the_callers_world(gpu, user_world):
    a = Engine(scene_with(("a-jet", JET), ("a-well", {"attractor": {}})))
    b = Engine(scene_with(("b-jet", JET)))
    a_view = a.entity("a-jet")              # an Engine method enters a's world (engine_guard)
    a_system = a.system_of("a-jet", "emitter")
    esper.switch_world(user_world)
    assert [n.value for _, n in a.world.get_component(Name)] == ["a-jet", "a-well"]
    assert [n.value for _, n in b.world.get_component(Name)] == ["b-jet"]
    assert esper.current_world == user_world          # each call switched for itself only
    assert a_view.emitter.capacity == 200 and esper.current_world == user_world
    assert [r.name for r, _ in a_system.query("attractor")] == ["a-well"]
    assert esper.current_world == user_world
    with a.world:
        assert esper.current_world == a.world.name
        with b.world:
            assert [n.value for _, n in esper.get_component(Name)] == ["b-jet"]
        assert esper.current_world == a.world.name    # nested blocks restore in turn
        assert {n.value for _, n in esper.get_component(Name)} == {"a-jet", "a-well"}
        assert b.entities_with("attractor") == []
        assert [r.name for r, _ in a.entities_with("emitter")] == ["a-jet"]
    assert esper.current_world == user_world
    assert [n.value for _, n in esper.get_component(Name)] == ["user-thing"]
    assert a.world.name != b.world.name
    names = a.world.name, b.world.name
    a.close()
    b.close()
    assert esper.current_world == user_world          # closing deleted only their worlds
    assert not set(names) & set(esper.list_worlds())
    with pytest.raises(EngineClosedError):
        _ = a.world


def test_a_closed_engine_leaves_no_world_and_no_processors(gpu):
    engine = Engine(scene_with(("jet", JET)))
    name = engine.world.name
    system = engine.system_of("jet", "emitter")
    with engine.world:
        assert esper.get_processor(type(system)) is system
    engine.close()
    assert name not in esper.list_worlds()


# ---------------------------------------------------------------------------------- processors

def test_systems_are_processors_run_by_priority_once_per_step(gpu, monkeypatch):
    scene = scene_with(("bloom", {"bloom": {}}), ("life", {"life": {"size": [40, 30]}}),
                       ("flag", {"cloth": {"resolution": [4, 4]}}), ("jet", JET))
    engine = Engine(scene)
    ran: list[str] = []
    systems = {key: engine.system_of(name, key) for name, key in
               (("bloom", "bloom"), ("life", "life"), ("flag", "cloth"), ("jet", "emitter"))}
    for key, system in systems.items():
        def recorded(step, key=key, original=system.before_step):
            ran.append(key)
            original(step)

        monkeypatch.setattr(system, "before_step", recorded)
    engine.step(2)
    assert sorted(ran[:2]) == ["cloth", "emitter"] and ran[2:4] == ["life", "bloom"]
    assert ran[4:] == ran[:4] and len(ran) == 8
    priorities = [systems[k].priority for k in ran[:4]]
    assert priorities == sorted(priorities, reverse=True)
    assert systems["emitter"].priority == Priority.DYNAMICS
    assert systems["bloom"].priority == Priority.POST < Priority.SIMULATION
    with engine.world:
        for system in systems.values():
            assert isinstance(system, esper.Processor)
            assert esper.get_processor(type(system)) is system
    engine.close()


# ----------------------------------------------------------------------------------- queries

def test_query_returns_entity_order_and_follows_spawns_and_deletes(gpu):
    engine = Engine(scene_with(("g", {"force_field": {"kind": "drag"}}), ("jet", JET),
                               ("w1", {"attractor": {}}),
                               ("both", {"force_field": {"kind": "gravity"}, "attractor": {}})))
    system = engine.system_of("jet", "emitter")

    def names(*kinds):
        return [(ref.name, type(c).__name__) for ref, c in system.query(*kinds)]

    assert names("attractor") == [("w1", "Attractor"), ("both", "Attractor")]
    assert names("attractor", "force_field") == [
        ("g", "ForceField"), ("w1", "Attractor"), ("both", "ForceField"), ("both", "Attractor")]
    assert names(Attractor, ForceField) == names("attractor", "force_field")
    first = system.query("attractor")
    first.clear()                              # the caller's copy: the cache is untouched
    assert len(system.query("attractor")) == 2
    engine.spawn("w2", {"attractor": {}})
    assert names("attractor") == [("w1", "Attractor"), ("both", "Attractor"),
                                  ("w2", "Attractor")]
    engine.delete("w1")
    assert names("attractor") == [("both", "Attractor"), ("w2", "Attractor")]
    with pytest.raises(EmberError, match="no component is registered under the key 'atractor'"):
        system.query("atractor")
    engine.close()


def test_a_system_queries_its_engines_world_during_the_step(gpu, monkeypatch, user_world):
    seen: list[list[str]] = []

    class Watcher(System):
        def add(self, entity, component):
            pass

        def remove(self, entity):
            pass

        def before_step(self, step):
            seen.append([ref.name for ref, _ in self.query("attractor")])

    registry.load_builtin_systems()
    watch = registry.component_types()["edge_detect"]   # a data-only stand-in is enough
    monkeypatch.setitem(registry._TYPES, "edge_detect",
                        registry.ComponentType("edge_detect", watch.cls, Watcher))
    a = Engine(scene_with(("a-well", {"attractor": {}}), ("w", {"edge_detect": {}})))
    b = Engine(scene_with(("b-well", {"attractor": {}}), ("w", {"edge_detect": {}})))
    esper.switch_world(user_world)
    a.step(1)
    esper.switch_world(user_world)
    b.step(1)
    a.step(1)
    assert seen == [["a-well"], ["b-well"], ["a-well"]]
    a.close()
    b.close()


def test_a_cached_query_costs_the_same_in_a_large_world(gpu):
    """Every emitter asks for its forces every step: the answer must not grow with the
    entities that are no force (ratio of medians, not a wall-clock bound)."""
    small = Engine(scene_with(("jet", JET), ("w", {"attractor": {}})))
    crowded = scene_with(("jet", JET), ("w", {"attractor": {}}))
    crowded.entities += [EntitySpec(f"c{i}", {}) for i in range(2000)]
    large = Engine(crowded)

    def median_query_seconds(engine: Engine) -> float:
        system = engine.system_of("jet", "emitter")
        system.query("attractor", "force_field", "kill_zone")
        samples = []
        for _ in range(300):
            t0 = time.perf_counter()
            system.query("attractor", "force_field", "kill_zone")
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples)

    ratios = []
    for _ in range(3):   # interleaved, so background load hits both alike
        ratios.append(median_query_seconds(large) / median_query_seconds(small))
    assert min(ratios) < 2.0, ratios
    small.close()
    large.close()
