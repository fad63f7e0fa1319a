"""``emberfx bench`` with several benchmarks runs each in a process of its own (bench.main's
``isolated``): the rows come back through the child's JSON unchanged, a child's failure is
reported and makes the run fail, and the options travel as the child's flags."""

from __future__ import annotations

import json
import sys

from emberfx import bench
from emberfx.bench.capacity import bench_capacity


def test_options_become_the_child_flags():
    command = bench.child_command("sweep", {"workers": 2, "ray": "", "other": None})
    assert command[:2] == [sys.executable, "-m"]
    assert command[2:] == ["emberfx", "bench", "sweep", "--json", "--workers", "2", "--ray"]
    assert bench.child_command("life", {})[2:] == ["emberfx", "bench", "life", "--json"]


def test_an_isolated_benchmark_gives_the_rows_of_one_run_here(capfd):
    # capacity is arithmetic on the device's limits: the same rows in any process
    assert bench.main(["capacity"], as_json=True, isolated=True) == 0
    out, err = capfd.readouterr()
    results = json.loads(out)
    assert results["benchmarks"]["capacity"] == json.loads(json.dumps(bench_capacity()))
    assert results["adapter"]
    assert "[bench] capacity on" in err   # the child's progress line, on this stderr


def test_several_benchmarks_run_isolated_by_default(monkeypatch):
    ran = []

    def child(name, options):
        ran.append((name, options))
        return {"adapter": "a", "benchmarks": {name: [{"name": name, "value": 1.0, "unit": "u"}]}}

    monkeypatch.setattr(bench, "run_isolated", child)
    assert bench.main(["capacity", "sweep"], options={"sweep": {"workers": 3}}) == 0
    assert ran == [("capacity", {}), ("sweep", {"workers": 3})]


def test_a_failed_child_fails_the_run_and_says_which(capfd):
    # an option the child's command line does not know: it exits with a usage error
    assert bench.main(["capacity", "capacity"], options={"capacity": {"no-such-flag": 1}}) == 1
    out, err = capfd.readouterr()
    assert "emberfx: bench: capacity, capacity failed" in err
    assert "unrecognized arguments: --no-such-flag 1" in err
