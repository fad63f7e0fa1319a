"""Batches of like emitters (systems/emitter/batches.py): one arena per buffer and one dispatch
per simulation pass for all, byte-identical to the same emitters run alone (Engine(batching=
False), which runs every emitter as a batch of one over its own buffers).

The oracle is the unbatched run of the same scene: every particle's bytes, the alive lists, the
counters and the rendered image must be equal, through ragged capacities (1, 255, 257 slots, a
non-multiple of the 256-slot block), mixed blends (the alpha ones sort their own views), forces
acting on some emitters only, spawns and deletes that regroup the batch, and a live edit that
moves an emitter out of its batch."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_collisions import FLOOR

from emberfx.core.frame_graph import Phase
from emberfx.core.readback import read_array
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.tuning import DEFAULT, EmitterTuning

HEADER = """
[scene]
name = "batches"
seed = 11
size = [160, 96]
[camera]
kind = "perspective"
position = [0.0, 2.0, 6.0]
target = [0.0, 0.5, 0.0]
"""


def emitter(name: str, capacity: int, blend: str, x: float, extra: str = "",
            rate: float | None = None) -> str:
    return f"""
[[entity]]
name = "{name}"
[entity.emitter]
capacity = {capacity}
rate = {capacity * 2 if rate is None else rate}
lifetime = [0.2, 0.6]
speed = [0.5, 2.0]
position = [{x}, 0.0, 0.0]
size = 0.05
blend = "{blend}"
{extra}
"""


PULL = """
[[entity]]
name = "pull"
[entity.attractor]
position = [0.0, 1.5, 0.0]
strength = 4.0
"""

MIXED = (HEADER
         + emitter("a", 1, "additive", -2.0)
         + emitter("b", 255, "alpha", -1.0)
         + emitter("c", 257, "opaque", 0.0, 'affected_by = ["pull"]')
         + emitter("d", 700, "alpha", 1.0, 'shape = { kind = "sphere", radius = 0.3 }')
         + emitter("e", 1000, "additive", 2.0)
         + PULL)


def snapshot(engine: Engine) -> dict:
    """Everything a batch could get wrong, by emitter: particle arrays, alive list, counters."""
    out = {}
    for name in engine.entity_names():
        if "emitter" not in engine.components_of(name):
            continue
        system = engine.system_of(name, "emitter")
        ref = engine.entity_ref(name)
        counters = system.counters(ref)
        counters.pop("step_budget")
        out[name] = ({k: v.tobytes() for k, v in engine.state(name).items()},
                     system.alive_list(ref).tobytes(), counters)
    return out


def run(text: str, batching: bool, steps: int = 24, between=None,
        tuning: EmitterTuning = DEFAULT) -> tuple[dict, np.ndarray, int]:
    with Engine(loads_scene(text, path="<batches>"), batching=batching,
                emitter_tuning=tuning) as engine:
        engine.step(steps)
        if between is not None:
            between(engine)
            engine.step(steps)
        passes = len([p for p in engine.frame_passes() if p.phase != Phase.READBACK])
        return snapshot(engine), engine.render(), passes


def same_as_alone(text: str, steps: int = 24, between=None,
                  tuning: EmitterTuning = DEFAULT) -> tuple[dict, int, int]:
    """Run ``text`` batched and with every emitter alone (under ``tuning``), and require the
    same emitters with the same bytes and the same image; the batched snapshot and both pass
    counts."""
    batched, image, passes = run(text, True, steps=steps, between=between, tuning=tuning)
    alone, image_alone, passes_alone = run(text, False, steps=steps, between=between,
                                           tuning=tuning)
    assert batched.keys() == alone.keys()
    for name in alone:
        assert batched[name] == alone[name], name
    assert np.array_equal(image, image_alone)
    return batched, passes, passes_alone


def test_batched_run_is_byte_identical_to_each_emitter_alone(gpu):
    batched, image, passes = run(MIXED, True)
    alone, image_alone, passes_alone = run(MIXED, False)
    assert batched.keys() == alone.keys() == set("abcde")
    for name in alone:
        assert batched[name] == alone[name], name
    assert sum(c["alive"] for _, _, c in alone.values()) > 500   # the pools are busy
    assert np.array_equal(image, image_alone)
    assert image.reshape(-1, 4)[:, :3].max() > 0                  # and something was drawn
    # five emitters: one update, count, spawn and prepare instead of five of each
    assert passes < passes_alone


def test_members_that_different_forces_act_on_stay_identical(gpu):
    """Each member of a batch reads its own force records (the update copies them per block
    into workgroup memory): one feels a pull, one a push, one both, one neither."""
    text = (HEADER
            + emitter("a", 300, "additive", -1.5, 'affected_by = ["pull"]')
            + emitter("b", 520, "additive", -0.5, 'affected_by = ["push"]')
            + emitter("c", 257, "additive", 0.5)
            + emitter("d", 256, "additive", 1.5, 'affected_by = []')
            + PULL + """
