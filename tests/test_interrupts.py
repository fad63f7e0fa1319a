"""Ctrl-C stops cleanly: at a safe point between frames, exit status 130, no file, no temp file,
and closing never hangs on a GPU map whose callback a Ctrl-C cut short.

The signal tests raise a real SIGINT in this process (``signal.raise_signal``); the CLI tests
send one to a ``python -m emberfx render`` subprocess at several moments of its render.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from emberfx.app.output import render_to_file
from emberfx.engine import interrupts

ROOT = Path(__file__).resolve().parent.parent
FOUNTAIN = ROOT / "scenes" / "fountain.toml"


def ctrl_c() -> None:
    """A real SIGINT to this process; its Python handler runs before this returns."""
    signal.raise_signal(signal.SIGINT)


# ---------------------------------------------------------------------------- interrupts module

def test_deferred_records_ctrl_c_and_raises_it_at_check():
    reached, before = [], signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            ctrl_c()
            reached.append("after the signal")   # not raised here: it is only recorded
            interrupts.check()
            reached.append("after check")
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is before   # the handler is restored


def test_deferred_raises_a_pending_ctrl_c_on_the_way_out():
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            ctrl_c()
    interrupts.check()   # raised once: nothing is left pending


def test_an_error_leaving_the_block_is_not_followed_by_a_second_interrupt():
    with pytest.raises(ValueError):
        with interrupts.deferred():
            ctrl_c()
            raise ValueError("the frame failed")
    interrupts.check()   # the recorded Ctrl-C went out with the error


def test_second_ctrl_c_raises_at_once_and_is_not_lost_when_swallowed():
    """A cffi callback prints and drops an exception raised inside it: the next check() must
    still stop the loop."""
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            ctrl_c()
            try:
                ctrl_c()   # the second one raises immediately
            except KeyboardInterrupt:
                swallowed = True   # as a cffi callback would
            assert swallowed
            interrupts.check()
            pytest.fail("check() did not raise the swallowed Ctrl-C")


def test_immediate_raises_at_once_and_a_swallowed_one_still_stops_the_loop():
    """A script hook that catches KeyboardInterrupt cannot make the frame loop go on."""
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred():
            with pytest.raises(KeyboardInterrupt):
                with interrupts.immediate():
                    ctrl_c()
                    pytest.fail("immediate() did not raise at once")
            interrupts.check()
            pytest.fail("check() did not raise the swallowed Ctrl-C")


def test_first_ctrl_c_prints_the_notice(capfd):
    with pytest.raises(KeyboardInterrupt):
        with interrupts.deferred(notice="stopping after this frame"):
            ctrl_c()
            interrupts.check()
    assert capfd.readouterr().err == "emberfx: stopping after this frame\n"


def test_an_ignored_sigint_stays_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts.deferred():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            ctrl_c()
            interrupts.check()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_check_is_a_no_op_off_the_main_thread():
    errors = []

    def worker():
        try:
            with interrupts.deferred():
                interrupts.check()
        except BaseException as exc:  # noqa: BLE001 - the test reports whatever escaped
            errors.append(exc)

    with interrupts.deferred():
        ctrl_c()
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert errors == []
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()   # still pending for the main thread


class CountingEngine:
    """Enough Engine for render_to_file; ``ctrl_c_at`` sends SIGINT inside that step."""

    def __init__(self, ctrl_c_at: int, size=(48, 32)):
        self.size, self.ctrl_c_at, self.steps, self.renders = size, ctrl_c_at, 0, 0
        self.scene = SimpleNamespace(settings=SimpleNamespace(fixed_dt=1 / 30, name="count"))

    def step(self, frames=1):
        self.steps += frames
        if self.steps == self.ctrl_c_at:
            ctrl_c()

    def render(self):
        self.renders += 1
        img = np.full((self.size[1], self.size[0], 4), 255, np.uint8)
        img[..., 0] = (self.steps * 17) % 256
        return img


@pytest.mark.parametrize("ext", [".mp4", ".gif", ".png"])
@pytest.mark.parametrize("at", [1, 4])
def test_render_to_file_finishes_the_frame_then_stops_with_no_file(tmp_path, ext, at):
    engine = CountingEngine(ctrl_c_at=at)
    with pytest.raises(KeyboardInterrupt):
        render_to_file(engine, 10, tmp_path / f"clip{ext}", progress=False)
    assert engine.steps == at                       # the step in progress ran to its end
    assert engine.renders == (at if ext != ".png" else 0)   # png renders only the last frame
    assert os.listdir(tmp_path) == []


def test_ctrl_c_while_the_video_is_finished_leaves_no_file(tmp_path, monkeypatch):
    """The encoder's finish is no safe point, but the rename after it checks again."""
    from emberfx.app import video

    finish = video.FfmpegPipe.finish

    def finish_then_ctrl_c(self):
        finish(self)
        ctrl_c()

    monkeypatch.setattr(video.FfmpegPipe, "finish", finish_then_ctrl_c)
    engine = CountingEngine(ctrl_c_at=-1)
    with pytest.raises(KeyboardInterrupt):
        render_to_file(engine, 3, tmp_path / "clip.mp4", progress=False)
    assert engine.steps == 3 and os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------- maps cut short

