"""Point caches (`emberfx export`, Engine.export): npz, PLY and USD files hold the points of
Engine.state (alive only, slot order), read back through numpy, plyfile and pxr; --every samples
the right steps; progress; atomic files; bad input is one line.

The oracle for the points is Engine.state of an engine run to the same step: the default
"ordered" allocation replays byte for byte, so a second engine gives the same state. Emitter
colours are checked against the closed form of the scene's two stops and alpha curve.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import EmberError

SCENE = """
[scene]
name = "Cache"
seed = 7
size = [64, 48]

[camera]
kind = "perspective"
position = [0.0, 0.0, 4.0]
target = [0.0, 0.0, 0.0]

[[entity]]
name = "jet"
[entity.emitter]
capacity = 600
rate = 3000.0
lifetime = [0.05, 0.3]
speed = [0.5, 1.0]
spread_deg = 40.0
gravity = [0.0, -1.0, 0.0]
size = 0.05
color = ["#ff0000", "#0000ff"]
alpha_curve = [1.0, 0.0]

[[entity]]
name = "flag"
[entity.cloth]
resolution = [6, 5]
size = [1.0, 0.8]
position = [-0.5, -1.0, -1.0]
pins = "top-edge"

[[entity]]
name = "swarm"
[entity.particle_life]
count = 300
species = 3
box = [2.0, 2.0]
"""
ENTITIES = ("jet", "flag", "swarm")


@pytest.fixture
def scene_file(tmp_path) -> Path:
    path = tmp_path / "cache.toml"
    path.write_text(SCENE)
    return path


def _engine(path: Path):
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import load_scene

    return Engine(load_scene(path))


def expected_points(state: dict, name: str) -> dict:
    """The oracle: the state's alive rows in slot order, grids flattened row by row."""
    position = state["position"]
    n = int(np.prod(position.shape[:-1]))
    alive = state["alive"].reshape(n) if "alive" in state else np.ones(n, bool)
    slots = np.flatnonzero(alive)
    out = {"id": slots}
    for key, value in state.items():
        if key != "alive":
            out[key] = value.reshape((n,) + value.shape[position.ndim - 1:])[slots]
    if name == "jet":   # stops red -> blue in linear light, alpha 1 -> 0 over life
        t = np.clip(out["age"] / out["lifetime"], 0.0, 1.0).astype(np.float64)
        out["color"] = np.stack([1.0 - t, 0.0 * t, t, 1.0 - t], axis=1)
    return out


def states_at(path: Path, steps) -> dict[int, dict[str, dict]]:
    """Engine.state of every entity after each of ``steps`` (ascending), from a fresh engine."""
    engine = _engine(path)
    out = {}
    try:
        for step in steps:
            engine.step(step - engine.clock.steps)
            out[step] = {name: expected_points(engine.state(name), name) for name in ENTITIES}
    finally:
        engine.close()
    return out


def run_module(*argv, cwd=None, env=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "emberfx", *map(str, argv)], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


def assert_same_points(found: dict, want: dict, what: str) -> None:
    assert set(found) == set(want), what
    for key, value in want.items():
        if key == "color":   # host evaluation vs closed form: float32 rounding
            np.testing.assert_allclose(found[key], value, atol=1e-6, err_msg=f"{what} {key}")
        else:
            np.testing.assert_array_equal(found[key], value, err_msg=f"{what} {key}")


def test_npz_holds_the_alive_points_of_state_in_slot_order(gpu, scene_file, tmp_path):
    engine = _engine(scene_file)
    try:
        engine.step(6)
        want = {name: expected_points(engine.state(name), name) for name in ENTITIES}
        written = engine.export(tmp_path / "out")
    finally:
        engine.close()
    assert sorted(p.name for p in written) == [f"{n}.0006.npz" for n in sorted(ENTITIES)]
    jet = want["jet"]
    assert 0 < len(jet["id"]) < 600, "the oracle should have both alive and dead slots"
    for name in ENTITIES:
        with np.load(tmp_path / "out" / f"{name}.0006.npz") as data:
            assert_same_points({k: data[k] for k in data.files}, want[name], name)
    assert want["flag"]["position"].shape == (30, 3)
    assert want["swarm"]["position"].shape == (300, 2)


