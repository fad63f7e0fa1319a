"""GPU events and sub-emitters on lavapipe against the numpy oracle in events_model.py: per step,
the slots the source's events came from (read back before and after the step), the target's
births (lowest free slots, `count` per event until the pool is full), where each child starts
and how fast; two runs byte for byte; chains; scripts' on_event; the scene errors."""

from __future__ import annotations

import subprocess
import sys

import events_model as model
import numpy as np
import pytest
from test_collisions import FLOOR

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene
from emberfx.systems.emitter.component import SubEmitter

DT = 0.02
HEAD = f"""
[scene]
name = "events"
seed = 11
fixed_dt = {DT}
size = [32, 32]
[camera]
kind = "orthographic"
height = 6.0
"""


def emitter(name: str, **fields) -> str:
    """An [[entity]] with an emitter table; values are TOML text."""
    body = "\n".join(f"{key} = {value}" for key, value in fields.items())
    return f"\n[[entity]]\nname = \"{name}\"\n[entity.emitter]\n{body}\n"


def rockets(capacity=1000, **extra) -> str:
    """A source that fills its pool once (a burst at t = 0) and lets it die out over ~0.5 s,
    never born again: every death is visible in the states read back."""
    fields = dict(capacity=capacity, rate="0.0", bursts=f"[{{ time = 0.0, count = {capacity} }}]",
                  lifetime="[0.05, 0.5]", speed="[0.5, 2.0]", spread_deg="60.0",
                  gravity="[0.0, -2.0, 0.0]", shape='{ kind = "sphere", radius = 1.0 }')
    return emitter("rockets", **{**fields, **extra})


def sparks(capacity: int, name="sparks", **extra) -> str:
    """A target with no rate of its own: it emits only from events."""
    fields = dict(capacity=capacity, lifetime="[0.1, 0.3]", speed="0.0",
                  gravity="[0.0, 0.0, 0.0]")
    return emitter(name, **{**fields, **extra})


def states(engine, *names):
    return {n: engine.state(n) for n in names}


def counters(engine, name):
    return engine.system_of(name, "emitter").counters(engine.entity_ref(name))


def check_births(before, after, host_budget, links, *, inherit=None, radius=0.0, source=None):
    """The target's born slots are the model's, and each child starts at its parent's event
    (within `radius` for a sphere shape; exactly for a point) with `inherit` x its velocity (a
    child's own speed is 0 unless radius is given). Returns the number born."""
    free = model.free_before_births(after)
    expected = model.expected_births(free, host_budget, links)
    np.testing.assert_array_equal(np.flatnonzero(model.born(after)), expected)
    parents = model.birth_parents(len(expected), host_budget, links)
    for slot, parent in zip(expected, parents):
        if parent is None or source is None:
            continue
        link, event = parent
        where = source[link]["position"][event]
        if radius == 0.0:
            np.testing.assert_allclose(after["position"][slot], where, rtol=0, atol=1e-6)
        else:
            assert np.linalg.norm(after["position"][slot] - where) <= radius * (1 + 1e-5)
        if inherit is not None:
            share = np.float32(inherit[link]) * source[link]["velocity"][event]
            own = after["velocity"][slot] - share
            if radius == 0.0:
                np.testing.assert_allclose(own, 0.0, atol=1e-6)
            else:   # the child's own sampled velocity: speed [1, 2] in its cone
                assert 1.0 - 1e-5 <= np.linalg.norm(own) <= 2.0 + 1e-5
    return len(expected)


CONFIGS = {
    # target capacity, count, children's shape: roomy, full (capacity-limited), ragged sizes
    "roomy": (1500, 3, {}),
    "full": (300, 20, {}),
    "ragged": (777, 2, {}),
    "sphere": (1500, 3, {"shape": '{ kind = "sphere", radius = 0.25 }', "speed": "[1.0, 2.0]"}),
}


