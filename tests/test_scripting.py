"""Python scripts: hooks drive the scene headless; failures never stop the loop."""

from __future__ import annotations

import math
import os
import shutil
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.engine.script_watchdog import watchdog
from emberfx.engine.scripting import Script
from emberfx.model.scene import load_scene

DATA = Path(__file__).parent / "data"


def scene_with(tmp_path: Path, script: str, extra: str = "",
               entity_script: str | None = None) -> Engine:
    (tmp_path / "scripts").mkdir(exist_ok=True)
    shutil.copy(DATA / "scripts" / script, tmp_path / "scripts" / script)
    if entity_script:
        shutil.copy(DATA / "scripts" / entity_script, tmp_path / "scripts" / entity_script)
    text = f"""
[scene]
script = "scripts/{script}"
[camera]
kind = "orthographic"
[[entity]]
name = "jet"
{f'script = "scripts/{entity_script}"' if entity_script else ""}
[entity.emitter]
capacity = 2000
rate = 60.0
lifetime = 100.0
[[entity]]
name = "well"
[entity.attractor]
position = [0.0, 0.0, 0.0]
{extra}
"""
    path = tmp_path / "scene.toml"
    path.write_text(text)
    return Engine(load_scene(path), size=(32, 32))


def test_a_script_moves_the_attractor_along_its_path(gpu, tmp_path):
    engine = scene_with(tmp_path, "orbit.py")
    for step in range(1, 31):
        engine.step()
        t = step / 60.0
        expected = (2 * math.cos(2 * math.pi * t), 2 * math.sin(2 * math.pi * t), 0.0)
        np.testing.assert_allclose(engine.entity("well").attractor.position, expected, atol=1e-9)


def test_a_raising_script_leaves_the_loop_running(gpu, tmp_path, capsys):
    engine = scene_with(tmp_path, "raises.py")
    engine.step(10)                                     # raises from step 4 on
    err = capsys.readouterr().err
    assert "scripted failure" in err and "raises.py" in err and "Traceback" in err
    assert err.count("RuntimeError: scripted failure") == 1   # reported once, then skipped
    assert engine.clock.steps == 10
    assert engine.entity("jet").emitter.rate == 1800.0  # the last good update stays
    assert int(engine.state("jet")["alive"].sum()) > 0


def test_a_script_that_does_not_import_is_reported_and_the_scene_runs(gpu, tmp_path, capsys):
    engine = scene_with(tmp_path, "broken.py")
    engine.step(3)
    err = capsys.readouterr().err
    assert "broken.py" in err and "no_such_module_for_emberfx" in err
    assert int(engine.state("jet")["alive"].sum()) == 3


def test_a_hook_with_the_wrong_signature_is_reported(gpu, tmp_path, capsys):
    engine = scene_with(tmp_path, "wrong_signature.py")
    engine.step(2)
    err = capsys.readouterr().err
    assert "on_update must take (ctx, dt)" in err
    assert engine.entity("jet").emitter.rate == 60.0    # the bad hook never ran


def test_spawn_burst_event_and_delete_from_scripts(gpu, tmp_path):
    engine = scene_with(tmp_path, "orbit.py", entity_script="spawner.py")
    engine.step(1)
    assert engine.entity("late").attractor.strength == 2.0
    assert engine.entity("jet").emitter.size == 0.05   # on_event("ping") reached the entity script
    assert int(engine.state("jet")["alive"].sum()) == 251   # 1 from the rate + the burst of 250
    system = engine.system_of("jet", "emitter")
    strengths = lambda: sorted(f.strength for f in system.forces_on(system.pools["jet"]))  # noqa: E731
    assert strengths() == [1.0, 2.0]                   # the spawned attractor acts on the emitter
    engine.step(5)
    with pytest.raises(Exception, match="no entity named 'late'"):
        engine.entity("late")
    assert strengths() == [1.0]


def test_a_fixed_script_is_picked_up_again(gpu, tmp_path):
    engine = scene_with(tmp_path, "raises.py")
    engine.step(6)
    assert engine.entity("jet").emitter.rate == 1800.0
    script = tmp_path / "scripts" / "raises.py"
    script.write_text("def on_update(ctx, dt):\n    ctx.entity('jet').emitter.rate = 7.0\n")
    import os
    os.utime(script, (1e9, 1e9))                       # a new modification time
    engine.step(1)
    assert engine.entity("jet").emitter.rate == 7.0


