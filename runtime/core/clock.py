"""The fixed-timestep clock: simulation always advances in steps of ``fixed_dt`` seconds.

Interactive mode feeds real frame times into an accumulator and runs as many whole steps as have
accumulated, capped so that a slow frame cannot snowball into ever more steps ("spiral of death").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FixedClock:
    fixed_dt: float
    max_steps_per_frame: int = 8
    accumulator: float = 0.0
    steps: int = 0          # steps taken since the start
    paused: bool = False

    @property
    def time(self) -> float:
        """Simulated seconds (exact multiple of fixed_dt)."""
        return self.steps * self.fixed_dt

    def advance(self, real_dt: float) -> int:
        """How many fixed steps to run for ``real_dt`` seconds of wall-clock time."""
        if self.paused or real_dt <= 0.0:
            return 0
        self.accumulator += real_dt
        n = int(self.accumulator // self.fixed_dt)
        if n > self.max_steps_per_frame:
            n = self.max_steps_per_frame
            self.accumulator = 0.0  # drop the backlog rather than fall further behind
        else:
            self.accumulator -= n * self.fixed_dt
        return n

    def tick(self, n: int = 1) -> None:
        self.steps += n

    @property
    def alpha(self) -> float:
        """Fraction of a step accumulated but not yet simulated (for interpolation)."""
        return self.accumulator / self.fixed_dt
