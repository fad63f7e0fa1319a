"""What scripts can do with emitters: ``ctx.burst(emitter, count)``."""

from __future__ import annotations

import numbers

import numpy as np

from emberfx.core.errors import EmberError
from emberfx.model.registry import script_action


@script_action("burst")
def burst(engine, emitter: str, count: int) -> None:
    """`count` extra births for that emitter on the next step (on top of its rate): a whole
    number from 0 to the emitter's capacity (more would not fit the pool)."""
    components = engine.components_of(emitter)
    call = f"ctx.burst({emitter!r}, {count!r})"
    if "emitter" not in components:
        raise EmberError(f"{call}: expected an entity with an emitter, found one with "
                         f"{', '.join(components) or 'no components'}")
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, numbers.Integral):
        raise EmberError(f"{call}: expected a whole number of particles, found "
                         f"{type(count).__name__}")
    capacity = components["emitter"].capacity
    if not 0 <= count <= capacity:
        raise EmberError(f"{call}: expected a count from 0 to {capacity:,} (the emitter's "
                         f"capacity), found {int(count):,}")
    engine.system_of(emitter, "emitter").burst(engine.entity_ref(emitter), int(count))