def test_a_hook_gets_the_same_entity_view_while_its_entity_stays(gpu, tmp_path):
    """ctx.entity and ctx.self hand out the view they gave before while the name still names
    that entity; after a delete and a spawn of the same name the view reads the new entity,
    and after a delete alone the hook gets the engine's refusal, as without reuse."""
    engine = scene_with_code(tmp_path, """
        seen = []
        def on_update(ctx, dt):
            try:
                view = ctx.entity("blob")
                seen.append((view, view.attractor.strength))
            except Exception as exc:
                seen.append((None, str(exc)))
        """, entity_code="""
        selves = []
        def on_update(ctx, dt):
            selves.append(ctx.self)
        """)
    engine.spawn("blob", {"attractor": {"strength": 1.0}})
    engine.step(3)
    engine.delete("blob")
    engine.spawn("blob", {"attractor": {"strength": 2.0}})
    engine.step(2)
    engine.delete("blob")
    engine.step(1)
    scripts = engine.scripts.scripts
    seen = scripts[0].hooks["on_update"].__globals__["seen"]      # the scripts' module state
    selves = scripts[1].hooks["on_update"].__globals__["selves"]
    views = [view for view, _ in seen]
    assert [value for _, value in seen[:5]] == [1.0, 1.0, 1.0, 2.0, 2.0]
    assert views[0] is views[1] is views[2] and views[3] is views[4] and views[3] is not views[0]
    assert views[5] is None and "no entity named 'blob'" in seen[5][1]
    assert len(selves) == 6 and all(v is selves[0] for v in selves)
    assert selves[0].emitter is engine.entity("jet").emitter
    engine.close()


def test_a_missing_scene_script_is_a_scene_error(tmp_path):
    path = tmp_path / "scene.toml"
    path.write_text('[scene]\nscript = "scripts/nope.py"\n')
    with pytest.raises(SceneError, match="scene.script: expected an existing file"):
        load_scene(path)


# ---------------------------------------------------------------- failures that are not exceptions

def scene_with_code(tmp_path: Path, scene_code: str, entity_code: str | None = None,
                    **engine_options) -> Engine:
    """The scene of scene_with, its scripts given as source text."""
    (tmp_path / "scripts").mkdir(exist_ok=True)
    (tmp_path / "scripts" / "scene_hooks.py").write_text(textwrap.dedent(scene_code))
    entity = ""
    if entity_code is not None:
        (tmp_path / "scripts" / "jet_hooks.py").write_text(textwrap.dedent(entity_code))
        entity = 'script = "scripts/jet_hooks.py"'
    path = tmp_path / "scene.toml"
    path.write_text(f"""
[scene]
script = "scripts/scene_hooks.py"
[camera]
kind = "orthographic"
[[entity]]
name = "jet"
{entity}
[entity.emitter]
capacity = 2000
rate = 60.0
lifetime = 100.0
""")
    return Engine(load_scene(path), size=(32, 32), **engine_options)


COUNTING = """
    steps = []
    def on_update(ctx, dt):
        steps.append(ctx.frame)
        ctx.self.emitter.size = 0.01 * len(steps)   # the oracle: one call per step
"""


def script_errors(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("emberfx: script error")]


def test_sys_exit_in_a_hook_is_reported_and_skips_the_script(gpu, tmp_path, capsys):
    engine = scene_with_code(tmp_path, """
        import sys
        def on_start(ctx):
            ctx.entity("jet").emitter.rate = 1.0
        def on_update(ctx, dt):
            if ctx.frame == 2:
                sys.exit(3)
            ctx.entity("jet").emitter.rate = 100.0 + ctx.frame
    """, COUNTING)
    engine.step(6)                                       # the process is still here
    [line] = script_errors(capsys.readouterr().err)
    assert line == (f"emberfx: script error in {tmp_path / 'scripts' / 'scene_hooks.py'} (scene, "
                    f"on_update); called sys.exit(3) at line 7; a script cannot end the program; "
                    f"the script is skipped until its file changes, the loop keeps running")
    assert engine.entity("jet").emitter.rate == 101.0    # its last update was at frame 1
    assert engine.entity("jet").emitter.size == pytest.approx(0.06)   # the other script: 6 steps


