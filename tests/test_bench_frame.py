"""`emberfx bench frame` runs its loop for real (timing is reported by the bench, never asserted)."""

from __future__ import annotations

import math

import pytest

from emberfx.bench_frame import measure_frames
from emberfx.engine import Engine
from emberfx.scene import load_scene


@pytest.mark.parametrize("pipelined", [True, False])
def test_measure_frames_steps_draws_and_restores_submit(gpu, scenes_dir, pipelined):
    engine = Engine(load_scene(scenes_dir / "showcase.toml"), size=(64, 36))
    try:
        result = measure_frames(engine, pipelined=pipelined, frames=3, warmup=1)
        assert engine.clock.steps == 4                       # one step per frame, warm-up included
        assert set(result) == {"frame", "step", "draw", "submit", "python", "thread_cpu"}
        assert all(math.isfinite(v) and v >= 0 for v in result.values())
        assert result["python"] <= result["frame"] and result["submit"] > 0
        assert "submit" not in vars(engine.device.queue)     # the timing wrapper is gone again
    finally:
        engine.close()