@pytest.mark.parametrize("config", CONFIGS)
def test_births_equal_events_times_count_until_the_target_is_full(gpu, config):
    capacity, count, extra = CONFIGS[config]
    radius = 0.25 if config == "sphere" else 0.0
    parent_capacity = 700 if config == "ragged" else 1000
    text = HEAD + rockets(parent_capacity, on_death=f"{{ emitter = \"sparks\", count = {count}, "
                                                    f"inherit_velocity = 0.5 }}")
    text += sparks(capacity, **extra)
    quota = model.quota(parent_capacity, capacity, count)
    seen = {"empty": 0, "full": 0, "events": 0}
    with Engine(loads_scene(text)) as engine:
        before = states(engine, "rockets", "sparks")
        for _ in range(32):
            engine.step()
            after = states(engine, "rockets", "sparks")
            died = np.flatnonzero(model.deaths(before["rockets"], after["rockets"]))
            sent = counters(engine, "rockets")["events"]
            assert sent[0] == len(died)   # the true count, stored or not
            host = counters(engine, "sparks")["step_budget"]
            assert host == 0              # a target without `rate` emits only from events
            link = model.Link(died, count, quota)
            births = check_births(before["sparks"], after["sparks"], host, [link],
                                  inherit=[0.5], radius=radius, source=[after["rockets"]])
            assert counters(engine, "sparks")["born"] == births
            seen["empty"] += len(died) == 0
            seen["events"] += len(died)
            seen["full"] += births < len(died) * count
            before = after
        stats = engine.stats()["entities"]["rockets"]
        assert set(stats["events"]) == {"death"}
    assert seen["empty"] > 0 and seen["events"] == parent_capacity   # every rocket died once
    assert (seen["full"] > 0) == (config == "full")


def test_links_into_one_target_are_ranked_by_source_then_kind(gpu):
    """Two sources and two kinds into one target: the births go to p1's deaths, then p1's age
    events, then p2's deaths, each in slot order; the target's own rate is ranked first."""
    every = 0.1
    text = HEAD + rockets(600, on_death='{ emitter = "sparks", count = 2, inherit_velocity = 1.0 }',
                          on_age=f'{{ emitter = "sparks", every = {every}, count = 1 }}')
    text += rockets(500, on_death='{ emitter = "sparks", count = 3, inherit_velocity = -0.25 }'
                    ).replace('"rockets"', '"other"')
    text += sparks(4000, rate="100.0")
    with Engine(loads_scene(text)) as engine:
        before = states(engine, "rockets", "other", "sparks")
        totals = np.zeros(3, int)
        for _ in range(20):
            engine.step()
            after = states(engine, "rockets", "other", "sparks")
            r, o = after["rockets"], after["other"]
            died = np.flatnonzero(model.deaths(before["rockets"], r))
            aged = np.flatnonzero(model.age_events(before["rockets"], r, every))
            other = np.flatnonzero(model.deaths(before["other"], o))
            assert counters(engine, "rockets")["events"][:3] == [len(died), 0, len(aged)]
            assert counters(engine, "other")["events"][0] == len(other)
            links = [model.Link(died, 2, 600), model.Link(aged, 1, 600),
                     model.Link(other, 3, 500)]
            host = counters(engine, "sparks")["step_budget"]   # an explicit rate still emits
            check_births(before["sparks"], after["sparks"], host, links,
                         inherit=[1.0, 0.0, -0.25], source=[r, r, o])
            totals += [len(died), len(aged), len(other)]
            before = after
    assert totals.min() > 0


CHAIN = HEAD + rockets(600, on_death='{ emitter = "sparks", count = 4, inherit_velocity = 0.5 }')
CHAIN += sparks(1200, on_death='{ emitter = "embers", count = 2 }',
                lifetime="[0.04, 0.12]")
CHAIN += sparks(900, name="embers", shape='{ kind = "disk", radius = 0.1 }',
                speed="[0.2, 0.4]")


def test_a_chain_of_two_levels_spawns_down_the_chain(gpu):
    """rockets -> sparks -> embers: sparks born from rockets' deaths die and spawn embers, in
    the same step order (sources before targets, whatever the scene order)."""
    head, *entities = CHAIN.split("\n[[entity]]")
    reordered = "\n[[entity]]".join([head, *reversed(entities)])   # embers first
    names = ("rockets", "sparks", "embers")
    counts = {"embers": 0, "sparks reborn where they died": 0}
    with Engine(loads_scene(reordered)) as engine:
        passes = engine.passes()
        order = [passes.index(f"{n}:emitter:spawn") for n in names]
        assert order == sorted(order)
        before = states(engine, *names)
        for _ in range(30):
            engine.step()
            after = states(engine, *names)
            for source, target, count in (("rockets", "sparks", 4), ("sparks", "embers", 2)):
                died = np.flatnonzero(model.deaths(before[source], after[source]))
                quota = model.quota(len(after[source]["age"]), len(after[target]["age"]), count)
                # a spark born again in the slot it died in keeps no record of where it died
                reborn = bool((after[source]["age"][died] == 0.0).any())
                counts["sparks reborn where they died"] += reborn
                born = check_births(before[target], after[target], 0,
                                    [model.Link(died, count, quota)],
                                    radius=0.1 if target == "embers" else 0.0,
                                    source=None if reborn else [after[source]])
                counts["embers"] += born if target == "embers" else 0
            before = after
    assert counts["embers"] > 0 and counts["sparks reborn where they died"] > 0


