"""The one-pass ordered step (emitter/update_ranked.wgsl: update, free ranks by decoupled
look-back, born slots, alive list and draw arguments in one dispatch, then emitter/births.wgsl
for the born particles) against the multi-pass step
(update, free scan, count, alive scan, spawn, prepare), both run for real on this adapter.

By default the host takes the one-pass step only where resident workgroups keep running
(NVIDIA), for emitters alone without events (systems/emitter/tuning.py, ``one_pass``, says
why). Here the Engine's tuning forces it on, for batches and event sources too. lavapipe runs
a workgroup to its end on one thread and hands out the tickets in the order workgroups begin,
so a tile waits only for a tile that another thread is running.

The oracle is the multi-pass run of the same scene: every particle's bytes (custom attributes
too), the alive lists and the counters must be equal, for emitters alone and batched (ragged
capacities: 1, 255, 257 slots; mixed blends, forces on some), budgets above and below the free
slots, sub-emitter events (sources take the one pass, targets keep the multi-pass step),
tiles of several blocks with a short last tile, look-backs that walk through several rounds
(tiles publishing no inclusive prefixes), fewer workgroups than tiles (each ranking a tile at
once or after stepping the next) and births given in the update itself.
Independently of either path, the alive list must hold each alive slot once, counted, and the
look-back's control words must be back at rest with no wait given up."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace

import numpy as np
import pytest
from test_emitter_batches import HEADER, MIXED, emitter, snapshot
from test_emitter_step_fused import BUDGETS, check_alive_lists
from test_events import CHAIN

from emberfx.core import wgsl
from emberfx.core.readback import read_array
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter import step
from emberfx.systems.emitter.tuning import DEFAULT, EmitterTuning

SHADER = "emitter/update_ranked.wgsl"
CONTROL = {name: wgsl.int_constant(SHADER, name)
           for name in ("TICKET", "FINISHED", "EPOCH", "STALLS", "CONTROL_WORDS")}
LANES = wgsl.int_constant("emitter/types.wgsl", "BLOCK")   # tiles a look-back round reads
MAX_TILE_BLOCKS = wgsl.int_constant(SHADER, "MAX_TILE_BLOCKS")
# 70000 slots = 274 blocks: look-backs of more than one round (LANES tiles) without inclusive
# prefixes, a full pool and a budget below its free slots
ROUNDS = (HEADER + emitter("wide", 70000, "additive", -1.0, rate=2e6)
          + emitter("sparse", 20000, "alpha", 0.0, rate=3e4))

ATTRIBUTES = HEADER + emitter("hot", 777, "additive", 0.0, """
attributes = { temperature = "f32", home = "vec3f", steps = "u32" }
init = "init.wgsl"
update = "update.wgsl"
""", rate=2000.0) + emitter("plain", 300, "alpha", 1.0)
INIT = """fn init(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).home = (*p).position;
    (*p).temperature = rand(ctx);
}
"""
UPDATE = """fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {
    (*p).temperature += 2.0 * ctx.dt;
    (*p).steps += 1u;
    (*p).velocity.y += 0.5 * ctx.dt;
}
"""
# The births pass (emitter/births.wgsl) unless a test says otherwise: by default these small
# pools would get their births in the update (births_in_update_up_to)
BASE = replace(DEFAULT, births_in_update=False)


def run(text: str, one_pass: bool | None, batching: bool = True, steps: int = 20,
        path: str = "<one-pass>", tuning: EmitterTuning = BASE) -> tuple[dict, list[str], dict]:
    """Every emitter's state, the pass names and every one-pass simulation's control words,
    stepped under ``tuning`` with its ``one_pass`` set to ``one_pass``."""
    with Engine(loads_scene(text, path=path), batching=batching,
                emitter_tuning=replace(tuning, one_pass=one_pass)) as engine:
        engine.step(steps)
        state = snapshot(engine)
        names = [p.name for p in engine.frame_passes()]
        control = {}
        for name in names:
            if name.endswith(":emitter:update"):
                owner = name.split(":")[0]
                tiles = engine.resources.get(f"{owner}/tiles")
                if tiles is not None and f"{owner}:emitter:spawn" not in names:
                    words = read_array(engine.device, tiles, np.uint32)
                    control[owner] = words[:CONTROL["CONTROL_WORDS"]]
        return state, names, control


def check_control_words(control: dict, steps: int) -> None:
    """Between dispatches the ticket and finish count are 0, and the epoch counts the steps."""
    assert control
    for owner, words in control.items():
        assert words[CONTROL["TICKET"]] == 0 and words[CONTROL["FINISHED"]] == 0, owner
        assert words[CONTROL["EPOCH"]] == steps, owner
        assert words[CONTROL["STALLS"]] == 0, owner


@pytest.mark.parametrize("batching", [True, False], ids=["batched", "alone"])
def test_one_pass_step_is_byte_identical_to_the_multi_pass_step(gpu, batching):
    one, one_passes, control = run(MIXED, True, batching)
    multi, multi_passes, _ = run(MIXED, False, batching)
    assert one.keys() == multi.keys() == set("abcde")
    for name in multi:
        assert one[name] == multi[name], name
    check_alive_lists(one)
    check_control_words(control, 20)
    assert sum(c["alive"] for _, _, c in one.values()) > 500   # the pools are busy
    simulation = [n for n in one_passes if ":emitter:" in n and not n.endswith(
        (":draw", ":depth")) and ":sort" not in n]
    # one update and one births pass per simulation, nothing else
    assert [n.rsplit(":", 1)[1] for n in simulation] == ["update", "births"] * (
        1 if batching else 5)
    assert any(n.endswith(":emitter:spawn") for n in multi_passes)


@pytest.mark.parametrize("first_lanes", [1, 32, LANES])
@pytest.mark.parametrize("batching", [True, False], ids=["batched", "alone"])
def test_look_backs_through_several_rounds_give_the_same_births(gpu, batching, first_lanes):
    """With no inclusive prefixes but the first tile's, tile t sums t aggregates, in
    ceil(t / LANES) rounds or more (the first reading ``first_lanes`` tiles); births capped by
    the free slots and a budget below them come out as from the multi-pass step."""
    tuning = replace(BASE, tile_blocks=1, look_first_lanes=first_lanes, publish_inclusive=False)
    one, _, control = run(ROUNDS, True, batching, steps=40, tuning=tuning)
    multi, _, _ = run(ROUNDS, False, batching, steps=40)
    assert math.ceil(70000 / 256) > LANES
    for name in multi:
        assert one[name] == multi[name], name
    check_alive_lists(one)
    check_control_words(control, 40)
    wide, sparse = one["wide"][2], one["sparse"][2]
    assert wide["alive"] == 70000 and wide["born"] > 0
    assert sparse["born"] > 0 and sparse["alive"] < 20000


@pytest.mark.parametrize("tile_blocks", [2, 3, MAX_TILE_BLOCKS])
@pytest.mark.parametrize("inclusive", [True, False], ids=["inclusive", "aggregates"])
@pytest.mark.parametrize("prefetch", [True, False], ids=["prefetch", "in-turn"])
def test_tiles_of_several_blocks_give_the_same_births(gpu, tile_blocks, inclusive, prefetch):
    """An emitter alone takes tiles of several blocks (79 blocks: a short last tile for 2, 3
    and 16), loading each block's particles ahead or in turn; a batch keeps tiles of one
    block."""
    tuning = replace(BASE, tile_blocks=tile_blocks, prefetch_particles=prefetch,
                     publish_inclusive=inclusive)
    one, names, control = run(BUDGETS, True, False, tuning=tuning)
    multi, _, _ = run(BUDGETS, False, False)
    assert 79 % tile_blocks != 0
    for name in multi:
        assert one[name] == multi[name], name
    check_alive_lists(one)
    check_control_words(control, 20)
    assert one["full"][2]["alive"] == 20000 and one["sparse"][2]["born"] > 0


@pytest.mark.parametrize("rank_after_next", [False, True], ids=["at-once", "after-next"])
@pytest.mark.parametrize("workgroups", [1, 3, None])
@pytest.mark.parametrize("batching", [True, False], ids=["batched", "alone"])
def test_workgroups_that_step_several_tiles_give_the_same_births(gpu, workgroups, batching,
                                                                 rank_after_next):
    """Fewer workgroups than tiles: each steps tile after tile (one workgroup: every tile of
    the pass, in order; three: interleaved by ticket; one per tile: as many as come), ranking
    each at once or after it stepped the next, alone (40 tiles of 2 blocks, a short last one)
    and batched (tiles of one block, several emitters)."""
    tuning = replace(BASE, tile_blocks=2, workgroups_at_most=workgroups,
                     rank_after_next=rank_after_next)
    one, _, control = run(BUDGETS, True, batching, tuning=tuning)
    multi, _, _ = run(BUDGETS, False, batching)
    for name in multi:
        assert one[name] == multi[name], name
    check_alive_lists(one)
    check_control_words(control, 20)
    assert one["full"][2]["alive"] == 20000 and one["sparse"][2]["born"] > 0


def test_custom_attributes_and_modifiers_run_the_same_in_one_pass(gpu, tmp_path):
    """The generated code binds the attributes in group 2 of the one-pass shader (its group 1
    is free): init at every birth, update every step, the same bytes as the multi-pass step."""
    (tmp_path / "init.wgsl").write_text(INIT)
    (tmp_path / "update.wgsl").write_text(UPDATE)
    path = str(tmp_path / "scene.toml")
    one, names, control = run(ATTRIBUTES, True, path=path)
    multi, _, _ = run(ATTRIBUTES, False, path=path)
    for name in ("hot", "plain"):
        assert one[name] == multi[name], name
    arrays = one["hot"][0]
    assert {"temperature", "home", "steps"} <= arrays.keys()
    assert np.frombuffer(arrays["steps"], np.uint32).max() > 0
    check_alive_lists(one)
    check_control_words(control, 20)
    assert "hot:emitter:update" in names and "hot:emitter:spawn" not in names


@pytest.mark.parametrize("scene", ["mixed", "budgets", "attributes"])
@pytest.mark.parametrize("batching", [True, False], ids=["batched", "alone"])
def test_births_given_in_the_update_are_the_same(gpu, tmp_path, scene, batching):
    """births_in_update: the one-pass update gives the born slots their particles (shape,
    inherited velocity, birth expressions, `init` with custom attributes), no births pass
    follows, and every byte equals the multi-pass step's; with tiles of 3 blocks, ranked after
    the next tile, in 2 workgroups where alone."""
    (tmp_path / "init.wgsl").write_text(INIT)
    (tmp_path / "update.wgsl").write_text(UPDATE)
    path = str(tmp_path / "scene.toml")
    text = {"mixed": MIXED, "budgets": BUDGETS, "attributes": ATTRIBUTES}[scene]
    multi, _, _ = run(text, False, batching, path=path)
    tuning = replace(BASE, births_in_update=True, tile_blocks=3, rank_after_next=True,
                     workgroups_at_most=2)
    one, names, control = run(text, True, batching, path=path, tuning=tuning)
    assert one.keys() == multi.keys()
    for name in multi:
        assert one[name] == multi[name], name
    check_alive_lists(one)
    check_control_words(control, 20)
    assert sum(c["born"] for _, _, c in one.values()) > 0
    assert not [n for n in names if n.endswith((":emitter:births", ":emitter:spawn"))]


@pytest.mark.parametrize("up_to", [0, 1000])
def test_births_move_into_the_update_while_nothing_acts(gpu, up_to):
    """births_in_update None: the update gives the births while no force acts (no births
    pass), a births pass follows once an attractor is spawned and goes when it is deleted,
    except in pools of up to births_in_update_up_to slots (here 1000: "b"), whose update
    gives them throughout; every byte equals the multi-pass step's through the changes."""
    text = (HEADER + emitter("a", 3000, "additive", 0.0, rate=4000.0)
            + emitter("b", 700, "alpha", 1.0, rate=900.0))
    tuning = replace(DEFAULT, tile_blocks=2, births_in_update=None, births_in_update_up_to=up_to)

    def births_passes(one_pass: bool) -> tuple[dict, list[list[str]]]:
        seen = []
        with Engine(loads_scene(text, path="<births>"), batching=False,
                    emitter_tuning=replace(tuning, one_pass=one_pass)) as engine:
            for change in (None, "spawn", "delete"):
                if change == "spawn":
                    engine.spawn("pull", {"attractor": {"position": [0.0, 1.0, 0.0],
                                                        "strength": 3.0}})
                elif change == "delete":
                    engine.delete("pull")
                engine.step(6)
                seen.append(sorted(n for n in (p.name for p in engine.frame_passes())
                                   if n.endswith((":emitter:births", ":emitter:spawn"))))
            return snapshot(engine), seen

    one, seen = births_passes(True)
    multi, _ = births_passes(False)
    with_force = ["a:emitter:births", "b:emitter:births"] if up_to == 0 else ["a:emitter:births"]
    assert seen == [[], with_force, []]
    for name in multi:
        assert one[name] == multi[name], name
    check_alive_lists(one)
    assert all(c["born"] > 0 for _, _, c in one.values())