def test_sys_exit_while_a_script_is_imported_is_reported(gpu, tmp_path, capsys):
    engine = scene_with_code(tmp_path, "import sys\nsys.exit()\n", COUNTING)
    engine.step(2)
    [line] = script_errors(capsys.readouterr().err)
    assert "(scene, load); called sys.exit() at line 2; a script cannot end the program" in line
    assert engine.entity("jet").emitter.size == pytest.approx(0.02)


def test_an_event_that_re_emits_itself_is_reported_and_disabled(gpu, tmp_path, capsys):
    engine = scene_with_code(tmp_path, """
        def on_update(ctx, dt):
            ctx.emit("again", 0)
    """, """
        calls = []
        def on_event(ctx, name, data):
            calls.append(data)
            ctx.self.emitter.rate = float(len(calls))
            ctx.emit(name, data + 1)
    """)
    engine.step(3)
    err = capsys.readouterr().err
    [line] = script_errors(err)
    assert line == (f"emberfx: script error in {tmp_path / 'scripts' / 'jet_hooks.py'} (entity "
                    f"'jet', on_event); ctx.emit('again') from on_event nested 32 deep: its "
                    f"events keep re-emitting each other; on_event is skipped until the file "
                    f"changes, the loop keeps running")
    assert "RecursionError" not in err
    assert engine.entity("jet").emitter.rate == 32.0     # 32 nested calls, then none
    assert engine.clock.steps == 3


def test_an_endless_hook_is_stopped_and_its_script_skipped(gpu, tmp_path, capsys):
    engine = scene_with_code(tmp_path, """
        def on_update(ctx, dt):
            ctx.entity("jet").emitter.rate = 100.0 + ctx.frame
            if ctx.frame == 1:
                while True:
                    try:
                        pass
                    except Exception:      # cannot catch the timeout
                        pass
    """, COUNTING, script_timeout=1.0)
    engine.step(4)
    [line] = script_errors(capsys.readouterr().err)
    assert line.startswith(f"emberfx: script error in {tmp_path / 'scripts' / 'scene_hooks.py'} "
                           f"(scene, on_update); still running after 1 s at line ")
    assert engine.entity("jet").emitter.rate == 101.0
    assert engine.entity("jet").emitter.size == pytest.approx(0.04)   # the other script ran on


def test_an_endless_spawn_and_delete_loop_is_stopped_cleanly(gpu, tmp_path, capsys):
    """Whenever the hook is stopped, the entity it was working on exists whole or not at all,
    and the scene steps on."""
    engine = scene_with_code(tmp_path, """
        def on_update(ctx, dt):
            while ctx.frame == 1:
                ctx.spawn("flicker", attractor={"position": [0.0, 1.0, 0.0]})
                ctx.delete("flicker")
    """, script_timeout=1.0)
    engine.step(3)
    [line] = script_errors(capsys.readouterr().err)
    assert "(scene, on_update); still running after 1 s" in line
    system = engine.system_of("jet", "emitter")
    forces = len(system.forces_on(system.pools["jet"]))
    assert forces == (1 if "flicker" in engine.entity_names() else 0)
    assert int(engine.state("jet")["alive"].sum()) == 3


def test_a_timeout_is_charged_to_the_nested_hook_that_overran(gpu, tmp_path, capsys):
    """on_update emits an event whose on_event never returns: on_event's script is skipped,
    the emitting hook goes on."""
    engine = scene_with_code(tmp_path, """
        steps = []
        def on_update(ctx, dt):
            ctx.emit("spin")
            steps.append(ctx.frame)
            ctx.entity("jet").emitter.rate = float(len(steps))
    """, """
        def on_event(ctx, name, data):
            while True:
                pass
    """, script_timeout=1.0)
    engine.step(3)
    [line] = script_errors(capsys.readouterr().err)
    hook = f"{tmp_path / 'scripts' / 'jet_hooks.py'} (entity 'jet', on_event)"
    assert f"{hook}; still running after 1 s" in line
    assert engine.entity("jet").emitter.rate == 3.0


def test_a_hook_that_swallows_the_timeout_is_still_skipped(gpu, tmp_path, capsys):
    engine = scene_with_code(tmp_path, """
        def on_update(ctx, dt):
            ctx.entity("jet").emitter.rate = 100.0 + ctx.frame
            if ctx.frame == 1:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
    """, script_timeout=1.0)
    engine.step(3)
    [line] = script_errors(capsys.readouterr().err)
    assert "(scene, on_update); ran past the 1 s limit and caught the interruption" in line
    assert engine.entity("jet").emitter.rate == 101.0


