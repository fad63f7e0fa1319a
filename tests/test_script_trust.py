"""Scripts as a trust boundary, on the real path: `python -m emberfx ...` in a fresh interpreter.

A scene with scripts is a program. These tests check who runs it (run and render do, unless
--no-scripts or EMBERFX_NO_SCRIPTS=1; passes and validate never), where a script may come from
(the scene's folder, unless --allow-outside-scripts), and that a hook that never returns is
stopped by the watchdog (--script-timeout) while Ctrl-C still ends the program with 130.
The oracle for "a script ran" is a marker file its module writes when it is imported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emberfx.core.errors import EmberError, SceneError
from emberfx.engine.engine import Engine
from emberfx.engine.scripting import ScriptPolicy
from emberfx.model.scene import load_scene

# Imported, it leaves "<file name>.imported" next to itself; each step appends to "<name>.steps".
MARKING_SCRIPT = """
from pathlib import Path

HERE = Path(__file__).resolve()
HERE.with_name(HERE.name + ".imported").write_text("imported")

def on_update(ctx, dt):
    with open(HERE.with_name(HERE.name + ".steps"), "a") as out:
        out.write(f"{ctx.frame}\\n")
"""

# Loops forever from its second step on, after leaving "spin.py.looping" next to itself.
SPINNING_SCRIPT = """
from pathlib import Path

HERE = Path(__file__).resolve()

def on_update(ctx, dt):
    with open(HERE.with_name(HERE.name + ".steps"), "a") as out:
        out.write(f"{ctx.frame}\\n")
    if ctx.frame == 1:
        HERE.with_name(HERE.name + ".looping").write_text("looping")
        n = 0
        while True:
            n += 1