[[entity]]
name = "push"
[entity.attractor]
position = [0.5, -1.0, 0.0]
strength = -6.0
softening = 0.3
""")
    batched, passes, passes_alone = same_as_alone(text)
    assert passes < passes_alone   # they did share a batch
    assert all(batched[name][2]["alive"] > 0 for name in "abcd")


def test_one_simulation_pass_per_batch_and_views_into_one_arena(gpu):
    with Engine(loads_scene(MIXED, path="<batches>")) as engine:
        names = [p.name for p in engine.frame_passes()]
        updates = [n for n in names if n.endswith(":emitter:update")]
        assert len(updates) == 1 and updates[0].startswith("~batch")
        views = [engine.resources[f"{e}/particles"] for e in "abcde"]
        assert len({id(v.buffer) for v in views}) == 1
        assert all(v.offset % 256 == 0 for v in views)
        assert [v.size for v in views] == [c * 32 for c in (1, 255, 257, 700, 1000)]
        # one draw pass per run of like draws (additive a, e; alpha b, d; opaque c), one
        # drawIndirect per emitter from the batch's one args buffer, tagged by first_instance
        draws = [p for p in engine.frame_passes() if p.name.endswith(":emitter:draw")]
        assert sorted(p.name for p in draws) == ["a:emitter:draw", "b:emitter:draw",
                                                 "c:emitter:draw"]
        calls = [args for p in draws for args in (p.op.indirect, *p.op.more_indirect)]
        assert len(calls) == 5 and len({id(buffer) for buffer, _ in calls}) == 1
        engine.step(3)
        system = engine.system_of("a", "emitter")
        for name in "abcde":
            pool = system.pools[name]
            args = read_array(engine.device, pool.buffers["draw_args"], np.uint32, 5)
            alive = system.counters(engine.entity_ref(name))["alive"]
            # drawIndexedIndirect: 6 indices, alive instances from the emitter's first entry
            assert args.tolist() == [6, alive, 0, 0, int(pool.param_record["alive_base"])]
            assert (pool.buffers["draw_args"].buffer, pool.buffers["draw_args"].offset) in calls
        # the shared passes declare what they write under every member's name too
        update = next(p for p in engine.frame_passes() if p.name == updates[0])
        assert {f"{e}/particles" for e in "abcde"} <= set(update.writes)


PREWARMED = (HEADER
             + emitter("a", 1, "additive", -2.0)
             + emitter("b", 255, "alpha", -1.0, "prewarm = 0.3")
             + emitter("c", 257, "opaque", 0.0, 'affected_by = ["pull"]\nprewarm = 0.5')
             + emitter("e", 1000, "additive", 2.0)
             + MIXED[MIXED.index("[[entity]]\nname = \"pull\""):])


def test_prewarmed_emitters_share_a_batch_and_stay_identical(gpu):
    """Prewarm runs each emitter alone before the first step; the pool then joins its batch
    (its state copied into the arenas), so a prewarmed emitter batches like any other."""
    batched, image, passes = run(PREWARMED, True)
    alone, image_alone, passes_alone = run(PREWARMED, False)
    assert batched.keys() == alone.keys() == set("abce")
    for name in alone:
        assert batched[name] == alone[name], name
    assert np.array_equal(image, image_alone)
    assert passes < passes_alone
    with Engine(loads_scene(PREWARMED, path="<batches>")) as engine:
        system = engine.system_of("a", "emitter")
        assert [sorted(p.entity.name for p in b.members) for b in system.batches] == [
            ["a", "b", "c", "e"]]
        # the prewarm filled them before the first step: 0.3 s of 510 births a second
        assert system.counters(engine.entity_ref("b"))["alive"] > 0

    def edit_prewarm(engine):   # a rebuild: prewarmed alone again, then back into the batch
        engine.entity("b").emitter.prewarm = 0.6

    same_as_alone(PREWARMED, steps=12, between=edit_prewarm)


def test_emitters_that_cannot_share_run_alone_beside_the_batch(gpu):
    # the atomic pool's budget covers every free slot: only then are its births reproducible
    text = (MIXED + emitter("atomic", 300, "additive", 0.5, 'allocation = "atomic"',
                            rate=300 * 60 * 2)
            + emitter("parent", 200, "additive", -0.5,
                      'on_death = { emitter = "child", count = 2 }')
            + emitter("child", 400, "additive", -0.5))
    same_as_alone(text)
    with Engine(loads_scene(text, path="<batches>")) as engine:
        system = engine.system_of("a", "emitter")
        batched_names = {p.entity.name for b in system.batches for p in b.members}
        # the atomic pool and the event source run alone; the target of its events batches
        assert batched_names == set("abcde") | {"child"}


def test_spawn_and_delete_regroup_and_stay_identical(gpu):
    def edit(engine):
        engine.delete("c")
        engine.spawn("f", {"emitter": {"capacity": 333, "rate": 600.0, "lifetime": [0.2, 0.5],
                                       "position": [0.0, 1.0, 0.0], "blend": "alpha"}})
    batched, _, _ = same_as_alone(MIXED, steps=12, between=edit)
    assert set(batched) == set("abdef")


def test_a_live_edit_that_needs_its_own_shader_moves_the_emitter_out(gpu):
    def edit(engine):
        engine.entity("d").emitter.speed = "1.0 + rand(ctx) * 0.5"   # a birth expression

    batched, image, _ = run(MIXED, True, steps=10, between=edit)
    alone, image_alone, _ = run(MIXED, False, steps=10, between=edit)
    for name in alone:
        assert batched[name] == alone[name], name
    with Engine(loads_scene(MIXED, path="<batches>")) as engine:
        engine.step(2)
        edit(engine)
        engine.step(1)
        system = engine.system_of("a", "emitter")
        assert {p.entity.name for b in system.batches for p in b.members} == set("abce")


@pytest.mark.parametrize("count", [0, 1])
def test_no_batch_of_fewer_than_two(gpu, count):
    text = HEADER + "".join(emitter(f"e{k}", 300, "additive", float(k)) for k in range(count))
    with Engine(loads_scene(text, path="<batches>")) as engine:
        engine.step(3)
        assert not any(n.startswith("~batch") for n in engine.passes())


def test_spawned_emitters_batch_in_groups_and_deletes_repack(gpu):
    """At run time: like emitters spawned one by one wait alone until SPAWN_GROUP have come and
    then form a batch; deleting most members of a batch packs it again; a spawned source whose
    events spawn into a member leaves that member in its batch, now receiving them. Every step
    stays byte-identical to the unbatched engine doing the same."""
    from emberfx.systems.emitter.batches import SPAWN_GROUP

    def script(engine):
        for k in range(SPAWN_GROUP + 1):
            engine.spawn(f"s{k}", {"emitter": {"capacity": 200 + 37 * k, "rate": 300.0,
                                               "lifetime": [0.2, 0.5], "blend": "alpha",
                                               "position": [0.1 * k, 0.5, 0.0]}})
        engine.step(3)
        for k in range(1, SPAWN_GROUP):
            engine.delete(f"s{k}")
        engine.step(3)
        engine.spawn("source", {"emitter": {"capacity": 100, "rate": 200.0,
                                            "on_death": {"emitter": "b", "count": 1}}})

    same_as_alone(MIXED, steps=6, between=script)
    with Engine(loads_scene(MIXED, path="<batches>")) as engine:
        system = engine.system_of("a", "emitter")
        engine.step(1)

        def batched_names():
            return {p.entity.name for b in system.batches for p in b.members
                    if system.pools.get(p.entity.name) is p}

        for k in range(SPAWN_GROUP - 1):
            engine.spawn(f"s{k}", {"emitter": {"capacity": 100}})
        assert batched_names() == set("abcde")          # waiting alone
        engine.spawn(f"s{SPAWN_GROUP - 1}", {"emitter": {"capacity": 100}})
        spawned = {f"s{k}" for k in range(SPAWN_GROUP)}
        # the new group merged with the batch of five (at most twice its size)
        assert batched_names() == set("abcde") | spawned
        engine.spawn("source", {"emitter": {"capacity": 50, "on_death": {"emitter": "c"}}})
        assert {"a", "c"} <= batched_names()
        assert system.pools["c"].batch.records_bases   # its batch now has event records
        engine.step(2)


EVENTS = (MIXED
          + emitter("p1", 300, "additive", -1.5, 'on_death = { emitter = "t1", count = 2 }')
          + emitter("p2", 200, "additive", 1.5,
                    'on_death = { emitter = "t2", count = 3, inherit_velocity = 0.5 }\n'
                    'on_age = { emitter = "t1", every = 0.05, count = 1 }')
          + emitter("t1", 900, "alpha", 0.0, rate=0.0)
          + emitter("t2", 700, "additive", 0.5, rate=50.0))


def test_event_targets_share_a_batch_and_stay_byte_identical(gpu):
    """Emitters that events spawn into join the batch of like emitters (t1 takes two links from
    two sources, t2 has a host rate too); sources run alone. Then the links change at run
    time: p1 is re-aimed at e (a member that received nothing), t2 is deleted, a new source
    spawns into b, and p2 is deleted (t1 then receives nothing). Every step stays
    byte-identical to the unbatched engine."""
    def edit(engine):
        engine.entity("p1").emitter.on_death.emitter = "e"
        engine.delete("t2")
        engine.delete("p2")
        engine.spawn("p3", {"emitter": {"capacity": 150, "rate": 400.0, "lifetime": [0.05, 0.1],
                                        "on_death": {"emitter": "b", "count": 2}}})

    batched, passes, passes_alone = same_as_alone(EVENTS, steps=12, between=edit)
    assert passes < passes_alone
    with Engine(loads_scene(EVENTS, path="<batches>")) as engine:
        system = engine.system_of("a", "emitter")
        assert [sorted(p.entity.name for p in b.members) for b in system.batches] == [
            ["a", "b", "c", "d", "e", "t1", "t2"]]
        engine.step(12)
        born = {n: system.counters(engine.entity_ref(n))["alive"] for n in ("t1", "t2")}
        assert born["t1"] > 0 and born["t2"] > 0, born   # events reached both
        batch = system.batches[0]
        assert set(batch.records_bases) == {system.pools[n].member for n in ("t1", "t2")}
        edit(engine)
        engine.step(3)
        batch = system.pools["e"].batch
        assert batch is not None and system.pools["b"].batch is batch
        assert {system.pools[n].member for n in ("e", "b")} == set(batch.records_bases)
        assert system.pools["t1"].buffers["event_records"].buffer is not \
            batch.sim.buffers["event_records"].buffer   # its own one-record buffer again


def test_rebuilt_event_target_and_source_stay_byte_identical(gpu):
    """A capacity edit rebuilds the target t1 (it leaves its batch, and a new batch is made
    with its new pool) and the source p1 (its link passes are made again)."""
    def edit(engine):
        engine.entity("t1").emitter.capacity = 1200
        engine.entity("p1").emitter.capacity = 350

    batched, _, _ = same_as_alone(EVENTS, steps=10, between=edit)
    assert batched["t1"][2]["alive"] > 0
    with Engine(loads_scene(EVENTS, path="<batches>")) as engine:
        engine.step(3)
        edit(engine)
        engine.step(2)
        system = engine.system_of("t1", "emitter")
        batch = system.pools["t1"].batch
        assert batch is not None and system.pools["t1"].member in batch.records_bases


def test_a_one_pass_batch_that_events_reach_takes_the_multi_pass_step(gpu):
    """With the one-pass step forced, a batch takes it until events spawn into a member; its
    births then come from the spawn pass, byte-identical to the emitters alone."""
    def aim(engine):   # a source appears that spawns into the batch
        engine.spawn("p", {"emitter": {"capacity": 200, "rate": 600.0, "lifetime": [0.05, 0.1],
                                       "on_death": {"emitter": "e", "count": 2}}})

    one_pass = replace(DEFAULT, one_pass=True)
    same_as_alone(MIXED, steps=8, between=aim, tuning=one_pass)
    with Engine(loads_scene(MIXED, path="<batches>"), emitter_tuning=one_pass) as engine:
        names = [p.name for p in engine.frame_passes()]
        assert not any(n.endswith(":emitter:spawn") and n.startswith("~batch") for n in names)
        aim(engine)
        engine.step(2)
        names = [p.name for p in engine.frame_passes()]
        assert any(n.endswith(":emitter:spawn") and n.startswith("~batch") for n in names)


THREE_KINDS = (HEADER
               + emitter("t1", 900, "additive", 0.0, rate=0.0)
               + emitter("t2", 700, "alpha", 0.5, rate=30.0)
               + emitter("p", 400, "additive", 0.0,
                         'gravity = [0.0, -6.0, 0.0]\n'
                         'collision = { restitution = 0.4 }\n'
                         'on_death = { emitter = "t1", count = 2 }\n'
                         'on_collision = { emitter = "t2", count = 1, inherit_velocity = 0.3 }\n'
                         'on_age = { emitter = "t1", every = 0.1, count = 1 }', rate=1500.0)
               + FLOOR)


def test_a_source_tallies_and_writes_its_links_into_one_batch_in_one_pass_each(gpu):
    """A source with all three kinds of events into two members of one batch tallies them in
    one pass and writes their records in one pass (emitter/event_tally.wgsl and
    event_write.wgsl, three links); with its targets alone, one of each per target. The bytes
    are the same."""
    batched, _, _ = same_as_alone(THREE_KINDS, steps=16)
    assert all(n > 0 for n in batched["p"][2]["events"][:3]), batched["p"][2]["events"]
    for batching, tallies in ((True, ["p:emitter:events:tally"]),
                              (False, ["p:emitter:events:t1:tally", "p:emitter:events:t2:tally"])):
        with Engine(loads_scene(THREE_KINDS, path="<batches>"), batching=batching) as engine:
            names = [p.name for p in engine.frame_passes()]
            assert sorted(n for n in names if n.endswith(":tally")) == tallies
            assert len([n for n in names if n.endswith(":write")]) == len(tallies)
