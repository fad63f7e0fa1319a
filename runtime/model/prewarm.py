"""The ``prewarm`` field's bound, shared by the families that simulate ahead of their first frame
(particle_life, cloth, life; the emitter's component words the same check itself).

A prewarm is fixed steps run when the entity is created, before the first frame is shown; its
cost grows with the seconds and with the entity's size, so the bound is on work (size x steps), not
on seconds alone, and is checked without a GPU so that ``emberfx validate`` refuses what the engine
would. Kept apart from the GPU side (emberfx.core.step_batches).
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from emberfx.core.errors import SceneError

MAX_PREWARM_SECONDS = 60.0
PrewarmSeconds = Annotated[float, msgspec.Meta(ge=0.0, le=MAX_PREWARM_SECONDS)]


def prewarm_steps(prewarm: float, fixed_dt: float) -> int:
    """Fixed steps a prewarm of ``prewarm`` seconds takes (the component does not know the
    scene's timestep, so it is passed in)."""
    return round(prewarm / fixed_dt)


def prewarm_problem(prewarm: float, fixed_dt: float, *, per_step: int, per_step_text: str,
                    measure: str, limit: int, unit: str) -> tuple[str, str] | None:
    """("prewarm", why) when a prewarm is too much work, why being one line with the numbers;
    None if it is not (a component's ``timestep_problem`` answer).

    ``per_step``: work units of one step (e.g. particles); ``per_step_text``: how the entity
    makes that number ("20,000 particles"); ``measure``: what the bound multiplies ("count");
    ``limit`` and ``unit``: the bound ("particle-steps")."""
    steps = prewarm_steps(prewarm, fixed_dt)
    work = per_step * steps
    if work <= limit:
        return None
    longest = (limit // per_step) * fixed_dt
    return ("prewarm", f"expected {measure} x prewarm steps <= {limit:,} {unit}, found "
                       f"{per_step_text} x {steps:,} steps ({prewarm:g} s at fixed_dt {fixed_dt:g} "
                       f"s) = {work:,}; with this {measure} prewarm at most {longest:.3g} s")


def check_timestep(component, key: str, fixed_dt: float, scene_path, entity: str) -> None:
    """Raise the SceneError the scene loader would for ``component.timestep_problem``: a system
    checks again in add() for entities made without the loader (spawned, built in code)."""
    problem = component.timestep_problem(fixed_dt)
    if problem is not None:
        field, message = problem
        raise SceneError(scene_path, message, entity=entity, field=f"{key}.{field}")
