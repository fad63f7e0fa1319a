"""Sweeps on the local process pool, for real (lavapipe in CI), through the CLI: six jobs, one
with a value the scene refuses; outputs that decode; a re-run that skips the finished jobs;
byte-identical state from different worker processes; a worker killed mid-sweep; Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sweep_support import SCENE

import emberfx
from emberfx.sweeps import sweep
from emberfx.sweeps.manifest import read_manifest
from emberfx.sweeps.worker import CRASH_EXIT_CODE, CRASH_ONCE_ENV

RATES = "500,1000,2000,-5,3000,4000"   # -5: refused by the scene check, the others run
FRAMES = "4"


def cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "emberfx", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})}, timeout=600)


def sweep_args(scene: Path, out: Path, *extra: str) -> list[str]:
    return ["sweep", str(scene), "--set", f"jet.emitter.rate={RATES}", "--set", "scene.seed=7",
            "--frames", FRAMES, "--out", str(out), "--state", *extra]


@pytest.fixture(scope="module")
def first_run(gpu, tmp_path_factory):
    """The six-job sweep on a pool of two workers, run once for the tests below."""
    folder = tmp_path_factory.mktemp("sweep")
    scene = folder / "tiny.toml"
    scene.write_text(SCENE)
    out = folder / "out"
    done = cli(*sweep_args(scene, out, "--workers", "2"), cwd=folder)
    return folder, scene, out, done


def by_rate(rows: list[dict]) -> dict[float, dict]:
    return {float(row["jet.emitter.rate"]): row for row in rows}


def test_six_jobs_one_refused_manifest_and_outputs(first_run):
    from PIL import Image

    _, _, out, done = first_run
    assert done.returncode == 1, done.stderr      # one job failed
    assert "sweep: 6 jobs: 5 ok, 1 failed, 0 skipped" in done.stdout
    assert "Traceback" not in done.stderr
    rows = read_manifest(out)
    assert len(rows) == 6
    assert sorted(by_rate(rows)) == [-5.0, 500.0, 1000.0, 2000.0, 3000.0, 4000.0]
    bad = by_rate(rows)[-5.0]
    assert bad["status"] == "error" and "emitter.rate: expected float >= 0" in bad["error"]
    assert "(--set jet.emitter.rate=-5, scene.seed=7)" in bad["error"] and bad["output"] in ("",
                                                                                           None)
    good = [row for row in rows if row["status"] == "ok"]
    assert len(good) == 5
    for row in good:
        assert row["error"] in ("", None) and str(row["job"]) in row["output"]
        assert float(row["seconds"]) > 0 and "(Vulkan" in row["adapter"] and row["host"]
        with Image.open(out / row["output"]) as image:
            assert image.size == (64, 36) and image.mode == "RGBA"
            image.load()
        with np.load(out / row["state"]) as state:
            assert {"jet/age", "jet/alive", "jet/position", "jet/velocity"} <= set(state.files)
            assert state["jet/position"].shape == (500, 3)
            assert 0 < int(state["jet/alive"].sum()) <= 500
    assert not [p for p in out.iterdir() if p.name.startswith(".")]   # no temp files left


def test_each_job_ran_its_parameters(first_run):
    """A job's state is what an Engine built here with the same values gives (same adapter
    kind, so the same bytes), and more particles are alive at a higher rate."""
    from emberfx.model.scene import loads_scene

    folder, scene, out, _ = first_run
    rows = by_rate(read_manifest(out))
    text = SCENE.replace("rate = 2000.0", "rate = 3000").replace("seed = 3", "seed = 7")
    with emberfx.Engine(loads_scene(text, path=scene), size=(64, 36)) as engine:
        engine.step(int(FRAMES))
        expected = engine.state("jet")
    with np.load(out / rows[3000.0]["state"]) as state:
        for key, value in expected.items():
            np.testing.assert_array_equal(state[f"jet/{key}"], value, err_msg=key)
    alive = []
    for rate in (500.0, 1000.0, 2000.0, 3000.0, 4000.0):
        with np.load(out / rows[rate]["state"]) as state:
            alive.append(int(state["jet/alive"].sum()))
    assert alive == sorted(alive) and alive[0] < alive[-1], alive


def test_rerun_skips_the_finished_jobs(first_run):
    folder, scene, out, _ = first_run
    rows = read_manifest(out)
    files = {row["output"]: (out / row["output"]).stat().st_mtime_ns
             for row in rows if row["status"] == "ok"}
    done = cli(*sweep_args(scene, out), cwd=folder)
    assert done.returncode == 1
    assert "sweep: 6 jobs: 5 ok, 1 failed, 5 skipped (done before)" in done.stdout
    assert {name: (out / name).stat().st_mtime_ns for name in files} == files
    again = {row["job"]: row["worker"] for row in read_manifest(out)}
    assert again == {row["job"]: row["worker"] for row in rows}


def test_same_parameters_give_identical_state_bytes_on_another_worker(first_run):
    """The same jobs rendered in another process (in-process mode of a new CLI run) write the
    same .npz bytes as the pool's workers did."""
    folder, scene, out, _ = first_run
    other = folder / "again"
    done = cli(*sweep_args(scene, other, "--workers", "0"), cwd=folder)
    assert done.returncode == 1, done.stderr
    first, second = read_manifest(out), {r["job"]: r for r in read_manifest(other)}
    compared = 0
    for row in first:
        if row["status"] != "ok":
            continue
        twin = second[row["job"]]
        assert twin["worker"] != row["worker"]
        assert (other / twin["state"]).read_bytes() == (out / row["state"]).read_bytes()
        compared += 1
    assert compared == 5


