"""Scripts that fight the frame loop: a hook that swallows every interruption in a loop, a script
that leaves a thread running, hooks that are no functions or are async. Each ends in one reported
line and a frame loop (and a command) that finishes, through ``emberfx render`` as a user runs it
where the command is the matter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from emberfx.engine.scripting import Script

SWALLOWERS = {
    "a loop around a try": """
        def hook():
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
    """,
    "continue in the handler": """
        def hook():
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    continue
    """,
    "two nested tries": """
        def hook():
            while True:
                try:
                    while True:
                        try:
                            while True:
                                pass
                        except BaseException:
                            pass
                except BaseException:
                    pass
    """,
    "contextlib.suppress in a loop": """
        import contextlib
        def hook():
            while True:
                with contextlib.suppress(BaseException):
                    while True:
                        pass
    """,
    "a finally that loops again": """
        def hook():
            while True:
                try:
                    while True:
                        pass
                finally:
                    continue
    """,
    "a handler that turns tracing off": """
        import sys
        def hook():
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    sys.settrace(None)
    """,
}


@pytest.mark.parametrize("name", SWALLOWERS)
def test_a_hook_that_swallows_every_timeout_is_stopped_within_its_limit(tmp_path, capsys, name):
    """The watchdog's limit is 0.3 s; the hook must end well before the second refire (1 s), and
    the thread's trace function is the one it had before."""
    path = tmp_path / "swallow.py"
    path.write_text(textwrap.dedent(SWALLOWERS[name]))
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    script = Script(path, context=None, label="scene", timeout=0.3)  # type: ignore[arg-type]
    before = sys.gettrace()
    start = time.perf_counter()
    assert script.run_user_code("on_update", namespace["hook"]) is None
    assert time.perf_counter() - start < 0.9
    assert sys.gettrace() is before
    [line] = [ln for ln in capsys.readouterr().err.splitlines() if "script error" in ln]
    assert f"{path} (scene, on_update); " in line and "0.3 s" in line
    assert line.endswith("the script is skipped until its file changes, the loop keeps running")
    total = sum(range(100_000))   # nothing is left pending for the caller's own code
    assert total == 4_999_950_000


def test_a_hook_that_returns_in_time_leaves_no_trace(tmp_path):
    path = tmp_path / "quick.py"
    path.write_text("def hook():\n    return sum(range(1000))\n")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    script = Script(path, context=None, label="scene", timeout=0.5)  # type: ignore[arg-type]
    before = sys.gettrace()
    for _ in range(200):
        assert script.run_user_code("on_update", namespace["hook"]) == 499500
    assert sys.gettrace() is before and script.errors == 0


SCENE = """
[scene]
script = "hooks.py"
size = [48, 32]
[camera]
kind = "orthographic"
[[entity]]
name = "jet"
[entity.emitter]
capacity = 64
rate = 100.0
"""


def render(folder: Path, hooks: str, *extra: str, timeout: float = 180):
    (folder / "hooks.py").write_text(textwrap.dedent(hooks))
    (folder / "scene.toml").write_text(SCENE)
    out = folder / "out.png"
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "emberfx", "render", str(folder / "scene.toml"),
                           "--frames", "3", "--out", str(out), *extra],
                          capture_output=True, text=True, timeout=timeout)
    return done, out, time.monotonic() - start


def script_errors(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("emberfx: script error")]


def test_render_stops_a_swallowing_hook_and_finishes(gpu, tmp_path):
    done, out, _ = render(tmp_path, """
        def on_update(ctx, dt):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
    """, "--script-timeout", "1")
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0
    [line] = script_errors(done.stderr)
    assert "(scene, on_update); " in line and "1 s" in line
    assert "Traceback" not in done.stderr


def test_render_exits_although_a_script_left_a_thread_running(gpu, tmp_path):
    done, out, seconds = render(tmp_path, """
        import threading
        import time
        def forever():
            while True:
                time.sleep(0.05)
        def on_start(ctx):
            threading.Thread(target=forever, name="script-worker").start()
    """, timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0
    assert ("emberfx: note: 1 thread that a script started still runs ('script-worker'); "
            "exiting without waiting for it") in done.stderr.splitlines()
    assert f"wrote {out}" in done.stdout


@pytest.mark.parametrize("hooks, expected", [
    ("on_update = 5\n",
     "on_update: expected a function on_update(ctx, dt), found 5 (int)"),
    ("async def on_update(ctx, dt):\n    ctx.self\n",
     "on_update: expected a plain def on_update(ctx, dt), found an async def: hooks are called "
     "and never awaited or iterated, so its body would never run"),
    ("def on_update(ctx, dt):\n    yield\n",
     "on_update: expected a plain def on_update(ctx, dt), found a generator function (it "
     "yields)"),
    ("on_start = print\non_update = 'spin'\n",
     "on_update: expected a function on_update(ctx, dt), found 'spin' (str)"),
])
def test_a_hook_that_cannot_run_is_one_line_and_the_render_finishes(gpu, tmp_path, hooks,
                                                                     expected):
    done, out, _ = render(tmp_path, hooks)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0
    [line] = script_errors(done.stderr)
    assert line.startswith(f"emberfx: script error: {tmp_path / 'hooks.py'}: {expected}")
    assert line.endswith("the hook is skipped until the file changes, the loop keeps running")
    assert "Traceback" not in done.stderr and "RuntimeWarning" not in done.stderr


def test_a_hook_returning_a_coroutine_is_reported_once(gpu, tmp_path):
    done, out, _ = render(tmp_path, """
        class Later:
            async def __call__(self, ctx, dt):
                ctx.self
        on_update = Later()
    """)
    assert done.returncode == 0, done.stderr
    [line] = script_errors(done.stderr)
    assert "(scene, on_update); on_update returned coroutine to await" in line, line
    assert "RuntimeWarning" not in done.stderr