def test_the_watchdog_reaches_an_engine_in_a_worker_thread(gpu, tmp_path, capsys):
    """Signals reach only the main thread; the watchdog's exception reaches this one too."""
    outcome = {}

    def work():
        try:
            engine = scene_with_code(tmp_path, """
                def on_update(ctx, dt):
                    ctx.entity("jet").emitter.rate = 100.0 + ctx.frame
                    while ctx.frame == 1:
                        pass
            """, COUNTING, script_timeout=1.0)
            engine.step(3)
            outcome["rate"] = engine.entity("jet").emitter.rate
            outcome["size"] = engine.entity("jet").emitter.size
            engine.close()
        except BaseException as exc:   # the test thread reports it
            outcome["error"] = exc

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "the worker's endless hook was never stopped"
    assert "error" not in outcome, outcome.get("error")
    assert outcome["rate"] == 101.0 and outcome["size"] == pytest.approx(0.03)
    [line] = script_errors(capsys.readouterr().err)
    assert "(scene, on_update); still running after 1 s" in line


def test_a_timeout_never_escapes_a_hook_that_returns_at_its_deadline(tmp_path, capsys):
    """Hooks that end just before, at and after their deadline: every timeout is either caught
    as that hook's or cancelled; none is raised later in the caller's code."""
    (tmp_path / "empty.py").write_text("")
    script = Script(tmp_path / "empty.py", context=None, label="scene", timeout=0.004)
    rng = np.random.default_rng(5)
    returned = 0
    for duration in rng.uniform(0.002, 0.006, size=400):
        def busy(duration=duration):
            end = time.perf_counter() + duration
            while time.perf_counter() < end:
                pass
            return True
        before = script.errors
        script.broken.clear()
        script.last_report.clear()
        if script.run_user_code("on_update", busy):
            returned += 1
        else:
            assert script.errors == before + 1      # reported as this hook's timeout
        total = 0
        for i in range(20000):                      # a stray exception would land here
            total += i
    assert 0 < returned < 400                        # both sides of the deadline were exercised


def test_a_timeout_waits_for_the_end_of_an_engine_call(tmp_path, capsys):
    """ctx.spawn and friends run shielded: a deadline that passes inside is raised on the way
    out, so an engine change is never cut in half."""
    (tmp_path / "empty.py").write_text("")
    script = Script(tmp_path / "empty.py", context=None, label="scene", timeout=0.2)
    reached = []

    def hook():
        with watchdog.shielded():
            end = time.perf_counter() + 0.6              # three times the limit
            while time.perf_counter() < end:
                pass
            reached.append("end of the engine call")
        reached.append("after it")

    assert script.run_user_code("on_update", hook) is None
    assert reached == ["end of the engine call"]
    [line] = script_errors(capsys.readouterr().err)
    assert "(scene, on_update); still running after 0.2 s" in line


def test_burst_counts_outside_the_pool_are_clear_errors(gpu, tmp_path, capsys):
    engine = scene_with_code(tmp_path, """
        def on_update(ctx, dt):
            count = {0: 10**12, 1: -1, 2: 2.5, 3: 40}[ctx.frame]
            ctx.burst("jet", count)
    """)
    for _ in range(3):
        engine.step(1)
        # a new modification time: the failed hook is tried again
        os.utime(tmp_path / "scripts" / "scene_hooks.py", (1e9 + engine.clock.steps,) * 2)
    engine.step(1)
    err = capsys.readouterr().err
    assert "OverflowError" not in err and "Traceback" not in err
    lines = script_errors(err)
    assert [ln.split("on_update); ")[1].split(" at line")[0] for ln in lines] == [
        ("ctx.burst('jet', 1000000000000): expected a count from 0 to 2,000 (the emitter's "
         "capacity), found 1,000,000,000,000"),
        ("ctx.burst('jet', -1): expected a count from 0 to 2,000 (the emitter's capacity), "
         "found -1"),
        "ctx.burst('jet', 2.5): expected a whole number of particles, found float"]
    # 4 steps at 60/s give 4 births; the one good burst adds 40
    assert int(engine.state("jet")["alive"].sum()) == 4 + 40