def test_a_killed_worker_is_retried_and_the_sweep_completes(gpu, tmp_path):
    scene = tmp_path / "tiny.toml"
    scene.write_text(SCENE)
    marker = tmp_path / "crashed"
    done = cli("sweep", str(scene), "--set", "scene.seed=1..3", "--frames", "2", "--out",
               str(tmp_path / "out"), "--workers", "2", cwd=tmp_path,
               env={CRASH_ONCE_ENV: str(marker)})
    assert marker.exists()   # a worker did die (os._exit) on its first job
    assert done.returncode == 0, done.stderr
    assert "3 jobs: 3 ok, 0 failed" in done.stdout
    rows = read_manifest(tmp_path / "out")
    assert sorted(int(row["attempts"]) for row in rows) == [1, 1, 2]
    assert all((tmp_path / "out" / row["output"]).is_file() for row in rows)
    assert CRASH_EXIT_CODE == 70


def test_python_api_mp4_in_this_process(gpu, tmp_path):
    import imageio_ffmpeg

    scene = tmp_path / "tiny.toml"
    scene.write_text(SCENE)
    rows = sweep(scene, params={"jet.emitter.speed": [1.0, [2.0, 4.0]]}, frames=3,
                         out=tmp_path / "out", format="mp4", workers=0, progress=False)
    if not isinstance(rows, list):   # pandas present: a DataFrame
        rows = rows.to_dict("records")
    assert [row["status"] for row in rows] == ["ok", "ok"]
    assert [row["jet.emitter.speed"] for row in rows] == [1.0, [2.0, 4.0]]
    for row in rows:
        reader = imageio_ffmpeg.read_frames(str(tmp_path / "out" / row["output"]))
        assert tuple(next(reader)["size"]) == (64, 36)
        assert len(list(reader)) == 3


def test_ctrl_c_stops_and_leaves_a_manifest_of_what_finished(gpu, tmp_path):
    scene = tmp_path / "tiny.toml"
    scene.write_text(SCENE)
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "emberfx", "sweep", str(scene), "--set", "scene.seed=1..400",
         "--frames", "3", "--out", str(out), "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 300
    while not any(out.glob("manifest.*")) and time.monotonic() < deadline \
            and process.poll() is None:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "sweep stopped:" in stderr and "run the same command again to resume" in stderr
    rows = read_manifest(out)
    assert 0 < len(rows) < 400
    assert all(row["status"] == "ok" and (out / row["output"]).is_file() for row in rows)
    # the stopped worker finished its frame and removed its unfinished files: nothing else left
    left = {p.name for p in out.iterdir() if p.is_file()} - {"manifest.csv", "manifest.parquet"}
    assert left == {row["output"] for row in rows}