"""

SCENE = """
[scene]
size = [24, 16]
{scene_script}
[camera]
kind = "orthographic"
[[entity]]
name = "jet"
{entity_script}
[entity.emitter]
capacity = 500
rate = 120.0
"""


def make_scene(folder: Path, scene_script: str | None = "scripts/scene_hooks.py",
               entity_script: str | None = "scripts/jet_hooks.py") -> Path:
    """A scene in ``folder`` whose scripts (paths as written) mark that they ran."""
    (folder / "scripts").mkdir(parents=True, exist_ok=True)
    for written in (scene_script, entity_script):
        if written is not None:
            target = (folder / written).resolve()
            if not target.exists():
                target.write_text(MARKING_SCRIPT)
    path = folder / "scene.toml"
    path.write_text(SCENE.format(
        scene_script=f"script = {str(scene_script)!r}" if scene_script else "",
        entity_script=f"script = {str(entity_script)!r}" if entity_script else ""))
    return path


def markers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.imported"))


def emberfx(*argv, cwd: Path, env_extra: dict | None = None, timeout: float = 300):
    # no display: `run` renders headless, as on CI
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "EMBERFX_NO_SCRIPTS")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "emberfx", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def error_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("emberfx: error:")]


# ------------------------------------------------------------------------- who runs scripts

def test_render_runs_both_scripts(gpu, tmp_path):
    """The control for the tests below: without a flag the markers do appear."""
    scene = make_scene(tmp_path)
    r = emberfx("render", scene, "--frames", 3, "--out", "out.png", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path) == ["jet_hooks.py.imported", "scene_hooks.py.imported"]
    steps = (tmp_path / "scripts" / "scene_hooks.py.steps").read_text().split()
    assert steps == ["0", "1", "2"]
    assert "scripts off" not in r.stderr


@pytest.mark.parametrize("argv, env, reason", [
    (["render", "{scene}", "--frames", 2, "--out", "out.png", "--no-scripts"], {},
     "--no-scripts"),
    (["render", "{scene}", "--frames", 2, "--out", "out.png"], {"EMBERFX_NO_SCRIPTS": "1"},
     "EMBERFX_NO_SCRIPTS=1"),
    (["run", "{scene}", "--frames", 2, "--screenshot", "out.png", "--no-scripts"], {},
     "--no-scripts"),
    (["passes", "{scene}"], {}, "passes never runs scripts"),
], ids=["render --no-scripts", "EMBERFX_NO_SCRIPTS=1", "run --no-scripts", "passes"])
def test_scripts_off_run_nothing_and_say_so_once(gpu, tmp_path, argv, env, reason):
    scene = make_scene(tmp_path)
    r = emberfx(*[str(scene) if a == "{scene}" else a for a in argv], cwd=tmp_path, env_extra=env)
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path) == []
    said = [ln for ln in r.stderr.splitlines() if "scripts off" in ln]
    assert said == [f"emberfx: scripts off: 2 scripts not run ({reason})"]
    if argv[0] == "passes":
        assert "jet:emitter:update" in r.stdout
    else:
        assert (tmp_path / "out.png").stat().st_size > 0


def test_validate_lists_every_script_and_runs_none(tmp_path):
    scene = make_scene(tmp_path)
    r = emberfx("validate", scene, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path) == []
    assert "2 scripts, not run here (a scene with scripts is a program" in r.stdout
    assert (f"    scene: scripts/scene_hooks.py ({tmp_path / 'scripts' / 'scene_hooks.py'})"
            in r.stdout.splitlines())
    assert (f"    entity 'jet': scripts/jet_hooks.py ({tmp_path / 'scripts' / 'jet_hooks.py'})"
            in r.stdout.splitlines())
    assert r.stdout.rstrip().endswith("ok")


def test_life_accepts_no_scripts(gpu, tmp_path):
    (tmp_path / "blinker.rle").write_text("x = 3, y = 1, rule = B3/S23\n3o!\n")
    r = emberfx("life", "blinker.rle", "--gens", 3, "--no-scripts", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "population 3"


def test_an_engine_with_scripts_false_runs_none(gpu, tmp_path, capsys):
    scene = make_scene(tmp_path)
    with Engine(load_scene(scene), scripts=False) as engine:
        engine.step(2)
    assert markers(tmp_path) == []
    assert "emberfx: scripts off: 2 scripts not run (scripts=False)" in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    ({"scripts": "no"}, "Engine(scripts=...): expected True, False or a ScriptPolicy, found 'no'"),
    ({"script_timeout": -1}, "script timeout: expected a number of seconds >= 0 (0: no limit), "
                             "found -1"),
    ({"script_timeout": "5"}, "script timeout: expected a number of seconds >= 0 (0: no limit), "
                              "found '5'"),
])
def test_bad_script_options_are_one_line_errors(tmp_path, options, message):
    scene = load_scene(make_scene(tmp_path))
    with pytest.raises(EmberError) as caught:
        Engine(scene, **options)
    assert str(caught.value) == message
    assert markers(tmp_path) == []


def test_an_unclear_no_scripts_variable_is_refused(gpu, tmp_path):
    scene = make_scene(tmp_path)
    r = emberfx("render", scene, "--frames", 1, "--out", "out.png", cwd=tmp_path,
                env_extra={"EMBERFX_NO_SCRIPTS": "maybe"})
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert error_lines(r.stderr) == [
        "emberfx: error: EMBERFX_NO_SCRIPTS='maybe': expected 1 (scripts off) or 0 (scripts on)"]
    assert markers(tmp_path) == []


# ------------------------------------------------------------------- where scripts may come from

def outside_layouts(tmp_path: Path) -> dict[str, tuple[Path, str | None, str | None, str]]:
    """name -> (scene folder, scene script, entity script, the error's 'where' part)."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (tmp_path / "outside.py").write_text(MARKING_SCRIPT)
    (project / "scripts" / "link.py").symlink_to(tmp_path / "outside.py")
    return {
        "parent": (project, None, "../outside.py", "entity 'jet': script:"),
        "absolute": (project, None, str(tmp_path / "outside.py"), "entity 'jet': script:"),
        "symlink": (project, None, "scripts/link.py", "entity 'jet': script:"),
        "scene script": (project, "../outside.py", None, "scene.toml: scene.script:"),
    }


@pytest.mark.parametrize("layout", ["parent", "absolute", "symlink", "scene script"])
def test_a_script_outside_the_scene_folder_is_refused(gpu, tmp_path, layout):
    folder, scene_script, entity_script, where = outside_layouts(tmp_path)[layout]
    scene = make_scene(folder, scene_script, entity_script)
    for argv in (["render", scene, "--frames", 1, "--out", "out.png"], ["validate", scene]):
        r = emberfx(*argv, cwd=folder)
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stderr
        [line] = error_lines(r.stderr)
        assert where in line
        assert f"' (resolved to {tmp_path / 'outside.py'}); " in line
        assert "--allow-outside-scripts" in line
        assert not (folder / "out.png").exists()
    assert markers(tmp_path) == []


def test_allow_outside_scripts_runs_them(gpu, tmp_path):
    folder, scene_script, entity_script, _ = outside_layouts(tmp_path)["parent"]
    scene = make_scene(folder, scene_script, entity_script)
    r = emberfx("render", scene, "--frames", 1, "--out", "out.png", "--allow-outside-scripts",
                cwd=folder)
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path) == ["outside.py.imported"]
    r = emberfx("validate", scene, "--allow-outside-scripts", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert f"../outside.py ({tmp_path / 'outside.py'}, outside the scene's folder)" in r.stdout


def test_the_python_api_refuses_outside_scripts_too(gpu, tmp_path):
    folder, scene_script, entity_script, _ = outside_layouts(tmp_path)["parent"]
    scene = load_scene(make_scene(folder, scene_script, entity_script))
    with pytest.raises(SceneError, match=r"entity 'jet': script: expected a script inside"):
        Engine(scene)
    assert markers(tmp_path) == []
    with Engine(scene, scripts=ScriptPolicy(allow_outside=True)) as engine:
        engine.step(1)
    assert markers(tmp_path) == ["outside.py.imported"]


def test_a_reload_to_an_outside_script_is_refused_and_the_scene_runs_on(gpu, tmp_path):
    folder = tmp_path / "project"
    path = make_scene(folder, None, "scripts/jet_hooks.py")
    (tmp_path / "outside.py").write_text(MARKING_SCRIPT)
    with Engine(load_scene(path)) as engine:
        engine.step(1)
        path.write_text(path.read_text().replace("scripts/jet_hooks.py", "../outside.py"))
        with pytest.raises(SceneError, match="outside.py"):
            engine.reload(load_scene(path))
        engine.step(2)
        assert engine.scene.entities[0].script == "scripts/jet_hooks.py"
    assert markers(tmp_path) == ["jet_hooks.py.imported"]
    steps = (folder / "scripts" / "jet_hooks.py.steps").read_text().split()
    assert steps == ["0", "1", "2"]


# ------------------------------------------------------------------------ hooks that never end

def spinning_scene(folder: Path) -> Path:
    (folder / "scripts").mkdir(parents=True, exist_ok=True)
    (folder / "scripts" / "spin.py").write_text(SPINNING_SCRIPT)
    return make_scene(folder, "scripts/spin.py", "scripts/jet_hooks.py")


def test_script_timeout_stops_an_endless_hook_and_the_render_goes_on(gpu, tmp_path):
    scene = spinning_scene(tmp_path)
    r = emberfx("render", scene, "--frames", 4, "--out", "out.png", "--script-timeout", "1",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "wrote out.png (4 frames" in r.stdout
    [line] = [ln for ln in r.stderr.splitlines() if "script error" in ln]
    assert line.startswith(f"emberfx: script error in {tmp_path / 'scripts' / 'spin.py'} "
                           f"(scene, on_update); still running after 1 s at line ")
    assert "the script is skipped" in line
    assert "interrupted" not in r.stderr   # a timeout is not a Ctrl-C
    # the spinning script was skipped after its second step; the other one ran every step
    assert (tmp_path / "scripts" / "spin.py.steps").read_text().split() == ["0", "1"]
    assert (tmp_path / "scripts" / "jet_hooks.py.steps").read_text().split() == [
        "0", "1", "2", "3"]


def test_ctrl_c_in_an_endless_hook_exits_130(gpu, tmp_path):
    """With the watchdog armed (a long limit) Ctrl-C still interrupts the hook at once."""
    scene = spinning_scene(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.Popen([sys.executable, "-m", "emberfx", "render", str(scene), "--frames",
                             "4", "--out", "out.png", "--script-timeout", "120"], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    looping = tmp_path / "scripts" / "spin.py.looping"
    try:
        deadline = time.monotonic() + 240
        while not looping.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert looping.exists(), proc.communicate(timeout=30)
        time.sleep(0.3)                      # well inside the endless loop
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.rstrip().splitlines()[-1] == "emberfx: interrupted"
    assert "script error" not in err and "Traceback" not in err
    assert not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_a_bad_script_timeout_is_a_usage_error(tmp_path, value):
    scene = make_scene(tmp_path)
    r = emberfx("render", scene, "--frames", 1, "--out", "out.png", "--script-timeout", value,
                cwd=tmp_path)
    assert r.returncode == 2
    assert error_lines(r.stderr) == [(f"emberfx: error: argument --script-timeout: expected a "
                                      f"number of seconds >= 0 (0: no limit), got '{value}'")]
    assert markers(tmp_path) == []
