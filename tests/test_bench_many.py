"""``emberfx bench many``: the scene it builds (ragged capacities, mixed blends, seeded), the rows
it reports (per emitter count: CPU ms, GPU ms, passes, the passes counted independently), and
the time budget that turns a case into a value-None row with a note instead of running it."""

from __future__ import annotations

from typing import Any

import pytest

from emberfx.bench.many import BLENDS, bench_many, many_scene_text
from emberfx.core.frame_graph import Phase
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene


def test_scene_has_ragged_capacities_and_mixed_blends_seeded():
    scene = loads_scene(many_scene_text(40, mean_capacity=1000), path="<test>")
    emitters: list[Any] = [e.components["emitter"] for e in scene.entities]
    assert len(emitters) == 40 and len({e.name for e in scene.entities}) == 40
    capacities = [e.capacity for e in emitters]
    assert all(500 <= c <= 1500 for c in capacities) and len(set(capacities)) > 30
    assert {e.blend for e in emitters} == set(BLENDS)
    assert many_scene_text(40, 1000) == many_scene_text(40, 1000)
    assert many_scene_text(40, 1000) != many_scene_text(40, 1000, seed=8)


def test_rows_per_count_with_passes_counted_independently(gpu):
    rows = bench_many(counts=(1, 3), mean_capacity=300, budget_seconds=1e9)
    assert [r["emitters"] for r in rows] == [1] * 12 + [3] * 12
    assert [r["batching"] for r in rows] == ([True] * 8 + [False] * 4) * 2
    assert [r["culling"] for r in rows] == ([True] * 4 + [False] * 8) * 2
    assert [r["unit"] for r in rows[:4]] == ["ms/frame CPU (no submit)", "ms/frame GPU",
                                            "ms/step GPU", "passes/frame"]
    for row in rows:
        assert isinstance(row["value"], float | int) and row["value"] > 0, row
        assert "note" not in row
        # the batched rows carry the alone (and unculled) figure over theirs, from the same case
        if row["culling"]:
            unculled = next(r for r in rows if r["batching"] and not r["culling"]
                            and r["emitters"] == row["emitters"] and r["unit"] == row["unit"])
            assert row["vs_unculled"] == pytest.approx(unculled["value"] / row["value"])
            alone = next(r for r in rows if not r["batching"] and r["emitters"] == row["emitters"]
                         and r["unit"] == row["unit"])
            assert row["vs_alone"] == pytest.approx(alone["value"] / row["value"])
        else:
            assert "vs_alone" not in row and "vs_unculled" not in row
    for count, batching, passes_row in ((1, True, rows[3]), (1, True, rows[7]),
                                        (1, False, rows[11]), (3, True, rows[15]),
                                        (3, True, rows[19]), (3, False, rows[23])):
        scene = loads_scene(many_scene_text(count, 300), path="<test>")
        with Engine(scene, size=(640, 360), batching=batching) as engine:
            expected = [p for p in engine.frame_passes() if p.phase != Phase.READBACK]
            pools: list[Any] = [e.components["emitter"] for e in scene.entities]
            particles = sum(pool.capacity for pool in pools)
        assert passes_row["value"] == len(expected)
        assert passes_row["particles"] == particles
    assert rows[23]["value"] > rows[11]["value"]     # more emitters, more passes alone
    assert rows[15]["value"] < rows[23]["value"]     # and fewer batched


def test_a_case_over_the_budget_is_not_run_and_says_why(gpu):
    rows = bench_many(counts=(1, 2), mean_capacity=200, budget_seconds=0.0)
    measured, skipped = rows[:12], rows[12:]
    assert all(r["value"] is not None for r in measured)
    assert [r["emitters"] for r in skipped] == [2] * 12
    for row in skipped:
        assert row["value"] is None
        assert "not run: predicted" in row["note"] and "budget" in row["note"]
        assert "\n" not in row["note"]


@pytest.mark.parametrize("count", [1, 10])
def test_scene_text_loads_with_count_entities(count):
    assert len(loads_scene(many_scene_text(count), path="<test>").entities) == count
