"""The fused ordered step (update, emitter/ranks.wgsl, spawn) against the multi-pass path it
replaces (free scan, count, alive scan, spawn, prepare), both run for real on this adapter.

The oracle is the multi-pass run of the same scene: every particle's bytes, the alive lists and
the counters must be equal, for emitters alone and batched (ragged capacities, mixed blends,
forces on some), sub-emitter events down a chain, budgets above and below the free slots, and a
free scan of several rounds (ranks.wgsl scans THREADS x PER_INVOCATION blocks a round; a few
invocations are forced here, as a device allowing fewer than 1024 would get). Independently of
either path, the alive list must hold each alive slot once (alpha emitters' lists are sorted
back to front after the step) and the counters' alive and draw instances must be their count."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from test_emitter_batches import HEADER, MIXED, emitter, snapshot
from test_events import CHAIN

from emberfx.core import wgsl
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.emitter.tuning import DEFAULT, EmitterTuning

PER_INVOCATION = wgsl.int_constant("emitter/ranks.wgsl", "PER_INVOCATION")

# "full" asks for far more births a step than it has free slots, "sparse" for far fewer; the
# lone 20000-slot pools span 79 blocks, so 4 invocations scan them in 3 rounds (3: in 4)
BUDGETS = (HEADER
           + emitter("full", 20000, "additive", -1.0, rate=6e6)
           + emitter("sparse", 20000, "alpha", 0.0, rate=3e4)
           + emitter("small", 300, "additive", 1.0, rate=1e4))
MULTI_PASS = (":emitter:count", ":emitter:prepare", ":free:scan:tiles0", ":alive:scan:tiles0")


def run(text: str, fused: bool, batching: bool = True, threads: int | None = None,
        steps: int = 20, tuning: EmitterTuning = DEFAULT) -> tuple[dict, list[str], dict]:
    """Every emitter's state, the pass names and every emitter's budget of the last step,
    stepped under ``tuning`` with the fused ranks pass or without, never in one pass (the
    three passes, on any adapter)."""
    tuning = replace(tuning, fused_ranks=fused, one_pass=False)
    if threads is not None:   # many rounds: the fused path must still be taken
        tuning = replace(tuning, ranks_threads=threads, ranks_max_rounds=1000)
    with Engine(loads_scene(text, path="<fused>"), batching=batching,
                emitter_tuning=tuning) as engine:
        engine.step(steps)
        state = snapshot(engine)
        budgets = {name: engine.system_of(name, "emitter").counters(
            engine.entity_ref(name))["step_budget"] for name in state}
        return state, [p.name for p in engine.frame_passes()], budgets


def check_alive_lists(state: dict) -> None:
    """Independent of both paths: the list holds every alive slot once, counted."""
    for name, (arrays, alive_list, counters) in state.items():
        alive = np.frombuffer(arrays["alive"], bool)
        listed = np.frombuffer(alive_list, np.uint32)
        np.testing.assert_array_equal(np.sort(listed), np.flatnonzero(alive), err_msg=name)
        assert counters["alive"] == counters["draw_instances"] == alive.sum(), name


@pytest.mark.parametrize("batching", [True, False], ids=["batched", "alone"])
def test_fused_step_is_byte_identical_to_the_multi_pass_step(gpu, batching):
    fused, fused_passes, _ = run(MIXED, True, batching)
    multi, multi_passes, _ = run(MIXED, False, batching)
    assert fused.keys() == multi.keys() == set("abcde")
    for name in multi:
        assert fused[name] == multi[name], name
    check_alive_lists(fused)
    assert sum(c["alive"] for _, _, c in fused.values()) > 500   # the pools are busy
    ranks = [n for n in fused_passes if n.endswith(":emitter:ranks")]
    assert len(ranks) == (1 if batching else 5)
    assert not any(n.endswith(MULTI_PASS) for n in fused_passes)
    assert any(n.endswith(":emitter:count") for n in multi_passes)
    # the two scans (one pass each below 1024 blocks), count and prepare became one pass
    fewer = len([n for n in multi_passes if ":emitter:" in n]) - len(
        [n for n in fused_passes if ":emitter:" in n])
    assert fewer == 3 * len(ranks)


@pytest.mark.parametrize("batching, threads", [(True, 4), (False, 3)],
                         ids=["batched-4-invocations", "alone-3-invocations"])
def test_a_free_scan_of_several_rounds_gives_the_same_births(gpu, batching, threads):
    fused, fused_passes, budgets = run(BUDGETS, True, batching, threads=threads)
    multi, _, _ = run(BUDGETS, False, batching)
    assert any(n.endswith(":emitter:ranks") for n in fused_passes)
    assert math.ceil(20000 / 256) > threads * PER_INVOCATION * 2   # three rounds or more
    for name in multi:
        assert fused[name] == multi[name], name
    check_alive_lists(fused)
    full, sparse = fused["full"][2], fused["sparse"][2]
    # births capped by the free slots (the pool stays full), and the whole budget born
    assert full["alive"] == 20000 and 0 < full["born"] < budgets["full"]
    assert 0 < sparse["born"] == budgets["sparse"] and sparse["alive"] < 20000


def test_pools_past_the_round_limit_keep_the_multi_pass_step(gpu):
    """A scan of more rounds than ranks_max_rounds costs more in one workgroup than the
    passes it would replace: such pools keep them."""
    _, names, _ = run(BUDGETS, True, steps=1, tuning=replace(DEFAULT, ranks_max_rounds=0))
    assert not any(n.endswith(":emitter:ranks") for n in names)
    assert any(n.endswith(":emitter:count") for n in names)


def test_sub_emitter_events_spawn_the_same_with_the_fused_step(gpu):
    fused, fused_passes, _ = run(CHAIN, True, steps=15)
    multi, _, _ = run(CHAIN, False, steps=15)
    assert set(fused) == {"rockets", "sparks", "embers"}
    for name in multi:
        assert fused[name] == multi[name], name
    check_alive_lists(fused)
    assert fused["embers"][2]["born"] > 0   # events reached the end of the chain
    assert "sparks:emitter:ranks" in fused_passes


@pytest.mark.parametrize("blocks_per_group", [3, DEFAULT.spawn_blocks_per_group])
def test_spawn_workgroups_of_several_blocks_give_the_same_births(gpu, blocks_per_group):
    """spawn.wgsl takes several blocks per workgroup; one block per workgroup is the oracle.
    The lone 20000-slot pools span 79 blocks, so the last workgroup is short; batched, blocks of
    different emitters share a workgroup."""
    tuning = replace(DEFAULT, spawn_grouped_from=0)   # these pools are small
    single, _, _ = run(BUDGETS + MIXED.replace(HEADER, ""), True,
                       tuning=replace(tuning, spawn_blocks_per_group=1))
    grouped, _, _ = run(BUDGETS + MIXED.replace(HEADER, ""), True,
                        tuning=replace(tuning, spawn_blocks_per_group=blocks_per_group))
    assert 79 % blocks_per_group != 0
    assert grouped.keys() == single.keys() and len(single) == 8
    for name in single:
        assert grouped[name] == single[name], name
    check_alive_lists(grouped)


def test_small_pools_keep_one_block_per_spawn_workgroup(gpu):
    """Below spawn_grouped_from blocks, a workgroup per block runs every block at once (in the
    three-pass step, forced: the one-pass step a hardware adapter takes has no spawn pass)."""
    tuning = replace(DEFAULT, spawn_blocks_per_group=4, one_pass=False)
    with Engine(loads_scene(BUDGETS, path="<fused>"), batching=False,
                emitter_tuning=tuning) as engine:
        spawns = {p.name: p.op.groups for p in engine.frame_passes()
                  if p.name.endswith(":emitter:spawn")}
    # 20000 slots = 79 blocks, 300 slots = 2 blocks
    assert spawns == {"full:emitter:spawn": (79, 1, 1), "sparse:emitter:spawn": (79, 1, 1),
                      "small:emitter:spawn": (2, 1, 1)}