def test_two_runs_are_byte_identical(gpu):
    names = ("rockets", "sparks", "embers")
    runs = []
    for _ in range(2):
        with Engine(loads_scene(CHAIN)) as engine:
            engine.step(25)
            runs.append(states(engine, *names))
    for name in names:
        for key in ("position", "velocity", "age", "lifetime"):
            assert runs[0][name][key].tobytes() == runs[1][name][key].tobytes(), (name, key)
    assert runs[0]["embers"]["alive"].any()


def test_collisions_send_events_from_where_the_particle_touched(gpu):
    """Particles fall onto a floor plane; each that touches it in a step (numpy: it would end
    below the plane) spawns a child at the contact point on the surface."""
    text = HEAD + rockets(800, lifetime="5.0", direction="[0.0, -1.0, 0.0]", spread_deg="30.0",
                          speed="[1.0, 3.0]", gravity="[0.0, 0.0, 0.0]",
                          shape='{ kind = "box", size = [2.0, 1.0, 2.0] }',
                          position="[0.0, 0.5, 0.0]", collision="{ restitution = 0.5 }",
                          on_collision='{ emitter = "sparks", count = 2 }')
    text += sparks(2000) + FLOOR
    total = 0
    with Engine(loads_scene(text)) as engine:
        engine.step()   # the burst is born at the end of the first step
        before = states(engine, "rockets", "sparks")
        for _ in range(25):
            engine.step()
            after = states(engine, "rockets", "sparks")
            r = before["rockets"]
            landing = r["position"][:, 1] + r["velocity"][:, 1] * np.float32(DT)
            assert not np.any(r["alive"] & (np.abs(landing) < 1e-6))   # no borderline case
            touched = np.flatnonzero(r["alive"] & (landing < 0.0))
            assert counters(engine, "rockets")["events"][:3] == [0, len(touched), 0]
            check_births(before["sparks"], after["sparks"], 0,
                         [model.Link(touched, 2, 800)], source=[after["rockets"]])
            assert np.all(after["rockets"]["position"][touched, 1] == 0.0)   # on the floor
            total += len(touched)
            before = after
    assert total > 100


SCRIPT = """
heard = []

def on_event(ctx, name, data):
    heard.append((ctx.frame, name, dict(data)))
"""


def test_scripts_hear_the_counts_late_and_none_is_lost(gpu, tmp_path):
    (tmp_path / "listen.py").write_text(SCRIPT)
    text = HEAD.replace('name = "events"', 'name = "events"\nscript = "listen.py"')
    text += rockets(600, on_death='{ emitter = "sparks", count = 1 }') + sparks(700)
    path = tmp_path / "events.toml"
    path.write_text(text)
    with Engine(load_scene(path)) as engine:
        heard = engine.scripts.scripts[0].hooks["on_event"].__globals__["heard"]
        before = engine.state("rockets")
        died_at = {}
        for frame in range(40):
            engine.step()
            after = engine.state("rockets")
            died_at[frame] = int(model.deaths(before, after).sum())
            before = after
        total = engine.stats()["entities"]["rockets"]["events_total"]["death"]
    assert total == sum(died_at.values()) == 600
    assert {name for _, name, _ in heard} == {"death:rockets"}
    assert all(data["count"] > 0 for _, _, data in heard)
    assert sum(data["count"] for _, _, data in heard) == 600   # all heard by the 40th step
    first_death = min(f for f, n in died_at.items() if n)
    assert heard[0][0] > first_death          # one or two steps late, never early
    assert len(heard) > 3


