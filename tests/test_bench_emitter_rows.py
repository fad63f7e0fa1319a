"""`emberfx bench emitter`'s same-size copy rows: each pool size gets a copy of its particles'
bytes, and each whole step its fraction of that copy's rate (timings are the bench's; this checks
the rows and the arithmetic that relates them)."""

from __future__ import annotations

from typing import Any

import pytest

import emberfx.bench.emitter as bench_emitter
from emberfx.systems.emitter.params import PARTICLE


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