@pytest.mark.parametrize("births", [False, True, None])
def test_each_engine_steps_under_its_own_tuning(gpu, births):
    """`emberfx bench emitter` builds engines with a switch flipped beside one with the
    default: the births go where each engine's tuning puts them (the births pass follows only
    an update that leaves them out; None: in the update of this small pool no force acts on),
    whatever the tuning of the engines built before it, and the bytes equal the multi-pass
    step's."""
    text = HEADER + emitter("a", 3000, "additive", 0.0, rate=4000.0)
    multi, _, _ = run(text, False, steps=8)
    engine = Engine(loads_scene(text, path="<settings>"),
                    emitter_tuning=replace(DEFAULT, one_pass=True, births_in_update=births))
    other = Engine(loads_scene(text, path="<settings>"),
                   emitter_tuning=replace(DEFAULT, one_pass=True,
                                          births_in_update=births is False))
    with engine, other:
        engine.step(8)   # the frame graph is first built here
        other.step(1)
        names = [p.name for p in engine.frame_passes()]
        assert ("a:emitter:births" in names) == (births is False)
        other_names = [p.name for p in other.frame_passes()]
        assert ("a:emitter:births" in other_names) == (births is not False)
        one = snapshot(engine)
    assert one == multi
    assert one["a"][2]["born"] > 0