def test_an_unset_rate_is_the_default_unless_events_target_the_emitter(gpu):
    text = HEAD + rockets(300, on_death='{ emitter = "sparks" }',
                          on_age='{ emitter = "bursting", every = 1.0 }')
    text += sparks(300)                                   # a target: no rate of its own
    text += emitter("plain", capacity=100)                # no target: the default rate
    text += emitter("bursting", capacity=100, bursts="[{ time = 0.0, count = 7 }]")
    text += emitter("chosen", capacity=100, rate="50.0")  # a target whose scene sets a rate
    text += emitter("feeder", capacity=10, on_death='{ emitter = "chosen" }')
    with Engine(loads_scene(text)) as engine:
        engine.step()
        budgets = {n: counters(engine, n)["step_budget"]
                   for n in ("sparks", "plain", "bursting", "chosen")}
    # plain: 1000/s x 0.02 s; bursting: its burst alone; chosen: 50/s x 0.02 s
    assert budgets == {"sparks": 0, "plain": 20, "bursting": 7, "chosen": 1}


# bad input -------------------------------------------------------------------------------------
BAD = {
    "missing": (rockets(on_death='{ emitter = "sprks" }') + sparks(10),
                r"entity 'rockets': emitter\.on_death\.emitter: no entity named 'sprks'"),
    "not an emitter": (rockets(on_collision='{ emitter = "well" }')
                       + "\n[[entity]]\nname = \"well\"\n[entity.attractor]\n",
                       r"entity 'rockets': emitter\.on_collision\.emitter: expected an entity "
                       r"with emitter, found 'well' with attractor"),
    "itself": (rockets(on_death='{ emitter = "rockets" }'),
               r"entity 'rockets': emitter\.on_death\.emitter: expected sub-emitters without a "
               r"cycle, found rockets -> rockets"),
    "cycle": (rockets(on_death='{ emitter = "sparks" }')
              + sparks(10, on_age='{ emitter = "rockets", every = 0.5 }'),
              r"entity 'sparks': emitter\.on_age\.emitter: expected sub-emitters without a "
              r"cycle, found rockets -> sparks -> rockets"),
    "atomic source": (rockets(on_death='{ emitter = "sparks" }', allocation='"atomic"')
                      + sparks(10), r"entity 'rockets': emitter\.allocation: expected "
                                    r"\"ordered\" for an emitter that sends events"),
    "atomic target": (rockets(on_death='{ emitter = "sparks" }')
                      + sparks(10, allocation='"ticket"'),
                      r"entity 'rockets': emitter\.on_death\.emitter: expected an emitter with "
                      r"allocation = \"ordered\" .*found 'sparks' with allocation = \"ticket\""),
    "too often": (rockets(on_age='{ emitter = "sparks", every = 0.01 }') + sparks(10),
                  r"entity 'rockets': emitter\.on_age\.every: expected at least fixed_dt "
                  r"\(0\.02 s\).*found 0\.01"),
    "no count": (rockets(on_death='{ emitter = "sparks", count = 0 }') + sparks(10),
                 r"entity 'rockets': emitter\.on_death\.count: expected int >= 1, found 0"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_links_are_one_line_scene_errors_naming_the_field(case):
    text, pattern = BAD[case]
    with pytest.raises(SceneError, match=pattern) as caught:
        loads_scene(HEAD + text)
    assert "\n" not in str(caught.value)


def test_validate_names_the_field_of_a_cycle(tmp_path):
    path = tmp_path / "cycle.toml"
    path.write_text(HEAD + BAD["cycle"][0])
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "emitter.on_age.emitter" in line]
    assert len(lines) == 1 and "rockets -> sparks -> rockets" in lines[0]


def test_a_spawn_closing_a_cycle_is_refused_and_the_world_runs_on(gpu):
    text = HEAD + rockets(200, on_death='{ emitter = "sparks" }') + sparks(
        200, on_death='{ emitter = "embers" }') + sparks(200, name="embers")
    with Engine(loads_scene(text)) as engine:
        engine.step(3)
        with pytest.raises(SceneError, match=r"emitter\.on_death\.emitter: expected "
                                             r"sub-emitters without a cycle"):
            engine.entity("embers").emitter.on_death = SubEmitter(emitter="rockets")
            engine.step()
        assert engine.entity("embers").emitter.on_death is None   # the edit was undone
        engine.step(3)
        assert engine.stats()["entities"]["rockets"]["capacity"] == 200
