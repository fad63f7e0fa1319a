"""Sweeps given what a user should not have to think about, through the real CLI (or a plain
script run by Python): a top-level ``emberfx.sweep`` without a main guard; ``@FILE`` values that
are a FIFO, a device or too large; sweeps of a billion jobs (counted, refused, or streamed when
allowed); a manifest that does not read back; Ctrl-C during ``--workers 0``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from sweep_support import SCENE

from emberfx.core.errors import UsageError
from emberfx.sweeps.grammar import parse_set
from emberfx.sweeps.manifest import manifest_path, read_manifest
from emberfx.sweeps.values import VALUES_FILE_BYTES

BILLION = 1_000_000_000


def cli(*args: str, cwd: Path, timeout: float = 300,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "emberfx", *args], capture_output=True,
                          text=True, cwd=cwd, env=env or dict(os.environ), timeout=timeout)


def without_pyarrow(folder: Path) -> dict[str, str]:
    """An environment whose Python cannot import pyarrow, so the sweep writes manifest.csv as on
    a machine without the [ray] extra, wherever the tests run."""
    hidden = folder / "no-pyarrow"
    (hidden / "pyarrow").mkdir(parents=True, exist_ok=True)
    (hidden / "pyarrow" / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    path = os.pathsep.join(filter(None, [str(hidden), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


@pytest.fixture
def scene_file(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(SCENE)
    return path


def one_line_error(done: subprocess.CompletedProcess, says: str) -> str:
    assert "Traceback" not in done.stderr and "Error:" not in done.stderr, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("emberfx: error: ") and says in last, done.stderr
    return last


# ------------------------------------------------------------------ a script without a guard

def test_a_top_level_sweep_in_a_plain_script_runs_once_on_a_pool(gpu, tmp_path, scene_file):
    """The pool's workers must not run the calling script again (multiprocessing's spawn does,
    as __mp_main__: there the nested sweep killed every worker, BrokenProcessPool)."""
    script = tmp_path / "my_sweep.py"
    script.write_text(textwrap.dedent(f"""\
        import emberfx
        with open({str(tmp_path / 'ran.txt')!r}, "a") as log:
            log.write("top level\\n")
        table = emberfx.sweep({str(scene_file)!r}, params={{"scene.seed": "1..3"}}, frames=2,
                              out="out", workers=2, progress=False)
        rows = table if isinstance(table, list) else table.to_dict("records")
        print("statuses", [row["status"] for row in rows])
        """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, env=dict(os.environ), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "statuses ['ok', 'ok', 'ok']" in done.stdout
    assert (tmp_path / "ran.txt").read_text() == "top level\n"   # the script ran once
    rows = read_manifest(tmp_path / "out")
    assert len(rows) == 3 and all((tmp_path / "out" / row["output"]).is_file() for row in rows)
    assert len({row["worker"] for row in rows} - {os.getpid()}) >= 1


# ------------------------------------------------------------------------- @FILE values

def test_a_fifo_of_values_is_refused_at_once(tmp_path, scene_file):
    fifo = tmp_path / "values.fifo"
    os.mkfifo(fifo)
    done = cli("sweep", str(scene_file), "--set", f"scene.seed=@{fifo}", "--frames", "1",
               "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    one_line_error(done, "expected a regular file of values at")
    assert "a FIFO (named pipe)" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("target, says", [
    ("/dev/zero", "found a character device"),
    (".", "found a directory"),
])
def test_special_files_of_values_are_refused(tmp_path, scene_file, target, says):
    done = cli("sweep", str(scene_file), "--set", f"scene.seed=@{target}", "--frames", "1",
               "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    one_line_error(done, says)


def test_a_values_file_over_the_bound_is_refused_without_reading_it_all(tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "wb") as handle:   # sparse: 1 GiB that costs no disk
        handle.truncate(1 << 30)
    with pytest.raises(UsageError) as info:
        parse_set(f"scene.seed=@{big}")
    assert f"at most {VALUES_FILE_BYTES // (1 << 20)} MiB" in str(info.value)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1\n2\n\xff\n")
    with pytest.raises(UsageError, match=r"bad.txt line 3: expected UTF-8 text, found byte 0xff"):
        parse_set(f"scene.seed=@{bad}")


# ---------------------------------------------------------------------- counting the jobs

@pytest.mark.parametrize("values, count", [
    (f"1..{BILLION}", "1,000,000,000 jobs"),
    (f"0:1:{BILLION}", "1,000,000,000 jobs"),
    ("1..1000001", "1,000,001 jobs"),
])
def test_a_huge_sweep_is_counted_and_refused_at_once(tmp_path, scene_file, values, count):
    start = time.monotonic()
    done = cli("sweep", str(scene_file), "--set", f"scene.seed={values}", "--frames", "1",
               "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert time.monotonic() - start < 30
    assert done.returncode == 2
    last = one_line_error(done, count)
    assert "more than the 10,000 it runs without --max-jobs" in last and "--max-jobs" in last
    assert not (tmp_path / "out").exists()


def test_two_sets_multiply_and_the_api_refuses_too(tmp_path, scene_file):
    import emberfx

    done = cli("sweep", str(scene_file), "--set", "scene.seed=1..200", "--set",
               "jet.emitter.rate=1:2:100", "--frames", "1", "--out", str(tmp_path / "out"),
               cwd=tmp_path, timeout=60)
    one_line_error(done, "20,000 jobs (200 scene.seed x 100 jet.emitter.rate)")
    api: Any = emberfx   # a lazy attribute: mypy cannot see it
    with pytest.raises(UsageError, match=r"1,000,000,000,000 jobs"):
        api.sweep(scene_file, params={"scene.seed": range(10**12)}, frames=1, out=tmp_path / "o")
    with pytest.raises(UsageError, match=r"--max-jobs: expected a whole number >= 1"):
        api.sweep(scene_file, params={"scene.seed": 1}, frames=1, out=tmp_path / "o", max_jobs=0)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_an_allowed_billion_job_sweep_says_its_count_and_starts_at_once(gpu, tmp_path,
                                                                        scene_file):
    """With --max-jobs the billion jobs run: the count comes first, the first job's output
    within seconds (the plan is made as jobs are taken), and memory stays that of one job."""
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "emberfx", "sweep", str(scene_file), "--set",
         f"scene.seed=1..{BILLION}", "--frames", "1", "--out", str(out), "--workers", "0",
         "--max-jobs", str(BILLION)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.startswith("emberfx: sweep: 1,000,000,000 jobs (1,000,000,000 scene.seed)")
        start, outputs = time.monotonic(), list[Path]()
        while len(outputs) < 3 and time.monotonic() - start < 120 and process.poll() is None:
            time.sleep(0.2)
            outputs = list(out.glob("tiny-*.png"))
        assert len(outputs) >= 3, "no job finished within 2 minutes"
        assert rss_mib(process.pid) < 2048
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "of 1,000,000,000 jobs finished" in stderr


# ------------------------------------------------------------------- the manifest read back

def test_a_manifest_with_a_byte_that_is_not_utf8_stops_the_sweep_and_is_kept(tmp_path,
                                                                           scene_file):
    out = tmp_path / "out"
    out.mkdir()
    manifest = out / "manifest.csv"
    data = b"job,scene.seed,status\nabc,1,ok\ndef,2,ok\xff\n"
    manifest.write_bytes(data)
    done = cli("sweep", str(scene_file), "--set", "scene.seed=1..2", "--frames", "1", "--out",
               str(out), "--workers", "0", cwd=tmp_path, timeout=120)
    assert done.returncode == 1
    one_line_error(done, f"{manifest} line 3: expected UTF-8 text, found byte 0xff")
    assert manifest.read_bytes() == data
    assert sorted(p.name for p in out.iterdir()) == ["manifest.csv"]


def test_a_manifest_with_a_200_kb_field_is_read_and_kept(gpu, tmp_path, scene_file):
    out = tmp_path / "out"
    args = ["sweep", str(scene_file), "--set", "scene.seed=1..2", "--frames", "1", "--out",
            str(out), "--workers", "0"]
    env = without_pyarrow(tmp_path)
    assert cli(*args, cwd=tmp_path, env=env).returncode == 0
    manifest = out / "manifest.csv"
    long_note = "x" * 200_000
    manifest.write_text(manifest.read_text() + f"older,9,ok,{long_note},,,,,,,\n")
    done = cli(*args, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "2 jobs: 2 ok, 0 failed, 2 skipped" in done.stdout
    rows = {row["job"]: row for row in read_manifest(out)}
    assert len(rows) == 3 and rows["older"]["error"] == long_note


# --------------------------------------------------------------- Ctrl-C with --workers 0

@pytest.mark.parametrize("delay", [0.0, 0.3, 0.7, 1.5])
def test_ctrl_c_during_an_in_process_sweep_exits_130(gpu, tmp_path, scene_file, delay):
    """SIGINT at several moments after the first job's files appear: every frame is read back
    (mp4) and the state too, so the Ctrl-C often lands in a map callback. The sweep exits 130,
    without a traceback, leaving no temporary file and no output of an unfinished job."""
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "emberfx", "sweep", str(scene_file), "--set",
         "scene.seed=1..400", "--frames", "40", "--format", "mp4", "--state", "--out",
         str(out), "--workers", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 180
    while not list(out.glob("*.npz")) and time.monotonic() < deadline \
            and process.poll() is None:
        time.sleep(0.05)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"no exit within 30 s of Ctrl-C (sent {delay} s after the first job)")
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    assert "sweep stopped:" in stderr
    rows = read_manifest(out)
    listed = {row[key] for row in rows for key in ("output", "state")}
    assert rows and all(row["status"] == "ok" for row in rows)
    manifest = manifest_path(out).name
    left = sorted(p.name for p in out.iterdir() if p.is_file() and p.name != manifest)
    assert left == sorted(listed), "files of an unfinished job, or temporary files, were left"


# A Ctrl-C that lands in a wgpu callback on the main thread: the callback's code runs the
# default handler's KeyboardInterrupt, and cffi prints and drops it. This wraps one step of the
# second job so that the signal arrives inside such a swallowing frame, then runs the CLI.
SWALLOWED_CTRL_C = """
import signal, sys, runpy
from emberfx.engine.engine import Engine
step, calls = Engine.step, []