def test_event_sources_take_one_pass_and_targets_keep_the_multi_pass_step(gpu):
    one, names, control = run(CHAIN, True, steps=15)
    multi, _, _ = run(CHAIN, False, steps=15)
    for name in multi:
        assert one[name] == multi[name], name
    check_alive_lists(one)
    assert one["embers"][2]["born"] > 0   # events reached the end of the chain
    # rockets send events only: one pass; sparks and embers receive births from events
    assert "rockets:emitter:spawn" not in names and set(control) == {"rockets"}
    assert "sparks:emitter:spawn" in names and "embers:emitter:spawn" in names
    check_control_words(control, 15)


def test_empty_and_one_slot_pools(gpu):
    text = (HEADER + emitter("idle", 600, "additive", 0.0, rate=0.0)
            + emitter("single", 1, "alpha", 1.0, rate=600.0)
            + emitter("pair", 2, "opaque", -1.0, rate=600.0))
    for batching in (True, False):
        one, _, control = run(text, True, batching, steps=7)
        multi, _, _ = run(text, False, batching, steps=7)
        for name in multi:
            assert one[name] == multi[name], name
        check_alive_lists(one)
        check_control_words(control, 7)
        assert one["idle"][2]["alive"] == 0 and one["single"][2]["alive"] == 1