@pytest.fixture
def cut_short(monkeypatch):
    """Make the next buffer-map callback raise KeyboardInterrupt where a Ctrl-C could land: before
    it releases wgpu's poll token ("token"), or before it hands the promise its result
    ("result"). cffi prints "Exception ignored" and the map never settles."""
    from wgpu.backends.wgpu_native import _api, _poller

    # As Python's default hook does, report and drop the exception: a hook that keeps its
    # traceback (pytest's does, until the test ends) keeps the callback's poll token alive.
    ignored = []
    monkeypatch.setattr(sys, "unraisablehook",
                        lambda unraisable: ignored.append(unraisable.exc_type.__name__))

    def arm(where: str):
        cls, name = {"token": (_poller.PollToken, "set_done"),
                     "result": (_api.GPUPromise, "_wgpu_set_input")}[where]
        original, hits = getattr(cls, name), list[str]()

        def interrupted(self, *args):
            if not hits:
                hits.append(where)
                del self, args   # the traceback must not keep the token or promise alive
                raise KeyboardInterrupt
            return original(self, *args)

        monkeypatch.setattr(cls, name, interrupted)
        return hits

    return arm


def wait_for(predicate, seconds=30.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


class Hung(Exception):
    pass


def closes_within(close, seconds: int = 60) -> bool:
    """Call ``close`` on this thread (an Engine belongs to its thread); False when it is still
    running after ``seconds``: a hang, which SIGALRM breaks (lock waits are interruptible)."""
    def alarm(signum, frame):
        raise Hung

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        close()
        return True
    except Hung:
        return False
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("where", ["token", "result"])
def test_ring_drain_abandons_a_map_whose_callback_was_cut_short(gpu, cut_short, where):
    import wgpu

    from emberfx.core.readback import ReadbackRing

    poller = gpu.device._poller
    ring = ReadbackRing(gpu.device, 64)
    source = gpu.device.create_buffer(size=64, usage=wgpu.BufferUsage.COPY_SRC)
    hits = cut_short(where)
    slot = ring.acquire()
    encoder = gpu.device.create_command_encoder()
    encoder.copy_buffer_to_buffer(source, 0, slot.buffer, 0, 64)
    gpu.device.queue.submit([encoder.finish()])
    ring.submitted(slot, frame=0)
    assert wait_for(lambda: hits == [where]), "the map callback never ran"
    assert slot.promise._state == "pending"            # the cut-short map never settles
    assert closes_within(lambda: ring.drain(timeout=0.5))
    assert ring.abandoned == 1 and slot.promise is None
    del slot
    gc.collect()
    # Nothing keeps wgpu's poll thread busy (it polls without pause while a token is live).
    assert wait_for(lambda: not poller._token_ids), poller._token_ids


@pytest.mark.parametrize("where", ["token", "result"])
def test_engine_close_does_not_hang_on_a_cut_short_readback(gpu, cut_short, where):
    from emberfx.core.readback import _settled
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import load_scene

    engine = Engine(load_scene(FOUNTAIN), size=(64, 36))
    engine.step(2)                      # the first readbacks complete normally
    slots = engine._telemetry.ring.slots
    assert wait_for(lambda: all(s.promise is None or _settled(s.promise) for s in slots))
    hits = cut_short(where)
    engine.step(1)                      # this step's readback map is cut short
    assert wait_for(lambda: hits == [where])
    newest = max(slots, key=lambda s: s.frame)
    assert newest.promise is not None and newest.promise._state == "pending"
    assert closes_within(engine.close)
    gc.collect()
    assert wait_for(lambda: not gpu.device._poller._token_ids)


# ---------------------------------------------------------------------------- the CLI, for real

def start_render(folder: Path, frames: int = 5000) -> tuple[subprocess.Popen, list[str]]:
    """``emberfx render`` of a long MP4, returned once its first frame is done (its plain
    progress line off a terminal says so)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "emberfx", "render", str(FOUNTAIN), "--frames", str(frames),
         "--out", "clip.mp4", "--size", "160x90"],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    assert proc.stderr is not None   # opened with PIPE
    for line in proc.stderr:
        lines.append(line)
        if "clip.mp4: frame 1/" in line:
            return proc, lines
    proc.wait()
    pytest.fail(f"the render did not start: {''.join(lines)}")


def finish(proc, lines) -> tuple[int, str]:
    _out, rest = proc.communicate(timeout=120)
    return proc.returncode, "".join(lines) + rest


@pytest.mark.parametrize("delay", [0.0, 0.15, 0.6, 1.5])
def test_ctrl_c_during_render_exits_130_and_leaves_nothing(tmp_path, gpu, delay):
    proc, lines = start_render(tmp_path)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc, lines)
    assert code == 130, err
    assert err.rstrip().endswith("emberfx: interrupted")
    assert "Traceback" not in err and "Exception ignored" not in err
    assert os.listdir(tmp_path) == []          # no clip.mp4, no .clip.*.tmp.mp4


def test_two_quick_ctrl_c_exit_130_and_leave_nothing(tmp_path, gpu):
    proc, lines = start_render(tmp_path)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc, lines)
    assert code == 130, err
    assert "Traceback" not in err
    assert os.listdir(tmp_path) == []


def test_a_signal_raised_in_a_weakref_callback_stays_pending_and_prints_nothing(capfd):
    """The garbage collector runs weakref callbacks and __del__ where an exception cannot
    propagate: Python prints "Exception ignored in ..." and drops it. Inside a command the
    signal is kept for the next check() instead, and nothing is printed."""
    import weakref

    from emberfx.engine import interrupts

    class Thing:
        pass

    def callback(_ref):
        raise KeyboardInterrupt

    with interrupts.command():
        thing = Thing()
        ref = weakref.ref(thing, callback)
        del thing   # the callback runs here, and its KeyboardInterrupt goes nowhere
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()
    assert ref() is None
    err = capfd.readouterr().err
    assert "Exception ignored" not in err and "Traceback" not in err, err
