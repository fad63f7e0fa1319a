"""Sweeps without a GPU: the ``--set PATH=VALUES`` grammar, paths and values checked against a
scene as its file would be, the job product and hash, the manifest files, the ``nvidia:1``
adapter index, and ``emberfx sweep`` usage errors through the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sweep_support import SCENE

from emberfx.core.errors import NoAdapterError, UsageError
from emberfx.core.gpu import choose_adapter, gpu_adapter_pins
from emberfx.sweeps.grammar import from_param, parse_set, parse_values
from emberfx.sweeps.jobs import plan
from emberfx.sweeps.manifest import _csv_text, read_manifest, write_manifest


@pytest.fixture
def scene_file(tmp_path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(SCENE)
    return path


# ------------------------------------------------------------------------------- values

@pytest.mark.parametrize("text, expected", [
    ("1000,5000", [1000, 5000]),
    (" 1.5 , 2 ", [1.5, 2]),
    ("additive,alpha", ["additive", "alpha"]),
    ('"a, b",c', ["a, b", "c"]),
    ("#ff8800,#000000", ["#ff8800", "#000000"]),
    ("true,false", [True, False]),
    (".5,5.", [0.5, 5.0]),
    ("42", [42]),
    ("[[0,0,0],[1,0,0]]", [[0, 0, 0], [1, 0, 0]]),
    ("[1, 2.5]", [1, 2.5]),
    ("1..4", [1, 2, 3, 4]),
    ("-2..1", [-2, -1, 0, 1]),
    ("3..3", [3]),
    ("0:1:5", [0.0, 0.25, 0.5, 0.75, 1.0]),
    ("0:10:3", [0, 5, 10]),
    ("0:1:3", [0.0, 0.5, 1.0]),
    ("0.0:10:3", [0.0, 5.0, 10.0]),
    ("-1:1:1", [-1]),
    ("-1.0:1:1", [-1.0]),
])
def test_value_forms(text, expected):
    values = list(parse_values(text, "--set x.y=" + text))
    assert values == expected
    assert [type(v) for v in values] == [type(v) for v in expected]


def test_linspace_hits_both_ends_exactly():
    values = parse_values("0.1:0.7:7", "--set")
    assert values[0] == 0.1 and values[-1] == 0.7 and len(values) == 7


def test_values_from_a_file(tmp_path):
    path = tmp_path / "values.txt"
    path.write_text("# one TOML value a line\n1000\n\n2.5\n[0, 1, 0]\n\"alpha\"\n")
    assert list(parse_values(f"@{path}", "--set")) == [1000, 2.5, [0, 1, 0], "alpha"]


@pytest.mark.parametrize("text, says", [
    ("fountain.emitter.rate", "expected PATH=VALUES"),
    ("rate=1,2", "expected PATH as scene.FIELD"),
    ("fountain..rate=1", "expected PATH as"),
    ("scene.seed=", "found nothing"),
    ("scene.seed=1,,2", "empty item"),
    ("scene.seed=1,", "empty item"),
    ("scene.seed=5..1", "a <= b"),
    ("scene.seed=1.5..3", "integer range a..b"),
    ("scene.seed=1..x", "integer range a..b"),
    ("scene.seed=0:1:0", "n a whole number >= 1"),
    ("scene.seed=0:1:2.5", "n a whole number >= 1"),
    ("scene.seed=[1,2", "TOML array"),
    ("scene.seed=[]", "TOML array"),
    ("scene.seed=1,[2,3]", "write vectors as a TOML array"),
    ("scene.seed=1,a b", "found 'a b'"),
    ('scene.name="open', "closing \""),
    ("scene.seed=@/no/such/file.txt", "expected a readable UTF-8 file"),
])
def test_bad_grammar_is_one_line_naming_the_set(text, says):
    with pytest.raises(UsageError) as info:
        parse_set(text)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"--set {text}: ")
    assert says in message


def test_a_bad_line_in_a_values_file_is_named(tmp_path):
    path = tmp_path / "values.txt"
    path.write_text("1\n2\nnot toml\n")
    with pytest.raises(UsageError, match=r"values.txt line 3: expected one TOML value.*"
                                         r"found 'not toml'"):
        parse_set(f"scene.seed=@{path}")


def test_python_params_accept_lists_ranges_and_grammar_strings():
    import numpy as np

    assert tuple(from_param("scene.seed", range(1, 4)).values) == (1, 2, 3)
    assert tuple(from_param("scene.seed", "1..3").values) == (1, 2, 3)
    assert from_param("jet.emitter.rate", 500.0).values == (500.0,)
    vectors = from_param("jet.emitter.direction", np.array([[0, 1, 0], [1, 0, 0]], np.float32))
    assert vectors.values == ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    with pytest.raises(UsageError, match="at least one value"):
        from_param("scene.seed", [])


# ------------------------------------------------------------------ paths, values, the product

def jobs_of(*args, **kwargs) -> list:
    return list(plan(*args, **kwargs))


def test_jobs_are_the_product_first_set_slowest(scene_file):
    sets = [parse_set("jet.emitter.rate=1000,3000"), parse_set("scene.seed=1..3")]
    jobs = jobs_of(scene_file, sets, frames=4)
    assert [dict(job.params) for job in jobs] == [
        {"jet.emitter.rate": r, "scene.seed": s} for r in (1000, 3000) for s in (1, 2, 3)]
    assert len({job.key for job in jobs}) == 6 and all(len(job.key) == 12 for job in jobs)
    assert all(job.error is None and job.size == (64, 36) for job in jobs)
    assert "seed = 2" in jobs[1].scene_text and "rate = 1000" in jobs[1].scene_text


def test_the_hash_changes_with_what_determines_the_output(scene_file, tmp_path):
    sets = [parse_set("scene.seed=1")]
    key = jobs_of(scene_file, sets, frames=4)[0].key
    assert jobs_of(scene_file, sets, frames=4)[0].key == key                 # reproducible
    assert jobs_of(scene_file, sets, frames=5)[0].key != key                 # frames
    assert jobs_of(scene_file, sets, frames=4, size=(32, 18))[0].key != key  # size
    assert jobs_of(scene_file, [parse_set("scene.seed=2")], frames=4)[0].key != key
    assert jobs_of(scene_file, sets, frames=4, scripts_run=False)[0].key != key
    edited = tmp_path / "edited.toml"
    edited.write_text(SCENE.replace("rate = 2000.0", "rate = 2001.0"))
    assert jobs_of(edited, sets, frames=4)[0].key != key                     # scene content
    assert len(jobs_of(scene_file, [parse_set("scene.seed=1,1,2")], frames=4)) == 2   # duplicates


def test_a_refused_value_fails_only_its_job_with_the_scene_error(scene_file):
    jobs = jobs_of(scene_file, [parse_set("jet.emitter.rate=1000,-5")], frames=4)
    assert jobs[0].error is None
    error = jobs[1].error
    assert error is not None and "\n" not in error
    assert error.startswith(f"{scene_file}: entity 'jet': emitter.rate: expected float >= 0")
    assert "found -5" in error and "(--set jet.emitter.rate=-5)" in error


def test_a_scalar_from_a_toml_array_hints_at_vectors(scene_file):
    jobs = jobs_of(scene_file, [parse_set("jet.emitter.direction=[0,1,0]")], frames=4)
    assert all(job.error is not None and "emitter.direction" in job.error
               and "one vector is written [[x,y,z]]" in job.error for job in jobs)
    ok = jobs_of(scene_file, [parse_set("jet.emitter.direction=[[0,1,0],[1,0,0]]")], frames=4)
    assert [job.error for job in ok] == [None, None]


def test_nested_subfields_and_top_level_tables(scene_file):
    jobs = jobs_of(scene_file, [parse_set("jet.emitter.shape.radius=0.5"),
                             parse_set("camera.fov_deg=30,40"), parse_set("scene.size=[[32,18]]")],
                frames=2)
    assert len(jobs) == 2
    assert all(job.size == (32, 18) for job in jobs)
    # a shape table without its kind is refused by the scene check, naming the nested field
    assert all(job.error is None or "emitter.shape" in job.error for job in jobs)


@pytest.mark.parametrize("text, says", [
    ("jett.emitter.rate=1", "has no entity 'jett'; did you mean 'jet'?"),
    ("jet.emiter.rate=1", "entity 'jet' in"),
    ("jet.emitter.rat=1", "entity 'jet' emitter has no field 'rat'; did you mean 'rate'?"),
    ("scene.sed=1", "[scene] has no field 'sed'; did you mean 'seed'?"),
    ("camera.nope=1", "[camera] has no field 'nope'"),
])
def test_bad_paths_stop_the_sweep_before_any_job(scene_file, text, says):
    with pytest.raises(UsageError) as info:
        jobs_of(scene_file, [parse_set(text)], frames=2)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_the_same_path_twice_is_refused(scene_file):
    with pytest.raises(UsageError, match="more than once"):
        jobs_of(scene_file, [parse_set("scene.seed=1"), parse_set("scene.seed=2")], frames=2)


# ------------------------------------------------------------------------------ the manifest

def test_manifest_csv_round_trip_keeps_earlier_columns(tmp_path, monkeypatch):
    import emberfx.sweeps.manifest as manifest

    monkeypatch.setattr(manifest, "has_pyarrow", lambda: False)
    rows = [{"job": "abc", "jet.emitter.direction": [0, 1, 0], "status": "ok", "error": "",
             "output": "x.png", "state": "", "seconds": 1.5, "adapter": "a", "host": "h",
             "worker": 7, "attempts": 1, "older.param": "kept"}]
    path = write_manifest(tmp_path, rows, ["jet.emitter.direction"])
    assert path.name == "manifest.csv"
    header = path.read_text().splitlines()[0].split(",")
    assert header[:2] == ["job", "jet.emitter.direction"] and header[-1] == "older.param"
    back = read_manifest(tmp_path)
    assert back[0]["jet.emitter.direction"] == "[0, 1, 0]" and back[0]["status"] == "ok"
    assert back[0]["older.param"] == "kept" and back[0]["worker"] == "7"
    assert _csv_text([{"job": "j", "flag": True, "none": None}], ["job", "flag", "none"]) \
        == "job,flag,none\nj,true,\n"


def test_manifest_parquet_when_pyarrow_is_there(tmp_path):
    pytest.importorskip("pyarrow")
    rows: list[dict] = [{"job": "a", "p.q": 1, "status": "ok"},
                        {"job": "b", "p.q": "word", "status": "ok"}]
    path = write_manifest(tmp_path, rows, ["p.q"])
    assert path.name == "manifest.parquet"
    assert [r["p.q"] for r in read_manifest(tmp_path)] == ["1", '"word"']   # mixed: JSON text


# ----------------------------------------------------------------------- adapters by index

class FakeAdapter:
    def __init__(self, device, backend, kind, serial):
        self.info = {"device": device, "backend_type": backend, "adapter_type": kind,
                     "description": ""}
        self.serial = serial


TWO_GPUS = [FakeAdapter("NVIDIA H200", "Vulkan", "DiscreteGPU", 0),
            FakeAdapter("llvmpipe", "Vulkan", "CPU", 1),
            FakeAdapter("NVIDIA H200", "Vulkan", "DiscreteGPU", 2),
            FakeAdapter("NVIDIA H200/PCIe", "OpenGL", "DiscreteGPU", 3)]


@pytest.mark.parametrize("wanted, serial", [
    ("nvidia", 0), ("nvidia:0", 0), ("nvidia:1", 2), ("nvidia:2", 3), ("NVIDIA:1", 2),
    (":0", 0), (":1", 2), ("vulkan:2", 1), ("llvmpipe", 1)])
def test_adapter_index_counts_matches_in_preference_order(monkeypatch, wanted, serial):
    monkeypatch.setenv("EMBERFX_ADAPTER", wanted)
    assert choose_adapter(TWO_GPUS).serial == serial


def test_adapter_index_errors(monkeypatch):
    monkeypatch.setenv("EMBERFX_ADAPTER", "nvidia:5")
    with pytest.raises(NoAdapterError, match=r"expected an index below 3 .*found 5"):
        choose_adapter(TWO_GPUS)
    monkeypatch.setenv("EMBERFX_ADAPTER", "nvidia:")
    with pytest.raises(NoAdapterError, match="found nothing after ':'"):
        choose_adapter(TWO_GPUS)


def test_gpu_pins_name_each_gpu_once(monkeypatch):
    pins = gpu_adapter_pins(TWO_GPUS)
    assert len(pins) == 2   # neither lavapipe nor the OpenGL duplicate
    chosen = []
    for pin in pins:
        monkeypatch.setenv("EMBERFX_ADAPTER", pin)
        chosen.append(choose_adapter(TWO_GPUS).serial)
    assert chosen == [0, 2]
    assert gpu_adapter_pins([TWO_GPUS[1]]) == []


# ------------------------------------------------------------------------------ the faces

def test_emberfx_sweep_is_listed_and_callable(tmp_path):
    """``emberfx.sweep`` is the function, also after a module of the package was imported."""
    import emberfx.sweeps.jobs  # noqa: F401

    assert "sweep" in dir(emberfx)
    api: Any = emberfx   # a lazy attribute: mypy cannot see it
    with pytest.raises(UsageError, match="expected a scene file path or a Scene, found int"):
        api.sweep(42, frames=1, out=tmp_path)
    with pytest.raises(UsageError, match=r"expected a dict \{PATH: values\}, found list"):
        api.sweep("fountain", ["scene.seed=1"], frames=1, out=tmp_path)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "emberfx", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300)


@pytest.mark.parametrize("args, says", [
    (["--set", "scene.seed"], "--set scene.seed: expected PATH=VALUES"),
    (["--set", "nope.emitter.rate=1"], "has no entity 'nope'"),
    (["--set", "scene.seed=1", "--gpus-per-job", "0.5"], "--gpus-per-job is a Ray option"),
])
def test_cli_usage_errors_exit_2_with_one_line(scene_file, tmp_path, args, says):
    done = cli("sweep", str(scene_file), "--frames", "2", "--out", str(tmp_path / "out"), *args,
               cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("emberfx: error: ") and says in last
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "manifest.csv").exists()
