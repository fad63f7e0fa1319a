"""`emberfx bench emitter`'s same-size copy rows: each pool size gets a copy of its particles'
bytes, and each whole step its fraction of that copy's rate (timings are the bench's; this checks
the rows and the arithmetic that relates them); and its same-run baselines: each takes the path
its row names."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import emberfx.bench.emitter as bench_emitter
from emberfx.engine.engine import Engine
from emberfx.systems.emitter.structs import PARTICLE
from emberfx.systems.emitter.tuning import DEFAULT


def test_each_pool_size_gets_a_copy_of_its_bytes_and_each_step_its_fraction(gpu, monkeypatch):
    cases_wanted = [(1 << 12, "ordered", 0), (1 << 13, "ordered", 0), (1 << 12, "atomic", 0)]
    monkeypatch.setattr(bench_emitter, "EMITTER_CASES", cases_wanted)
    copies = []
    real_copy = bench_emitter.compute_copy_bandwidth

    def copy(ctx, nbytes):
        copies.append(nbytes)
        return real_copy(ctx, nbytes)

    monkeypatch.setattr(bench_emitter, "compute_copy_bandwidth", copy)
    whole: list[dict[str, Any]] = [
        {"name": f"emitter step {i}", "value": 2.0 + i, "unit": "G particle-steps/s"}
        for i in range(2)]
    skipped = {"name": "emitter step skipped", "value": None, "unit": "skipped"}
    cases = [(0, [whole[0]]), (0, [whole[1]]), (0, [skipped])]
    rows = bench_emitter.same_size_copy_rows(gpu, cases, bandwidth=1e12)
    assert PARTICLE.itemsize == bench_emitter.PARTICLE_BYTES == 32
    assert copies == [32 * (1 << 12), 32 * (1 << 13)]            # one per size, smallest first
    assert [r["name"] for r in rows] == ["compute vec4 copy of 0.00390625M particles' bytes",
                                         "compute vec4 copy of 0.0078125M particles' bytes"]
    for row, case in zip(rows, whole):
        rate = row["value"] * 1e9                                 # bytes a second
        assert row["fraction_of_copy_bandwidth"] == pytest.approx(rate / 1e12, rel=1e-12)
        # a step reads and writes each particle once: 64 bytes a particle-step
        assert case["of_same_size_copy"] == pytest.approx(case["value"] * 1e9 * 64 / rate,
                                                          rel=1e-12)
    assert "of_same_size_copy" not in skipped                    # a case the device refused


def simulation_passes(engine: Engine) -> list[str]:
    return [p.name.rsplit(":", 1)[1] for p in engine.frame_passes()
            if p.name.startswith("bench:emitter:")]


@pytest.mark.parametrize("one_pass", [True, False], ids=["one-pass", "three-pass"])
def test_each_baseline_takes_the_path_its_row_names(gpu, one_pass):
    """The baselines are tunings derived from the measured engine's: the multi-pass step; for a
    one-pass step, the three-pass step and the one pass with each switch flipped (the flipped
    value reaching the engine built with it); else the one-pass step where allowed."""
    scene = bench_emitter.emitter_scene(4096, "ordered")
    tuning = replace(DEFAULT, one_pass=one_pass)
    with Engine(scene, size=(64, 64), emitter_tuning=tuning) as engine:
        engine.step(2)
        system = engine.system_of("bench", "emitter")
        pool = system.pools["bench"]
        assert pool.sim.one_pass == one_pass
        choices = bench_emitter.one_pass_choices(system.tuning, pool) if one_pass else {}
        baselines = bench_emitter.step_baselines(system.tuning, pool, one_pass_allowed=True)
    names = [name for name, _ in baselines]
    flips = [f"one-pass step, {c}={not taken}" for c, taken in choices.items()]
    assert names == (["multi-pass step", "three-pass step", *flips] if one_pass
                     else ["multi-pass step", "one-pass step"])
    for name, baseline in baselines:
        with Engine(scene, size=(64, 64), emitter_tuning=baseline) as other:
            other.step(1)
            passes = simulation_passes(other)
            other_pool = other.system_of("bench", "emitter").pools["bench"]
            if name == "multi-pass step":
                assert "count" in passes and "ranks" not in passes, passes
            elif name == "three-pass step":
                assert passes[:3] == ["update", "ranks", "spawn"], passes
            else:
                assert other_pool.sim.one_pass and "spawn" not in passes, passes
            if name.startswith("one-pass step, "):
                choice = name.split(", ")[1].split("=")[0]
                taken = bench_emitter.one_pass_choices(baseline, other_pool)[choice]
                assert taken != choices[choice], name
