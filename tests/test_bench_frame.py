"""`emberfx bench frame` runs its loop for real (the bench reports timing; tests never check it)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from emberfx.bench.frame import frame_rows, measure_frames, measure_rounds
from emberfx.bench.host import full_speed_rounds, python_reference_ms
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

KEYS = {"frame", "step", "draw", "submit", "python", "python_step", "python_draw", "thread_cpu"}


@pytest.mark.parametrize("pipelined", [True, False])
def test_measure_frames_steps_draws_and_restores_submit(gpu, scenes_dir, pipelined):
    engine = Engine(load_scene(scenes_dir / "sampler.toml"), size=(64, 36))
    try:
        result = measure_frames(engine, pipelined=pipelined, frames=3, warmup=1)
        assert engine.clock.steps == 4                       # one step per frame, warm-up included
        assert set(result) == KEYS
        assert all(math.isfinite(v) and v >= 0 for v in result.values())
        assert result["python"] <= result["frame"] and result["submit"] > 0
        # the "of which" parts add up to the frame they belong to, and neither exceeds it
        assert result["python_step"] + result["python_draw"] == pytest.approx(result["python"],
                                                                             rel=1e-12)
        assert max(result["python_step"], result["python_draw"]) <= result["python"]
        assert "submit" not in vars(engine.device.queue)     # the timing wrapper is gone again
    finally:
        engine.close()


def test_frames_with_no_readback_read_nothing_back(gpu, scenes_dir):
    """The "no readback" row's frames: the newest readback stays the last one made before."""
    from emberfx.bench.frame import NO_READBACK
    from emberfx.bench.harness import sync

    engine = Engine(load_scene(scenes_dir / "sampler.toml"), size=(64, 36))
    try:
        engine.step(2)                      # readback every step: steps 0 and 1
        sync(engine.device)
        assert engine.stats()["readback_frame"] == 1
        engine.readback_every = NO_READBACK
        measure_frames(engine, pipelined=False, frames=3, warmup=1)
        assert engine.clock.steps == 6
        assert engine.stats()["readback_frame"] == 1
    finally:
        engine.close()


