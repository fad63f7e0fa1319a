"""`emberfx bench frame` runs its loop for real (the bench reports timing; tests never check it)."""

from __future__ import annotations

import math

import pytest

from emberfx.bench.frame import frame_rows, measure_frames
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

KEYS = {"frame", "step", "draw", "submit", "python", "python_step", "python_draw", "thread_cpu"}


@pytest.mark.parametrize("pipelined", [True, False])
def test_measure_frames_steps_draws_and_restores_submit(gpu, scenes_dir, pipelined):
    engine = Engine(load_scene(scenes_dir / "showcase.toml"), size=(64, 36))
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


def test_rows_are_consistent_and_print_in_aligned_columns(gpu, scenes_dir, capsys,
                                                          monkeypatch):
    from emberfx import bench

    engine = Engine(load_scene(scenes_dir / "showcase.toml"), size=(64, 36))
    try:
        measured = measure_frames(engine, pipelined=False, frames=3, warmup=1)
    finally:
        engine.close()
    rows = frame_rows(measured, measured, measured, measured, "GPU idle", "pipelined",
                      passes=123, size="1280x720")
    total = rows[0]
    parts = [r for r in rows if r["name"].startswith("  of which")]
    assert len(parts) == 2
    assert all(r["value"] <= total["value"] and r["unit"] == total["unit"] for r in parts)
    assert sum(r["value"] for r in parts) == pytest.approx(total["value"], rel=1e-12)
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
