"""How fast this CPU runs Python at the moment: a fixed workload timed in the measuring thread.

A CPU figure (a frame's milliseconds) is the engine's work times the speed of the core it ran on.
On a virtual machine that shares its host, that speed is not fixed. On the H200's host (a KVM
guest with 16 vCPUs) a loop of 200,000 additions took 6.3-7.4 ms on most vCPUs and 12-13.4 ms on
others within one minute, and a vCPU could change between the two from one minute to the next
(most likely as other guests loaded the physical cores beneath it). The showcase frame moved
with it: 1.4 against 2.2 ms. Timed around each round of a CPU benchmark, this reference says
which rounds ran at the fastest speed the run saw, and its absolute figure says whether that was
the host's full speed, so a change to the engine can be told from a change in the host."""

from __future__ import annotations

import time

REFERENCE_REPEATS = 5   # the reference's figure is the fastest of these
FULL_SPEED = 1.10       # a round runs at full speed when its reference is within 10% of the best


def reference_work() -> int:
    """The kind of Python a frame runs (dict reads and writes, attribute and method calls,
    small tuples), always the same amount of it."""
    table: dict[int, int] = {}
    total = 0
    for i in range(5000):
        key = i & 63
        table[key] = table.get(key, 0) + i
        total += len((key, i)) + key.bit_length()
    return total


def python_reference_ms(repeats: int = REFERENCE_REPEATS) -> float:
    """Milliseconds of the fixed workload in the calling thread, the fastest of ``repeats``."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        reference_work()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def full_speed_rounds(references: list[float], tolerance: float = FULL_SPEED) -> list[int]:
    """Indices of the rounds whose reference (ms, one per round) is within ``tolerance`` times
    the fastest: the rounds the host ran at its full speed, as far as this run saw it."""
    if not references:
        return []
    fastest = min(references)
    return [k for k, ms in enumerate(references) if ms <= fastest * tolerance]
