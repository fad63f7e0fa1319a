"""The emberfx command line, in-process through cli.main() and as `python -m emberfx`.

GPU tests use the `gpu` fixture: they run on lavapipe in CI and skip (or, with
EMBERFX_REQUIRE_GPU=1, fail) without an adapter. The window test starts its own Xvfb.
"""

from __future__ import annotations

import argparse
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from emberfx.app import cli

ROOT = Path(__file__).resolve().parent.parent
FOUNTAIN = ROOT / "scenes" / "fountain.toml"
REQUIRE_GPU = os.environ.get("EMBERFX_REQUIRE_GPU") == "1"


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_module(*argv, cwd=None, env=None, timeout=300):
    """`python -m emberfx ...` in a fresh interpreter: proves what a user's terminal shows."""
    return subprocess.run([sys.executable, "-m", "emberfx", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("emberfx: error:")]


def assert_nonuniform_png(path: Path, size=None):
    img = np.asarray(Image.open(path).convert("RGBA"))
    if size is not None:
        assert (img.shape[1], img.shape[0]) == size
    assert img[..., :3].std() > 0, f"{path} is a single colour"


# ---------------------------------------------------------------------------- usage errors (exit 2)

@pytest.mark.parametrize("argv, needle", [
    ([], "required"),
    (["frob"], "invalid choice"),
    (["render", FOUNTAIN, "--frames", "3"], "--out"),
    (["render", FOUNTAIN, "--frames", "3", "--out", "x.png", "--size", "12by4"], "12by4"),
    (["render", FOUNTAIN, "--frames", "3", "--out", "x.png", "--size", "0x10"], "0x10"),
    (["render", FOUNTAIN, "--frames", "0", "--out", "x.png"], "'0'"),
    (["render", FOUNTAIN, "--frames", "-2", "--out", "x.png"], "-2"),
    (["run", FOUNTAIN, "--frames", "1.5"], "1.5"),
    (["render", FOUNTAIN, "--frames", "3", "--out", "x.avi"], ".avi"),
    (["run", FOUNTAIN, "--screenshot", "shot.jpg"], "shot.jpg"),
])
def test_usage_errors_exit_2(capsys, tmp_path, monkeypatch, argv, needle):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.startswith("usage: emberfx")
    assert len(error_lines(err)) == 1 and needle in error_lines(err)[0]
    assert "Traceback" not in err and out == ""
    assert os.listdir(tmp_path) == []


def test_parse_size_is_strict():
    assert cli.parse_size("640x360") == (640, 360)
    for bad in ["640", "640x", "x360", "640x360x2", "6.4x3", "-640x360", "640*360", ""]:
        with pytest.raises(argparse.ArgumentTypeError):
            cli.parse_size(bad)


def test_help_exits_0(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0
    for command in ("run", "render", "validate", "passes", "info", "bench"):
        assert command in out


def test_usage_error_as_subprocess_has_no_traceback(tmp_path):
    r = run_module("render", FOUNTAIN, "--frames", "0", "--out", "x.png", cwd=tmp_path)
    assert r.returncode == 2
    assert "usage: emberfx render" in r.stderr and "Traceback" not in r.stderr
    r = run_module(cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr


# ---------------------------------------------------------------------------- validate (no GPU)

def test_validate_missing_file_is_one_line(capsys, tmp_path):
    missing = tmp_path / "nope.toml"
    code, out, err = run_cli(capsys, "validate", missing)
    assert code == 1 and out == ""
    assert err.splitlines() == error_lines(err) and len(error_lines(err)) == 1
    assert str(missing) in err


def test_validate_missing_file_as_subprocess(tmp_path):
    r = run_module("validate", "nope.toml", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.strip().startswith("emberfx: error:") and "nope.toml" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_validate_fountain(capsys):
    code, out, err = run_cli(capsys, "validate", FOUNTAIN)
    assert code == 0, err
    assert "fountain" in out
    assert out.strip().splitlines()[-1] == "ok"


def test_validate_bad_scene_is_one_line(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(FOUNTAIN.read_text().replace("capacity = 120000", 'capacity = "lots"'))
    code, out, err = run_cli(capsys, "validate", bad)
    assert code == 1 and "Traceback" not in err
    assert len(error_lines(err)) == 1 and "bad.toml" in err and "capacity" in err


@pytest.mark.parametrize("name", ["fountain", "fountain.toml"])
def test_validate_a_bundled_scene_by_name_from_another_folder(tmp_path, name):
    r = run_module("validate", name, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("scene 'Fountain' (") and r.stdout.strip().endswith("ok")


def test_validate_lists_the_bundled_scenes_on_a_miss(tmp_path):
    r = run_module("validate", "fontain", cwd=tmp_path)
    bundled = sorted(p.stem for p in (ROOT / "scenes").glob("*.toml"))
    assert r.returncode == 1 and len(error_lines(r.stderr)) == 1, r.stderr
    assert r.stderr.strip() == (f"emberfx: error: fontain: no such scene file (bundled scenes, "
                                f"named without a folder: {', '.join(bundled)}); did you mean "
                                f"'fountain'?")


def test_validate_checks_the_pattern_as_render_would(tmp_path):
    """A pattern that does not fit at its offset used to pass validate, then fail to render."""
    (tmp_path / "glider.rle").write_text("x = 3, y = 3\nbo$2bo$3o!\n")
    scene = tmp_path / "life.toml"
    scene.write_text('[[entity]]\nname = "life"\n[entity.life]\nsize = [40, 30]\n'
                     'pattern = "glider.rle"\noffset = [38, 0]\n')
    r = run_module("validate", scene, cwd=ROOT)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert error_lines(r.stderr) == [
        f"emberfx: error: {scene}: entity 'life': life.offset: expected (x, y) with the 3x3 "
        f"pattern inside the 40x30 grid of size = [40, 30] (0 <= x <= 37, 0 <= y <= 27), "
        f"found [38, 0]"]


def test_validate_prints_a_readable_summary(capsys):
    code, out, err = run_cli(capsys, "validate", ROOT / "scenes" / "fireworks.toml")
    assert code == 0, err
    assert "shape={kind = 'sphere', radius = 0.1, surface = true}" in out
    assert "Shape(" not in out and "Burst(" not in out
    assert all(len(line) <= 100 for line in out.splitlines())


# --------------------------------------------------------------------------- plumbing, faked engine

class FakeEngine:
    """The Engine surface the CLI uses, without a GPU: a picture that changes every step."""

    def __init__(self, scene, size=None, **options):
        self.scene, self.size = scene, tuple(size or scene.settings.size)
        self.steps, self.closed = 0, False
        self.adapter = SimpleNamespace(info={"backend_type": "OpenGL", "adapter_type": "CPU"})

    def step(self, frames=1):
        self.steps += frames

    def render(self):
        h, w = self.size[1], self.size[0]
        img = np.zeros((h, w, 4), np.uint8)
        img[..., 0] = (np.arange(w) * 7 + self.steps * 40) % 256
        img[..., 3] = 255
        return img

    def passes(self):
        return [p.name for p in self.pass_table().passes]

    def pass_table(self):
        from emberfx.core.frame_graph import Folded, Folding, Phase

        phases = (Phase.CLEAR, Phase.SIMULATE, Phase.SIMULATE, Phase.RENDER)
        passes = tuple(SimpleNamespace(name=f"fountain:emitter:{p}", phase=phase, does=f"{p}s")
                       for p, phase in zip(("clear", "update", "compact", "draw"), phases))
        prepared = Folded(Phase.PREPARE, Folding.IN_PASS, "the draw arguments")
        return SimpleNamespace(passes=passes, folded=((prepared, "fountain:emitter:compact"),))

    def close(self):
        self.closed = True


@pytest.fixture
def fake_stack(monkeypatch):
    """Stand-ins for the scene loader, the Engine and the benchmarks, to test the CLI's
    wiring."""
    import types

    scene_mod = types.ModuleType("emberfx.model.scene")

    class Scene:
        def __init__(self, path):
            self.path = Path(path)
            self.settings = SimpleNamespace(name="Fountain", size=(96, 54), fixed_dt=1 / 60,
                                            script=None, preview_steps=lambda: 120,
                                            duration_steps=lambda: 300)
            self.entities = [SimpleNamespace(name="fountain", components={"emitter": None},
                                             script=None)]
            self.cpu = {}

    scene_mod.Scene = Scene
    scene_mod.load_scene = Scene
    scene_mod.validated_copy = lambda value, key, **_: value
    scene_mod.bundled_scenes = lambda: {}
    scene_mod.describe = lambda scene: f"scene {scene.settings.name}\n  entity fountain"
    engine_mod = types.ModuleType("emberfx.engine.engine")
    engine_mod.Engine = FakeEngine
    bench_mod = types.ModuleType("emberfx.bench")
    bench_mod.NAMES = ["life", "emitter"]
    bench_mod.calls = []
    bench_mod.main = lambda names, as_json, options=None: \
        bench_mod.calls.append((names, as_json)) or 0
    import importlib

    for name, mod in (("emberfx.model.scene", scene_mod), ("emberfx.engine.engine", engine_mod),
                      ("emberfx.bench", bench_mod)):
        monkeypatch.setitem(sys.modules, name, mod)
        parent, _, leaf = name.rpartition(".")
        monkeypatch.setattr(importlib.import_module(parent), leaf, mod, raising=False)
    # The CLI names the adapter before building an Engine: a GPU stand-in for that too.
    monkeypatch.setattr("emberfx.core.gpu.get_context",
                        lambda: SimpleNamespace(label="fake (OpenGL, CPU)", is_software=False))
    return bench_mod


@pytest.mark.parametrize("ext", ["png", "gif", "mp4"])
def test_render_wiring(capsys, tmp_path, fake_stack, ext):
    out = tmp_path / f"x.{ext}"
    code, stdout, err = run_cli(capsys, "render", FOUNTAIN, "--frames", 3, "--out", out,
                                "--size", "50x30")
    assert code == 0, err
    assert f"wrote {out} (3 frames, 50x30)" in stdout
    assert os.listdir(tmp_path) == [out.name]


def test_validate_and_passes_wiring(capsys, fake_stack):
    code, out, _ = run_cli(capsys, "validate", FOUNTAIN)
    assert code == 0 and out.splitlines() == ["scene Fountain", "  entity fountain", "ok"]
    code, out, _ = run_cli(capsys, "passes", FOUNTAIN)
    assert code == 0
    assert out.splitlines() == [
        "#  phase     pass                      what it does",
        "1  CLEAR     fountain:emitter:clear    clears",
        "2  SIMULATE  fountain:emitter:update   updates",
        "3  SIMULATE  fountain:emitter:compact  compacts",
        "4  RENDER    fountain:emitter:draw     draws",
        "",
        "work without a pass of its own:",
        "  PREPARE   folded      the draw arguments (done by pass 3 fountain:emitter:compact)"]


def test_run_headless_wiring(capsys, tmp_path, monkeypatch, fake_stack):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "run", FOUNTAIN, "--frames", 2)
    assert code == 0, err
    assert len([ln for ln in err.splitlines() if "no display" in ln]) == 1
    assert os.listdir(tmp_path) == ["fountain.mp4"]


def test_run_on_opengl_adapter_renders_headless(capsys, tmp_path, monkeypatch, fake_stack):
    """wgpu aborts the process when a GL adapter configures a window surface: never try."""
    from emberfx.app import window

    monkeypatch.setattr(window, "has_display", lambda: True)
    monkeypatch.setattr(window, "run_window", lambda *a, **k: pytest.fail("opened a window"))
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "run", FOUNTAIN, "--frames", 2, "--screenshot", "s.png")
    assert code == 0, err
    assert "OpenGL adapter cannot show a window" in err
    assert os.listdir(tmp_path) == ["s.png"]


def test_bench_wiring(capsys, fake_stack):
    assert run_cli(capsys, "bench", "life", "--json")[0] == 0
    assert fake_stack.calls == [(["life"], True)]
    code, _, err = run_cli(capsys, "bench", "nope")
    assert code == 2 and err.startswith("usage: emberfx bench") and "'nope'" in err
    assert "life, emitter" in err


# ---------------------------------------------------------------------------- GPU commands

@pytest.mark.parametrize("ext", ["png", "gif", "mp4"])
def test_render_writes_file(capsys, tmp_path, gpu, ext):
    import imageio.v3 as iio
    import imageio_ffmpeg

    out = tmp_path / f"x.{ext}"
    code, stdout, err = run_cli(capsys, "render", FOUNTAIN, "--frames", 3, "--out", out,
                                "--size", "160x90")
    assert code == 0, err
    assert str(out) in stdout and "3 frames" in stdout
    assert os.listdir(tmp_path) == [out.name]  # no temp files left
    if ext == "png":
        assert_nonuniform_png(out, size=(160, 90))
    elif ext == "gif":
        assert iio.improps(out, index=None).shape[:3] == (3, 90, 160)
    else:
        assert imageio_ffmpeg.count_frames_and_secs(str(out))[0] == 3


def test_passes_lists_emitter_passes(capsys, gpu):
    code, out, err = run_cli(capsys, "passes", FOUNTAIN)
    assert code == 0, err
    lines = out.strip().split("\n\n")[0].splitlines()[1:]   # the passes, below the header
    assert lines and lines[0].split()[0] == "1"
    assert any("fountain:emitter:" in ln for ln in lines)
    numbers = [int(ln.split()[0]) for ln in lines]
    assert numbers == list(range(1, len(lines) + 1))


def test_info_mentions_backend(capsys, gpu):
    code, out, err = run_cli(capsys, "info")
    assert code == 0, err
    assert "backend:" in out
    assert any(b in out for b in ("Vulkan", "Metal", "D3D12", "OpenGL"))
    assert "max_storage_buffer_binding_size" in out


def test_run_without_display_renders_headless(capsys, tmp_path, monkeypatch, gpu):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "run", FOUNTAIN, "--frames", 3, "--screenshot", "shot.png")
    assert code == 0, err
    assert "no display" in err
    assert_nonuniform_png(tmp_path / "shot.png")
    # Without --screenshot it records <scene-stem>.mp4 in the current folder.
    code, out, err = run_cli(capsys, "run", FOUNTAIN, "--frames", 2)
    assert code == 0, err
    assert (tmp_path / "fountain.mp4").is_file()


@pytest.fixture(scope="module")
def xvfb():
    """A private X display: Xvfb picks a free number itself (-displayfd, so no race for one)."""
    if shutil.which("Xvfb") is None:
        if REQUIRE_GPU:
            pytest.fail("EMBERFX_REQUIRE_GPU=1 but the Xvfb binary is missing")
        pytest.skip("Xvfb not installed")
    rfd, wfd = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(wfd), "-screen", "0", "1280x720x24",
                             "-nolisten", "tcp"], pass_fds=(wfd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(wfd)
    try:
        ready, _, _ = select.select([rfd], [], [], 20)
        number = os.read(rfd, 64).decode().strip() if ready else ""
        if not number.isdigit() or proc.poll() is not None:
            pytest.fail("Xvfb did not start")
        yield f":{number}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        # Closed only now: Xvfb may write to the display fd again, and a write to a pipe with
        # no reader kills it with SIGPIPE (the display then vanished under the tests).
        os.close(rfd)


def display_env(display: str) -> dict:
    env = {**os.environ, "DISPLAY": display}
    env.pop("WAYLAND_DISPLAY", None)
    return env


def test_run_showcase_in_a_window_under_xvfb(tmp_path, gpu, xvfb):
    r = run_module("run", ROOT / "scenes" / "showcase.toml", "--frames", 5, "--screenshot",
                   "shot.png", cwd=tmp_path, env=display_env(xvfb))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "script error" not in r.stderr
    assert "no display" not in r.stderr  # it really used the window
    # the window opens at the scene's size: on a CPU adapter, its [cpu] preset's (said so)
    from emberfx.model.scene import load_scene

    scene = load_scene(ROOT / "scenes" / "showcase.toml")
    if gpu.is_software:
        scene = scene.cpu_variant()[0]
        assert "[cpu] preset lowers" in r.stderr
    assert_nonuniform_png(tmp_path / "shot.png", size=tuple(scene.settings.size))


EDITOR_SCRIPT = """
import time
from pathlib import Path

SCENE = Path(__file__).with_name("scene.toml")

def on_update(ctx, dt):
    # edits the scene file while the window runs it, and waits past the reloader's poll interval
    if ctx.frame == 3:
        SCENE.write_text(SCENE.read_text().replace("rate = 60.0", "rate = 600.0"))
        time.sleep(0.6)
    elif ctx.frame == 8:
        print("rate seen by the script:", ctx.entity("jet").emitter.rate, flush=True)
        SCENE.write_text(SCENE.read_text().replace("rate = 600.0", "rate = -1.0"))
        time.sleep(0.6)
"""


def test_hot_reload_in_a_window_under_xvfb(tmp_path, gpu, xvfb):
    """A valid and then an invalid edit of the scene file while `emberfx run` shows it."""
    (tmp_path / "editor.py").write_text(EDITOR_SCRIPT)
    (tmp_path / "scene.toml").write_text(
        '[scene]\nsize = [160, 90]\nscript = "editor.py"\n[camera]\nkind = "orthographic"\n'
        '[[entity]]\nname = "jet"\n[entity.emitter]\nrate = 60.0\nspeed = [0.5, 1.0]\n'
        'size = 0.1\n')
    r = run_module("run", "scene.toml", "--frames", 30, "--screenshot", "shot.png",
                   cwd=tmp_path, env=display_env(xvfb))
    assert r.returncode == 0, r.stderr
    assert "no display" not in r.stderr and "Traceback" not in r.stderr
    assert "reloaded scene.toml: updated jet.emitter" in r.stderr
    assert "rate seen by the script: 600.0" in r.stdout
    failed = [ln for ln in r.stderr.splitlines() if "reload failed" in ln]
    assert len(failed) == 1 and "entity 'jet': emitter.rate" in failed[0]
    assert_nonuniform_png(tmp_path / "shot.png", size=(160, 90))   # the last good scene ran on


PROBE_ENGINE = """
import sys
from emberfx.engine.engine import Engine
from emberfx.model.scene import Scene, SceneSettings
from emberfx.app.window import run_window

class ProbeEngine(Engine):
    # counts the frames the window draws, and can fail the way a bug in a system would
    drawn, formats = 0, set()

    def draw_to(self, texture):
        self.formats.add(texture.format)
        super().draw_to(texture)
        self.drawn += 1
        if sys.argv[2] == "fail":
            raise ZeroDivisionError("draw failed")

scene = Scene(SceneSettings(name="probe", size=(160, 90)))
scene.add("grid", life={"size": [40, 24], "density": 0.4})
engine = ProbeEngine(scene)
run_window(engine, frames=7, screenshot=sys.argv[1])
print("drawn", engine.drawn, "formats", sorted(engine.formats))
"""


@pytest.mark.parametrize("mode", ["ok", "fail"])
def test_window_presents_to_a_real_surface(tmp_path, gpu, xvfb, mode):
    """run_window on a Python-built scene: surface setup, frame count, screenshot, errors."""
    script = tmp_path / "probe_engine.py"
    script.write_text(PROBE_ENGINE)
    r = subprocess.run([sys.executable, str(script), "shot.png", mode], cwd=tmp_path,
                       env=display_env(xvfb), capture_output=True, text=True, timeout=120)
    if mode == "ok":
        assert r.returncode == 0, r.stderr
        assert "drawn 8" in r.stdout   # 7 window frames, then render() for the screenshot
        assert_nonuniform_png(tmp_path / "shot.png", size=(160, 90))
    else:  # the first draw error stops the window and comes out of run_window, once
        assert r.returncode == 1 and r.stderr.count("ZeroDivisionError: draw failed") == 1
        assert not (tmp_path / "shot.png").exists()


# ---------------------------------------------------------------------------- headless, honestly

def no_display_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    return env


def test_headless_run_says_what_it_prepares_and_prints_progress_lines(tmp_path, gpu):
    r = run_module("run", FOUNTAIN, "--frames", 3, cwd=tmp_path, env=no_display_env())
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert "Traceback" not in r.stderr and all(ln.startswith("emberfx: ") for ln in lines), lines
    said = [ln.removeprefix("emberfx: ") for ln in lines]
    preparing = next(i for i, ln in enumerate(said) if ln.startswith("preparing "))
    assert said[preparing] == (f"preparing 2 entities: fountain (emitter), floor (collider) "
                               f"on {gpu.label}")
    assert said[preparing + 1].startswith("prepared in ")
    # off a terminal the progress is plain lines: the first frame and the last one at least
    progress = [ln for ln in said if ln.startswith("fountain.mp4: frame ")]
    assert progress[0].startswith("fountain.mp4: frame 1/3 (33%), ")
    assert progress[-1].startswith("fountain.mp4: frame 3/3 (100%), ")
    assert said.index(progress[0]) > preparing
    notices = [ln for ln in said if "renders on the CPU" in ln]
    assert len(notices) == (1 if gpu.is_software else 0)          # said once, first
    if gpu.is_software:
        assert said.index(notices[0]) < preparing and gpu.label in notices[0]
    assert (tmp_path / "fountain.mp4").is_file()


PYTHON_RUN = """
import sys
import emberfx

if sys.argv[1] == "file":
    out = emberfx.run(sys.argv[2], size=(160, 90), frames=3)
else:   # a scene built in Python, as in the README
    scene = emberfx.Scene(emberfx.SceneSettings(name="sparks!", size=(96, 54)),
                          emberfx.Camera(kind="orthographic", height=4.0))
    scene.add("jet", emitter={"rate": 2000.0, "speed": [1.0, 2.0]})
    out = emberfx.run(scene, frames=2)
print("returned", out)
"""


@pytest.mark.parametrize("kind", ["file", "python"])
def test_python_run_without_display_renders_headless(tmp_path, gpu, kind):
    script = tmp_path / "use_run.py"
    script.write_text(PYTHON_RUN)
    r = subprocess.run([sys.executable, str(script), kind, str(FOUNTAIN)], cwd=tmp_path,
                       env=no_display_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    name, count = ("fountain.mp4", 3) if kind == "file" else ("sparks.mp4", 2)
    assert "emberfx: no display" in r.stderr
    assert f"rendering {count} frames headless to {name}" in r.stderr
    assert r.stdout.strip() == f"returned {name}"
    import imageio_ffmpeg

    assert imageio_ffmpeg.count_frames_and_secs(str(tmp_path / name))[0] == count
    assert sorted(os.listdir(tmp_path)) == sorted([name, "use_run.py"])


def test_kill_9_leaves_a_temp_file_that_the_next_render_removes(tmp_path, gpu):
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "emberfx", "render", str(FOUNTAIN), "--frames",
                             "5000", "--out", "clip.mp4", "--size", "160x90"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "clip.mp4: frame 1/" in line:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    (left,) = os.listdir(tmp_path)   # unavoidable: nothing runs after SIGKILL
    assert left.startswith(".clip.emberfx-") and left.endswith(".tmp.mp4")
    assert f"-{proc.pid}-" in left
    r = run_module("render", FOUNTAIN, "--frames", 2, "--out", "other.gif", "--size", "64x36",
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert os.listdir(tmp_path) == ["other.gif"]


@pytest.mark.parametrize("frames", [3, 400])   # the disk fills at the end / mid-stream
def test_render_onto_a_full_disk_fails_in_one_line_and_leaves_nothing(tmp_path, gpu, full_disk,
                                                                      frames):
    out = full_disk / "clip.mp4"
    r = run_module("render", FOUNTAIN, "--frames", frames, "--out", out, "--size", "320x180",
                   cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "wrote" not in r.stdout
    (error,) = error_lines(r.stderr)
    assert error.startswith(f"emberfx: error: cannot write {out}: ")
    assert "No space left on device" in error
    assert r.stderr.rstrip().endswith(error)
    assert os.listdir(full_disk) == ["filler"]