def test_ply_reads_back_through_plyfile(gpu, scene_file, tmp_path):
    plyfile = pytest.importorskip("plyfile")
    engine = _engine(scene_file)
    try:
        engine.step(5)
        want = {name: expected_points(engine.state(name), name) for name in ENTITIES}
        engine.export(tmp_path, "ply")
    finally:
        engine.close()
    for name in ENTITIES:
        vertex = plyfile.PlyData.read(tmp_path / f"{name}.0005.ply")["vertex"]
        w = want[name]
        dims = w["position"].shape[1]
        found = np.stack([vertex[a] for a in "xyz"[:dims]], axis=1)
        np.testing.assert_array_equal(found, w["position"])
        if dims == 2:   # a 2D swarm lies in z = 0
            np.testing.assert_array_equal(vertex["z"], 0.0)
        np.testing.assert_array_equal(vertex["id"], w["id"])
        np.testing.assert_array_equal(
            np.stack([vertex[f"v{a}"] for a in "xyz"[:dims]], axis=1), w["velocity"])
        if name == "jet":
            np.testing.assert_array_equal(vertex["age"], w["age"])
            c = w["color"]
            srgb = np.where(c[:, :3] <= 0.0031308, c[:, :3] * 12.92,
                            1.055 * np.power(c[:, :3], 1 / 2.4) - 0.055)
            bytes_ = np.stack([vertex[k] for k in ("red", "green", "blue", "alpha")], axis=1)
            expected = np.round(np.concatenate([srgb, c[:, 3:]], axis=1) * 255)
            assert np.abs(bytes_.astype(int) - expected).max() <= 1   # rounding at .5
        if name == "swarm":
            np.testing.assert_array_equal(vertex["species"], w["species"])


def test_cli_every_k_writes_the_sampled_steps_with_progress(gpu, scene_file, tmp_path):
    out = tmp_path / "npz"
    r = run_module("export", scene_file, "--frames", 7, "--every", 3, "--out", out)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{n}.{s:04d}.npz" for n in ENTITIES for s in (3, 6))
    assert "frame 7/7" in r.stderr   # plain progress lines off a terminal
    assert "wrote 6 files" in r.stdout
    want = states_at(scene_file, (3, 6))
    for step in (3, 6):
        for name in ENTITIES:
            with np.load(out / f"{name}.{step:04d}.npz") as data:
                assert_same_points({k: data[k] for k in data.files}, want[step][name],
                                   f"{name} step {step}")


def test_usd_is_one_time_sampled_file(gpu, scene_file, tmp_path):
    pytest.importorskip("pxr")
    from pxr import Usd, UsdGeom

    r = run_module("export", scene_file, "--frames", 4, "--every", 2, "--out", tmp_path,
                   "--format", "usd")
    assert r.returncode == 0, r.stderr
    assert [p.name for p in tmp_path.glob("*.usd")] == ["cache.usd"]
    stage = Usd.Stage.Open(str(tmp_path / "cache.usd"))
    assert (stage.GetStartTimeCode(), stage.GetEndTimeCode()) == (2.0, 4.0)
    assert stage.GetTimeCodesPerSecond() == pytest.approx(60.0, rel=1e-6)
    want = states_at(scene_file, (2, 4))
    for name in ENTITIES:
        points = UsdGeom.Points(stage.GetPrimAtPath(f"/Emberfx/{name}"))
        assert points, name
        assert points.GetPointsAttr().GetTimeSamples() == [2.0, 4.0]
        for step in (2, 4):
            w = want[step][name]
            found = np.array(points.GetPointsAttr().Get(step), np.float32)
            position = w["position"]
            if position.shape[1] == 2:
                position = np.concatenate([position, np.zeros((len(position), 1))], axis=1)
            np.testing.assert_array_equal(found, position, err_msg=f"{name} step {step}")
            np.testing.assert_array_equal(np.array(points.GetIdsAttr().Get(step)), w["id"])
            if name == "jet":
                color = np.array(points.GetDisplayColorPrimvar().Get(step))
                np.testing.assert_allclose(color, w["color"][:, :3], atol=1e-6)
                age = UsdGeom.PrimvarsAPI(points).GetPrimvar("age").Get(step)
                np.testing.assert_array_equal(np.array(age, np.float32), w["age"])


