"""The bench's warm-up (runtime/bench/harness.py, ``warm_up``) against scripted submissions whose
speed follows the clock: on a hardware GPU it lasts until the speed stops rising, however long
past WARMUP_SECONDS that is (up to its cap); on a software adapter it lasts WARMUP_SECONDS.
The windows are shrunk so that each case takes a fraction of a second."""

from __future__ import annotations

import time

import pytest

from emberfx.bench import harness


@pytest.fixture
def short_windows(monkeypatch):
    monkeypatch.setattr(harness, "WARMUP_SECONDS", 0.05)
    monkeypatch.setattr(harness, "WARMUP_WINDOW", 0.02)
    monkeypatch.setattr(harness, "STEADY", 0.02)
    monkeypatch.setattr(harness, "WARMUP_MAX_SECONDS", 0.6)


def _ramp(ramp_seconds: float | None):
    """A submission of 2 ms whose reported seconds fall from 1.0 to 0.5 over ``ramp_seconds``
    (4% or more a 20 ms window, twice STEADY) and then stay; None: they never stop falling."""
    start = time.perf_counter()

    def submission() -> float:
        time.sleep(0.002)
        elapsed = time.perf_counter() - start
        if ramp_seconds is None:
            return 1.0 / (1.0 + 10 * elapsed)
        return max(0.5, 1.0 - 0.5 * elapsed / ramp_seconds)

    return submission


def _seconds_of(submission, hardware: bool) -> float:
    start = time.perf_counter()
    assert harness.warm_up(submission, hardware) >= 1
    return time.perf_counter() - start


def test_a_hardware_warm_up_lasts_until_the_speed_is_steady(short_windows):
    # a ramp of 0.25 s: five times WARMUP_SECONDS; it ends within two windows of the ramp's end
    seconds = _seconds_of(_ramp(0.25), hardware=True)
    assert 0.25 <= seconds <= 0.25 + 3 * harness.WARMUP_WINDOW + 0.15


def test_a_steady_hardware_warm_up_lasts_warmup_seconds(short_windows):
    seconds = _seconds_of(_ramp(1e-9), hardware=True)     # steady from the start
    assert harness.WARMUP_SECONDS <= seconds <= 0.25   # well before the ramp's case ends


def test_a_warm_up_that_never_settles_stops_at_its_cap(short_windows):
    seconds = _seconds_of(_ramp(None), hardware=True)
    assert harness.WARMUP_MAX_SECONDS <= seconds <= harness.WARMUP_MAX_SECONDS + 0.15


def test_a_software_warm_up_lasts_warmup_seconds_whatever_the_speed(short_windows):
    seconds = _seconds_of(_ramp(0.25), hardware=False)
    assert harness.WARMUP_SECONDS <= seconds <= 0.2   # well before the ramp ends


def test_one_submission_longer_than_the_warm_up_is_enough_on_software(short_windows):
    calls = []

    def slow() -> float:
        calls.append(1)
        time.sleep(0.08)
        return 0.08

    assert harness.warm_up(slow, hardware=False) == 1 and len(calls) == 1