def test_rows_are_consistent_and_print_in_aligned_columns(gpu, scenes_dir, capsys,
                                                          monkeypatch):
    from emberfx import bench

    engine = Engine(load_scene(scenes_dir / "sampler.toml"), size=(64, 36))
    try:
        measured = measure_frames(engine, pipelined=False, frames=3, warmup=1)
        rounds = measure_rounds(engine, pipelined=False, rounds=3, frames=3, warmup=1)
    finally:
        engine.close()
    calls = {"python": rounds["python"] / 2, "calls": 142, "counts": {"submit": 2}}
    no_readback = {**measured, "python": measured["python"] / 4}
    wrapped = {"python": 3.0, "native": 2.0}
    rows = frame_rows(rounds, measured, measured, measured, "GPU idle", "pipelined",
                      passes=123, size="1280x720", calls=calls, no_readback=no_readback,
                      wrapped=wrapped)
    assert rows[-1]["of_the_frame"] == pytest.approx(0.5, rel=1e-12)
    # the readback's cost a step: the readback-every-step frame less the frame without any
    without = next(r for r in rows if r["name"].endswith("no readback"))
    assert without["value"] == no_readback["python"]
    assert without["readback_ms"] == pytest.approx(0.75 * measured["python"], rel=1e-12)
    baseline = next(r for r in rows if r["name"].endswith("wgpu-py calls (baseline)"))
    assert (baseline["value"], baseline["with_c_calls_ms"], baseline["speedup"]) == (3.0, 2.0, 1.5)
    total = rows[0]
    parts = [r for r in rows if r["name"].startswith("  of which")]
    assert len(parts) == 2
    assert all(r["value"] <= total["value"] and r["unit"] == total["unit"] for r in parts)
    assert sum(r["value"] for r in parts) == pytest.approx(total["value"], rel=1e-12)
    full_speed = next(r for r in rows if "fastest host speed" in r["name"])
    fast = rounds["full_speed_rounds"]
    assert f"({len(fast)} of 3)" in full_speed["name"]
    assert full_speed["value"] == pytest.approx(
        float(np.median([rounds["rounds"][k]["python"] for k in fast])), rel=1e-12)
    # printed by the bench's own table: every value ends in the same column
    monkeypatch.setitem(bench.BENCHMARKS, "frame", lambda: rows)
    assert bench.main(["frame"]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[lines.index("frame") + 1:]
    assert len(table) == len(rows)
    ends = {line.index(f"{row['value']:.3f}") + len(f"{row['value']:.3f}")
            for line, row in zip(table, rows)}
    assert len(ends) == 1, table
    units = {line.index(row["unit"], end) for line, row, end in
             zip(table, rows, [next(iter(ends))] * len(rows))}
    assert len(units) == 1, table


SMALL = """
[scene]
name = "calls"
size = [48, 32]
[camera]
kind = "perspective"
position = [0.0, 1.0, 5.0]
target = [0.0, 0.5, 0.0]
[[entity]]
name = "jet"
[entity.emitter]
capacity = 500
rate = 900.0
lifetime = [0.4, 0.8]
speed = [1.0, 2.0]
size = 0.2
blend = "alpha"
[[entity]]
name = "post"
[entity.bloom]
threshold = 0.2
[entity.tonemap]
operator = "aces"
"""


def test_a_replayed_draw_draws_the_recorded_frame_again(gpu):
    """The oracle: the texture a draw filled, cleared to magenta, holds the same bytes again
    after the draw's recorded calls are replayed; the recording leaves wgpu-py as it was."""
    import wgpu

    from emberfx.bench.frame_calls import (
        RECORDED,
        call_counts,
        record_calls,
        replay,
        replay_by_kind,
    )
    from emberfx.bench.harness import output_texture
    from emberfx.core.readback import read_texture
    from emberfx.model.scene import loads_scene

    methods = {(cls, name): getattr(cls, name) for cls, names in RECORDED.items()
               for name in names if hasattr(cls, name)}
    with Engine(loads_scene(SMALL, path="<calls>")) as engine:
        texture = output_texture(engine)
        engine.step(20)
        calls = record_calls(lambda: engine.draw_to(texture))
        assert all(getattr(cls, name) is m for (cls, name), m in methods.items())
        drawn = read_texture(engine.device, texture, 4)
        counts = call_counts(calls)
        assert counts["submit"] == 1 and counts["finish"] == 1 and counts["begin_render_pass"]
        assert sum(counts.values()) == len(calls)
        encoder = engine.device.create_command_encoder()
        encoder.begin_render_pass(color_attachments=[{
            "view": texture.create_view(), "load_op": wgpu.LoadOp.clear,
            "store_op": wgpu.StoreOp.store, "clear_value": (1.0, 0.0, 1.0, 1.0)}]).end()
        engine.device.queue.submit([encoder.finish()])
        cleared = read_texture(engine.device, texture, 4)
        assert cleared != drawn and cleared[:4] == bytes([255, 0, 255, 255])
        seconds = replay(calls)
        assert seconds > 0
        assert read_texture(engine.device, texture, 4) == drawn
        # timed call by call, the replay draws the same again and times each kind it made
        encoder = engine.device.create_command_encoder()
        encoder.begin_render_pass(color_attachments=[{
            "view": texture.create_view(), "load_op": wgpu.LoadOp.clear,
            "store_op": wgpu.StoreOp.store, "clear_value": (1.0, 0.0, 1.0, 1.0)}]).end()
        engine.device.queue.submit([encoder.finish()])
        assert read_texture(engine.device, texture, 4) == cleared
        by_kind = replay_by_kind(calls)
        assert set(by_kind) == set(counts) and all(s > 0 for s in by_kind.values())
        assert read_texture(engine.device, texture, 4) == drawn
        texture.destroy()


def test_measure_calls_alone_counts_the_frame_and_restores_the_readback(gpu, scenes_dir):
    from emberfx.bench.frame import measure_calls_alone

    engine = Engine(load_scene(scenes_dir / "sampler.toml"), size=(64, 36))
    try:
        engine.readback_every = 4
        steps = engine.clock.steps
        result = measure_calls_alone(engine, pipelined=False, frames=2, warmup=1)
        assert engine.readback_every == 4 and engine.clock.steps == steps + 2
        assert result["python"] > 0 and result["calls"] == sum(result["counts"].values())
        # a step's dispatches and a draw's render passes, in one submission (Engine.frame)
        counts = result["counts"]
        assert counts["submit"] == counts["finish"] == counts["create_command_encoder"] == 1
        assert counts["dispatch_workgroups"] > 10 and counts["begin_render_pass"] >= 2
        assert "map_async" not in result["counts"]
        # every kind of call the frame makes is timed, and only those
        assert set(result["by_kind_ms"]) == set(counts)
        assert all(ms > 0 for ms in result["by_kind_ms"].values())
        assert list(result["by_kind_ms"].values()) == sorted(result["by_kind_ms"].values(),
                                                             reverse=True)
    finally:
        engine.close()


def test_full_speed_rounds_are_those_within_the_tolerance_of_the_fastest():
    assert full_speed_rounds([]) == []
    assert full_speed_rounds([2.0]) == [0]
    assert full_speed_rounds([1.0, 1.1, 1.1000001, 2.0, 0.95]) == [0, 4]
    assert full_speed_rounds([1.0, 1.1, 1.2, 2.0]) == [0, 1]            # 1.1 is within 10%
    assert full_speed_rounds([3.0, 1.5, 1.6], tolerance=2.0) == [0, 1, 2]
    assert full_speed_rounds([5.0, 5.0, 5.0]) == [0, 1, 2]


def test_the_host_reference_is_a_fixed_amount_of_work():
    from emberfx.bench.host import reference_work

    assert reference_work() == reference_work() == sum(
        2 + (i & 63).bit_length() for i in range(5000))
    assert 0 < python_reference_ms(repeats=1) < 1000


def test_measure_rounds_times_each_round_between_references(gpu, scenes_dir, monkeypatch):
    """The rounds' medians, the full-speed rounds by the references the rounds were timed
    between (the slower of each round's two), and parts that add up."""
    from emberfx.bench import frame

    timings = iter([1.0, 1.2,   2.0, 2.1,   1.05, 1.0])   # before, after: round 0, 1, 2
    monkeypatch.setattr(frame, "python_reference_ms", lambda: next(timings))
    engine = Engine(load_scene(scenes_dir / "sampler.toml"), size=(64, 36))
    try:
        result = measure_rounds(engine, pipelined=False, rounds=3, frames=2, warmup=1)
        assert engine.clock.steps == 9
    finally:
        engine.close()
    assert result["references"] == [1.2, 2.1, 1.05]
    assert result["full_speed_rounds"] == [2]                       # 1.2 > 1.05 * 1.1
    assert result["python"] == pytest.approx(
        float(np.median([r["python"] for r in result["rounds"]])), rel=1e-12)
    assert result["full_speed"]["python"] == result["rounds"][2]["python"]
    for figures in (result, result["full_speed"]):
        assert figures["python_step"] + figures["python_draw"] == pytest.approx(
            figures["python"], rel=1e-12)


def test_measure_rounds_needs_a_round(gpu, scenes_dir):
    engine = Engine(load_scene(scenes_dir / "sampler.toml"), size=(64, 36))
    try:
        with pytest.raises(ValueError, match="at least one round, found 0"):
            measure_rounds(engine, pipelined=False, rounds=0)
        assert engine.clock.steps == 0
    finally:
        engine.close()