def test_which_step_is_taken(gpu):
    """By default (one_pass None) only where the adapter keeps resident workgroups running,
    which a software adapter is not assumed to, and then only for emitters alone that send no
    events; asked for (True), batches too; past the slot limit (RANKED_MAX_SLOTS, or a lower
    one_pass_slot_limit), the multi-pass step."""
    _, names, _ = run(BUDGETS, None, batching=False, steps=1)
    one_pass = not any(n.endswith(":emitter:spawn") for n in names)
    assert one_pass == gpu.keeps_resident_workgroups_running
    if gpu.is_software:
        assert not gpu.keeps_resident_workgroups_running
    for text, batching in ((MIXED, True), (CHAIN, False)):   # a batch; event sources
        _, names, _ = run(text, None, batching=batching, steps=1)
        assert any(n.endswith(":emitter:spawn") for n in names)
    _, names, _ = run(MIXED, True, steps=1)
    assert not any(n.endswith(":emitter:spawn") for n in names)
    _, names, _ = run(MIXED, True, steps=1, tuning=replace(BASE, one_pass_slot_limit=512))
    assert any(n.endswith(":emitter:spawn") for n in names)   # the batch holds > 512 slots
    assert step.RANKED_MAX_SLOTS > 2 * 1024 * 256   # the default limit is far above these