def test_a_failed_write_leaves_no_partial_file(gpu, scene_file, tmp_path, monkeypatch):
    from emberfx.app.export import export_run

    real_savez, calls = np.savez, []

    def failing_savez(stream, **arrays):
        calls.append(1)
        if len(calls) > len(ENTITIES):   # the second step's first file: half written, then full
            stream.write(b"PK\x03\x04 half a zip")
            raise OSError(28, "No space left on device")
        real_savez(stream, **arrays)

    monkeypatch.setattr(np, "savez", failing_savez)
    engine = _engine(scene_file)
    try:
        with pytest.raises(EmberError) as err:
            export_run(engine, 3, 1, tmp_path / "out", "npz", progress=False)
    finally:
        engine.close()
    message = str(err.value)
    assert "\n" not in message and "No space left on device" in message
    assert "jet.0002.npz" in message
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"{n}.0001.npz" for n in ENTITIES)


def test_bad_input_is_one_line(gpu, scene_file, tmp_path, monkeypatch):
    r = run_module("export", scene_file, "--frames", 2, "--every", 3, "--out", tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--every 3 is more than --frames 2" in r.stderr.splitlines()[-1]

    r = run_module("export", scene_file, "--frames", 1, "--out", scene_file)
    assert r.returncode == 1 and r.stderr.strip().splitlines()[-1] == (
        f"emberfx: error: --out {scene_file}: expected a folder, found a file")

    empty = tmp_path / "empty.toml"
    empty.write_text('[scene]\nname = "Empty"\n[[entity]]\nname = "well"\n'
                     '[entity.attractor]\nposition = [0.0, 0.0, 0.0]\n')
    r = run_module("export", empty, "--frames", 1, "--out", tmp_path / "x")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        "emberfx: error: scene 'Empty': nothing to export (no emitter, particle_life, "
        "cloth, fluid, gas entity)")

    engine = _engine(scene_file)
    try:
        with pytest.raises(EmberError, match=r"^export format: expected one of npz, ply, usd, "
                                             r"found 'obj'$"):
            engine.export(tmp_path, "obj")
        monkeypatch.setitem(sys.modules, "pxr", None)   # usd-core not installed
        with pytest.raises(EmberError, match=r"^USD export needs usd-core: pip install "):
            engine.export(tmp_path, "usd")
    finally:
        engine.close()
    assert not list(tmp_path.glob("*.npz")) and not list(tmp_path.glob("*.usd"))


GAS_SCENE = """
[scene]
name = "Smoke"
size = [32, 24]
[[entity]]
name = "puff"
[entity.gas]
resolution = [8, 12, 12]
cell = 0.1
center = [0.0, 0.6, 0.0]
[[entity.gas.sources]]
shape = { kind = "sphere", radius = 0.15 }
position = [0.0, 0.2, 0.0]
density = 2.0
temperature = 1.0
[[entity]]
name = "jet"
[entity.emitter]
capacity = 50
rate = 200.0
lifetime = 0.2
"""


@pytest.mark.parametrize("fmt", ["npz", "ply"])
def test_a_gas_is_written_as_its_state_grids_in_every_format(gpu, tmp_path, fmt):
    """export writes each gas as ENTITY.STEP.npz (a PLY run too): the arrays of Engine.state
    at that step, byte for byte (a second engine replays the gas exactly), its box's lower
    corner and cell edge."""
    path = tmp_path / "smoke.toml"
    path.write_text(GAS_SCENE)
    out = tmp_path / "out"
    r = run_module("export", path, "--frames", 4, "--every", 2, "--out", out, "--format", fmt)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"puff.{s:04d}.npz" for s in (2, 4)] + [f"jet.{s:04d}.{fmt}" for s in (2, 4)])
    engine = _engine(path)
    try:
        for step in (2, 4):
            engine.step(step - engine.clock.steps)
            want = engine.state("puff")
            with np.load(out / f"puff.{step:04d}.npz") as data:
                assert set(data.files) == {*want, "lower", "cell"}
                for key, value in want.items():
                    assert data[key].shape == value.shape and np.array_equal(data[key], value)
                assert np.allclose(data["lower"], [-0.4, 0.0, -0.6])
                assert float(data["cell"]) == pytest.approx(0.1)
                assert data["density"].shape == (12, 12, 8) and data["density"].max() > 0.0
    finally:
        engine.close()
