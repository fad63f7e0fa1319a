"""``emberfx bench gas`` on lavapipe, small: its rows say what they measured consistently (the
parts about within the whole step, the V-cycles the fewest of those tried that reach the target
residual, the render with the gas over the render without it, the roofline of the first row)."""

from __future__ import annotations

import pytest

from emberfx.bench.gas import CYCLES, TARGET_RESIDUAL, bench_gas


def test_gas_rows_are_consistent(gpu):
    copy, step, plain, volume = bench_gas(sizes=(16,), render_size=(96, 54))
    assert copy["unit"] == "GB/s" and copy["value"] > 0.0
    assert step["roofline_GBs"] == pytest.approx(copy["value"])
    assert step["unit"] == "steps/s" and step["value"] == pytest.approx(1e3 / step["ms"])
    # parts are timed apart from the whole, each a best of 3 on a shared CPU: within 2x of it
    assert 0.0 < step["advection_ms"] < 2.0 * step["ms"]
    assert 0.0 < step["projection_ms"] < 2.0 * step["ms"]
    cycles = step["v_cycles"]
    assert cycles in CYCLES
    assert step["pressure_residual"] <= TARGET_RESIDUAL or cycles == CYCLES[-1]
    assert 0.0 < step["advection_vs_copy"] < 2.0 and 0.0 < step["projection_vs_copy"] < 2.0
    # the multigrid and every other pass of the step, timed alone
    passes = {k for k in step if k.endswith("_ms") and k not in (
        "advection_ms", "projection_ms", "multigrid_ms")}
    assert {"advect_velocity_ms", "advect_scalars_correct_ms", "curl_ms", "cells_ms",
            "project_ms"} <= passes
    assert all(0.0 < step[k] < 2.0 * step["ms"] for k in passes | {"multigrid_ms"})
    assert "no gas" in plain["name"] and "gas's volume" in volume["name"]
    assert volume["vs_no_gas"] == pytest.approx(volume["value"] / plain["value"])
    assert volume["frames_per_s"] == pytest.approx(1e3 / (step["ms"] + volume["value"]))