def test_a_wait_that_gives_up_is_reported_in_the_stats(gpu):
    """With no round of waiting allowed, every tile but each emitter's first gives up: the
    step is wrong, and the emitter's stats say how many tiles gave up (none otherwise)."""
    text = HEADER + emitter("wide", 20000, "additive", 0.0, rate=3e4)   # 79 blocks: 20 tiles
    for rounds, expected in ((None, 0), (0, 19)):
        tuning = replace(DEFAULT, one_pass=True, tile_blocks=4, look_back_rounds=rounds)
        with Engine(loads_scene(text, path="<stalls>"), emitter_tuning=tuning) as engine:
            engine.step(6)
            engine.state("wide")   # a blocking read: the ring's copies have landed
            engine.step()          # and this step collects them
            stats = engine.stats()["entities"]["wide"]
            assert stats["look_back_stalls"] == expected


def test_a_tuning_is_frozen_and_refuses_unknown_names():
    """The bench's baselines are tunings of their own: a flipped switch leaves DEFAULT as it
    was, a misspelt one is refused instead of silently measuring the default, and a tuning
    cannot change under the engine it was given to."""
    flipped = replace(DEFAULT, rank_after_next=not DEFAULT.rank_after_next)
    assert flipped.rank_after_next != DEFAULT.rank_after_next == EmitterTuning().rank_after_next
    with pytest.raises(TypeError, match="rank_after_nxt"):
        replace(DEFAULT, rank_after_nxt=True)   # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.one_pass = False   # type: ignore[misc]
    assert DEFAULT.one_pass is None


def test_a_pool_that_forces_act_on_takes_the_forces_row_of_tile_sizes():
    """tile_shape reads the tuning's tile_blocks_from row for the pool's variant (forces or
    none), by the pool's blocks, for the tile's blocks and its prefetch; batches and event
    sources keep tiles of one block; tile_blocks and prefetch_particles override the table."""
    from types import SimpleNamespace
    from typing import Any

    from emberfx.systems.emitter.component import Emitter

    tuning = EmitterTuning(tile_blocks_from=(((100, 16, False), (0, 2, True)),
                                             ((100, 4, True), (0, 3, False))))
    alone: Any = SimpleNamespace(component=Emitter(), variant=(0, 0, False))
    pulled: Any = SimpleNamespace(component=Emitter(), variant=(1, 0, False))
    for blocks, free, forced in ((4096, (16, False), (4, True)), (100, (16, False), (4, True)),
                                 (99, (2, True), (3, False))):
        sim: Any = SimpleNamespace(members=1, blocks=blocks)
        assert step.tile_shape(tuning, alone, sim) == free, blocks
        assert step.tile_shape(tuning, pulled, sim) == forced, blocks
    batch: Any = SimpleNamespace(members=2, blocks=4096)
    assert step.tile_shape(tuning, pulled, batch) == (1, True)
    tuning = replace(tuning, tile_blocks=5, prefetch_particles=False)
    alone_sim: Any = SimpleNamespace(members=1, blocks=4096)
    assert step.tile_shape(tuning, pulled, alone_sim) == (5, False)
    assert step.tile_shape(tuning, pulled, batch) == (1, False)


@pytest.mark.parametrize("lanes", [0, LANES + 1])
def test_a_first_look_back_round_outside_one_to_a_block_is_refused(lanes):
    with pytest.raises(ValueError, match=f"EmitterTuning.look_first_lanes: expected 1 to {LANES}, "
                                         f"found {lanes}"):
        EmitterTuning(look_first_lanes=lanes)


@pytest.mark.parametrize("field, value, expected", [
    ("tile_blocks", 0, f"1 to {MAX_TILE_BLOCKS}"), ("tile_blocks", MAX_TILE_BLOCKS + 1,
                                                    f"1 to {MAX_TILE_BLOCKS}"),
    ("workgroups_at_most", 0, "1 or more"), ("ranks_threads", -1, "1 or more")])
def test_a_tuning_out_of_range_is_refused(field, value, expected):
    with pytest.raises(ValueError, match=f"EmitterTuning.{field}: expected {expected}, "
                                         f"found {value}"):
        EmitterTuning(**{field: value})


def test_an_engine_refuses_a_tuning_of_another_kind(gpu):
    with pytest.raises(TypeError, match=r"emitter_tuning=.*expected an EmitterTuning.*dict"):
        Engine(loads_scene(MIXED, path="<tuning>"),
               emitter_tuning={"one_pass": False})   # type: ignore[arg-type]
