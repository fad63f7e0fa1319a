"""A numpy oracle for GPU events and sub-emitters, from emitter states read back before and
after one step (Engine.state). It shares nothing with the WGSL: it decides from ages, lifetimes
and positions which slots sent an event, and from the target's slots which are born and from
which event, by the rules the README states (lowest free slots first; the target's own budget
first, then `count` births per event, link after link; a link stores at most its quota)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def deaths(before: dict, after: dict) -> np.ndarray:
    """Slots alive before the step that died in it (a slot born again in the same step has
    age 0 after it: births come after every update)."""
    return before["alive"] & (~after["alive"] | (after["age"] == 0.0))


def survivors(before: dict, after: dict) -> np.ndarray:
    """Slots alive before the step and still alive (not born again) after it."""
    return before["alive"] & after["alive"] & (after["age"] > 0.0)


def age_events(before: dict, after: dict, every: float) -> np.ndarray:
    """Survivors whose age passed a whole multiple of ``every`` in the step, computed in f32 as
    the host packs the rate (1 / every) and the GPU multiplies (exactly rounded)."""
    rate = np.float32(1.0 / every)
    grew = (np.floor(after["age"].astype(np.float32) * rate)
            != np.floor(before["age"].astype(np.float32) * rate))
    return survivors(before, after) & grew


def born(after: dict) -> np.ndarray:
    """Slots born at the end of the step: alive with age exactly 0 (any update adds dt)."""
    return after["alive"] & (after["age"] == 0.0)


def free_before_births(after: dict) -> np.ndarray:
    """The target's free slots when its births were given: all but those alive after its
    update (alive after the step and not just born)."""
    return ~(after["alive"] & (after["age"] > 0.0))


@dataclass
class Link:
    events: np.ndarray   # the source's slots with an event of this kind, in slot order
    count: int          # births per event
    quota: int          # records the link may store


def quota(source_capacity: int, target_capacity: int, count: int) -> int:
    return min(source_capacity, -(-target_capacity // count))


def expected_births(free: np.ndarray, host_budget: int, links: list[Link]) -> np.ndarray:
    """The slots born in the target: the lowest free ones, as many as the host budget plus
    `count` per stored event ask for, or as there are free slots."""
    wanted = host_budget + sum(min(len(link.events), link.quota) * link.count for link in links)
    return np.flatnonzero(free)[:wanted]


def birth_parents(births: int, host_budget: int, links: list[Link]) -> list[tuple[int, int] | None]:
    """For each birth rank: None for the host's births, else (link index, parent slot)."""
    out: list[tuple[int, int] | None] = [None] * min(births, host_budget)
    for index, link in enumerate(links):
        stored = min(len(link.events), link.quota)
        for event in link.events[:stored]:
            out += [(index, int(event))] * link.count
    return out[:births]
