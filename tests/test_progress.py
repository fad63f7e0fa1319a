"""The render progress reports the measured time a frame and an estimate made from it.

Off a terminal it prints plain lines; their "X s a frame" and "about Y s left" must agree with
the time the frames really took: with a fake clock exactly, and through the real CLI (frames
slowed by a script that sleeps) within a factor, against the clock of the test.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emberfx.app.output import PLAIN_PROGRESS_SECONDS, Progress

LINE = re.compile(r"emberfx: (?P<label>.+?): frame (?P<done>\d+)/(?P<total>\d+) \(\d+%\), "
                  r"(?P<elapsed>[\d.]+) s(?:, (?P<each>[\d.e-]+) s a frame)?"
                  r"(?:, about (?P<left>\d+) s left)?$")


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def parse(text: str) -> list[re.Match]:
    lines = [ln for ln in text.splitlines() if ": frame " in ln]
    matches = [LINE.fullmatch(ln) for ln in lines]
    assert all(matches), lines
    return [m for m in matches if m is not None]


def test_the_estimate_is_the_measured_time_a_frame_not_the_first_frame():
    clock, stream = FakeClock(), io.StringIO()   # StringIO: not a terminal, plain lines
    first, each, total = 30.0, 0.5, 60   # the first frame compiles the shaders
    with Progress(total, "x.mp4", stream=stream, clock=clock) as progress:
        for done in range(1, total + 1):
            clock.now += first if done == 1 else each
            progress.update()
    lines = parse(stream.getvalue())
    assert lines[0]["done"] == "1" and lines[0]["each"] is None and lines[0]["left"] is None
    middle = [m for m in lines if m["left"] is not None]
    assert middle, "no line with an estimate"
    step = max(1, int(PLAIN_PROGRESS_SECONDS / each))
    assert [int(m["done"]) for m in middle] == list(range(1 + step, total, step))
    for m in middle:
        assert float(m["each"]) == pytest.approx(each)
        assert int(m["left"]) == round(each * (total - int(m["done"])))
    last = lines[-1]
    assert last["done"] == str(total) and last["left"] is None
    assert float(last["each"]) == pytest.approx(each)
    assert float(last["elapsed"]) == pytest.approx(first + each * (total - 1), abs=0.05)


def test_updates_of_several_frames_count_each_frame():
    clock, stream = FakeClock(), io.StringIO()
    with Progress(40, "export npz", stream=stream, clock=clock) as progress:
        for _ in range(10):
            clock.now += 4 * 2.0   # four frames at 2 s each, reported at once
            progress.update(4)
    for m in parse(stream.getvalue())[1:]:
        assert float(m["each"]) == pytest.approx(2.0)


SLOW_SCRIPT = """
import time


def on_update(ctx, dt):
    time.sleep({seconds})   # a frame takes at least this long
"""

SCENE = """\
[scene]
name = "Slow"
size = [64, 36]
script = "slow.py"

[[entity]]
name = "jet"
[entity.emitter]
capacity = 256
"""


def test_the_cli_progress_matches_the_time_frames_take(tmp_path):
    sleep, frames = 0.2, 40
    (tmp_path / "slow.py").write_text(SLOW_SCRIPT.format(seconds=sleep), encoding="utf-8")
    (tmp_path / "slow.toml").write_text(SCENE, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "emberfx", "render", "slow.toml", "--frames",
                             str(frames), "--out", "slow.gif"], cwd=tmp_path, text=True,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stderr is not None
    seen: list[tuple[float, str]] = []   # each stderr line and when the test read it
    for line in proc.stderr:
        seen.append((time.perf_counter(), line.rstrip("\n")))
    assert proc.wait(timeout=300) == 0, seen
    notices = [text for _, text in seen if "renders on the CPU" in text]
    assert not any(re.search(r"~?[\d.]+ s\b", text) for text in notices), notices  # no guess
    timed = [(when, m) for when, text in seen for m in parse(text)]
    (t1, m1), (tn, mn) = timed[0], timed[-1]
    assert m1["done"] == "1" and mn["done"] == str(frames)
    measured = (tn - t1) / (frames - 1)   # the test's own clock, from frame 1 to the last
    assert measured >= sleep
    assert measured / 1.5 <= float(mn["each"]) <= measured * 1.5, (measured, mn.group(0))
    middle = [(when, m) for when, m in timed if m["left"] is not None]
    assert middle, "the render took over PLAIN_PROGRESS_SECONDS but printed no estimate"
    for when, m in middle:
        actual = tn - when
        assert float(m["each"]) >= sleep
        assert actual / 1.5 - 1 <= int(m["left"]) <= actual * 1.5 + 1, (actual, m.group(0))
    assert (Path(tmp_path) / "slow.gif").is_file()