def step_with_a_swallowed_ctrl_c(self, frames=1):
    calls.append(frames)
    if len(calls) == 8:   # the third step of the second job
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            sys.stderr.write("dropped: KeyboardInterrupt in a callback\\n")
    return step(self, frames)

Engine.step = step_with_a_swallowed_ctrl_c
sys.argv = ["emberfx", *sys.argv[1:]]
runpy.run_module("emberfx", run_name="__main__")
"""


def test_a_ctrl_c_that_a_callback_would_swallow_still_stops_the_sweep(gpu, tmp_path,
                                                                     scene_file):
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-c", SWALLOWED_CTRL_C, "sweep", str(scene_file), "--set",
         "scene.seed=1..400", "--frames", "5", "--out", str(out), "--workers", "0"],
        capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ), timeout=300)
    assert done.returncode == 130, done.stderr[-2000:]
    assert "dropped:" not in done.stderr and "Traceback" not in done.stderr
    rows = read_manifest(out)
    assert [row["status"] for row in rows] == ["ok"]   # the first job; the second stopped
    assert sorted(p.name for p in out.iterdir()) == sorted([manifest_path(out).name,
                                                            rows[0]["output"]])


# ------------------------------------------------------------------------------------ help

def test_every_sweep_argument_has_a_description(tmp_path):
    import argparse

    from emberfx.sweeps.command import add_arguments

    class Described(argparse.ArgumentParser):
        def add_argument(self, *args, **kwargs):
            assert kwargs.get("help"), f"{args} has no help"
            return super().add_argument(*args, **kwargs)

    add_arguments(Described())
    done = cli("sweep", "--help", cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and "--max-jobs N" in done.stdout
    assert "10,000" in done.stdout


# ------------------------------------------------------------------- Ray takes jobs as they go

class FakeRay:
    """The few Ray calls run_ray makes, each task run when it is waited for: enough to see how
    far ahead of the finished jobs the plan is taken (Ray itself: tests/test_sweep_ray.py)."""

    class exceptions:
        RayError = RuntimeError

    def __init__(self, cpus: int):
        self.cpus, self.most_in_flight = cpus, 0
        self.in_flight: dict[object, tuple] = {}

    def is_initialized(self):
        return True

    def cluster_resources(self):
        return {"CPU": float(self.cpus)}

    def remote(self, function):
        ray = self

        class Remote:
            def options(self, **_):
                return self

            def remote(self, *args):
                ref = object()
                ray.in_flight[ref] = (function, args)
                ray.most_in_flight = max(ray.most_in_flight, len(ray.in_flight))
                return ref
        return Remote()

    def wait(self, refs, num_returns, timeout):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        _function, (job, _spec) = self.in_flight.pop(ref)
        return {"status": "ok", "seconds": 0.0, "job": job.key}

    def cancel(self, ref, force):
        self.in_flight.pop(ref, None)


def test_ray_is_given_jobs_as_tasks_finish_not_the_whole_plan(monkeypatch, tmp_path):
    from emberfx.sweeps.jobs import Job, SweepSpec
    from emberfx.sweeps.ray_runner import IN_FLIGHT_PER_SLOT, run_ray

    fake = FakeRay(cpus=3)
    monkeypatch.setitem(sys.modules, "ray", fake)
    taken = []

    def plan():
        for index in range(BILLION):
            taken.append(index)
            assert index < 10_000, "the runner takes the whole plan before running it"
            yield Job(f"k{index}", (), "", None, (8, 8), "s", index=index)

    reported: list[str] = []

    def report(job, fields):
        reported.append(job.key)
        if len(reported) == 50:
            raise KeyboardInterrupt   # stop the billion here

    with pytest.raises(KeyboardInterrupt):
        run_ray(plan(), SweepSpec(out=tmp_path, frames=1), None, None, report)
    assert reported == [f"k{i}" for i in range(50)]
    assert fake.most_in_flight == IN_FLIGHT_PER_SLOT * 3
    assert len(taken) <= 50 + IN_FLIGHT_PER_SLOT * 3
    assert fake.in_flight == {}   # what was still queued was cancelled
