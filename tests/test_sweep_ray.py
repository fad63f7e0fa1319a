"""Sweeps as Ray tasks on a local Ray started here (two CPUs, lavapipe): six jobs with one
refused value, a worker that dies on its first job and is retried by Ray, outputs that decode,
a re-run that skips the finished jobs, and state bytes identical to a run in this process.
Skipped only where Ray is not installed (CI installs the ``ray`` extra for this file)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from sweep_support import SCENE

from emberfx.sweeps import sweep
from emberfx.sweeps.worker import CRASH_ONCE_ENV

ray = pytest.importorskip("ray")

PARAMS = {"jet.emitter.rate": [500, 1000, 2000, -5, 3000, 4000], "scene.seed": 7}


def records(table) -> list[dict]:
    return table if isinstance(table, list) else table.to_dict("records")


@pytest.fixture(scope="module")
def local_ray(gpu, tmp_path_factory):
    """One Ray for the module (starting it takes long on two cores). Its workers inherit the
    crash hook: the first job any of them runs kills its worker process once."""
    folder = tmp_path_factory.mktemp("ray")
    marker = folder / "crashed"
    saved = os.environ.get(CRASH_ONCE_ENV)
    os.environ[CRASH_ONCE_ENV] = str(marker)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield folder, marker
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop(CRASH_ONCE_ENV, None)
        else:
            os.environ[CRASH_ONCE_ENV] = saved


@pytest.fixture(scope="module")
def ray_sweep(local_ray):
    folder, marker = local_ray
    scene = folder / "tiny.toml"
    scene.write_text(SCENE)
    out = folder / "out"
    rows = records(sweep(scene, params=PARAMS, frames=4, out=out, state=True, ray=True,
                                 progress=False))
    return scene, out, rows, marker


def test_six_jobs_on_ray_with_a_refused_value_and_a_dead_worker(ray_sweep):
    from PIL import Image

    _, out, rows, marker = ray_sweep
    assert marker.exists()   # a Ray worker process died on its first job and Ray retried it
    assert [row["jet.emitter.rate"] for row in rows] == PARAMS["jet.emitter.rate"]
    assert [row["status"] for row in rows] == ["ok", "ok", "ok", "error", "ok", "ok"]
    assert "emitter.rate: expected float >= 0" in rows[3]["error"]
    for row in rows:
        if row["status"] != "ok":
            continue
        assert row["error"] == "" and "(Vulkan" in row["adapter"]
        with Image.open(out / row["output"]) as image:
            assert image.size == (64, 36)
            image.load()
        with np.load(out / row["state"]) as state:
            assert state["jet/position"].shape == (500, 3)
    pids = {row["worker"] for row in rows if row["status"] == "ok"}
    assert os.getpid() not in pids   # rendered by Ray's workers, not here


def test_rerun_on_ray_skips_finished_jobs(ray_sweep):
    scene, out, rows, _ = ray_sweep
    stamps = {row["output"]: (out / row["output"]).stat().st_mtime_ns
              for row in rows if row["status"] == "ok"}
    again = records(sweep(scene, params=PARAMS, frames=4, out=out, state=True, ray=True,
                                  progress=False))
    assert {name: (out / name).stat().st_mtime_ns for name in stamps} == stamps
    assert [row["worker"] for row in again if row["status"] == "ok"] == \
        [row["worker"] for row in rows if row["status"] == "ok"]


def test_ray_state_matches_this_process_byte_for_byte(ray_sweep, tmp_path):
    scene, out, rows, _ = ray_sweep
    here = records(sweep(scene, params=PARAMS, frames=4, out=tmp_path, state=True,
                                 workers=0, progress=False))
    for mine, theirs in zip(here, rows):
        assert mine["job"] == theirs["job"]
        if theirs["status"] == "ok":
            assert mine["worker"] == os.getpid() != theirs["worker"]
            assert (tmp_path / mine["state"]).read_bytes() == \
                (Path(out) / theirs["state"]).read_bytes()
