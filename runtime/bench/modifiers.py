"""``emberfx bench modifiers``: what programmable particles cost. The update pass of a
steady-state pool at 16M particles (1M on a software adapter): built in, with a 10-line WGSL
`update` modifier, and with that modifier reading and writing 4 and 16 bytes of custom
attributes; each row's ratio is against the built-in row of the same run, and the attribute rows
give the extra cost per 4 bytes."""

from __future__ import annotations

import tempfile
from pathlib import Path

from emberfx.bench.harness import timed_passes
from emberfx.core.errors import EmberError

SWIRL = """// the bench's 10-line modifier: a swirl about the emitter's axis, a pull, a speed limit
fn update(p: ptr<function, ParticleState>, ctx: ModifierContext) {{
    let r = (*p).position - ctx.origin;
    let swirl = vec3f(-r.z, 0.0, r.x) * 1.5;
    (*p).velocity += (swirl - 0.2 * r) * ctx.dt;
    let speed = length((*p).velocity);
    if (speed > 8.0) {{
        (*p).velocity *= 8.0 / speed;
    }}
    {attribute}
}}
"""
CASES = {   # name -> (attributes table, the modifier's use of them)
    "built-in update": (None, None),
    "10-line modifier": ("{}", ""),
    "10-line modifier + 4 bytes of attributes": ('{ heat = "f32" }',
                                                 "(*p).heat = (*p).heat * 0.9 + speed * ctx.dt;"),
    "10-line modifier + 16 bytes of attributes": (
        '{ tint = "vec4f" }', "(*p).tint = (*p).tint * 0.9 + vec4f(speed * ctx.dt);"),
}
SCENE = """
[scene]
name = "bench modifiers"
size = [64, 64]
[[entity]]
name = "bench"
[entity.emitter]
capacity = {capacity}
rate = {rate}
lifetime = [1.0, 3.0]
speed = [2.0, 5.0]
drag = 0.2
{extra}
"""


def bench_modifiers() -> list[dict]:
    from emberfx.core.gpu import get_context

    ctx = get_context()
    capacity = 1 << (20 if ctx.is_software else 24)
    iterations = 5 if ctx.is_software else 200
    rows: list[dict] = []
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="emberfx-bench-") as folder:
        for name, (attributes, use) in CASES.items():
            label = f"update pass, {name} ({capacity >> 20}M)"
            extra = ""
            if attributes is not None:
                Path(folder, f"case{len(seconds)}.wgsl").write_text(SWIRL.format(attribute=use))
                extra = f'update = "case{len(seconds)}.wgsl"\nattributes = {attributes}'
            try:
                seconds[name] = update_seconds(ctx, Path(folder), capacity, extra, iterations,
                                               len(seconds))
            except EmberError as exc:   # beyond this device's limits: say so, keep going
                rows.append({"name": label, "value": None, "unit": "skipped", "note": str(exc)})
                continue
            row = {"name": label, "value": capacity / seconds[name] / 1e9,
                   "unit": "G particle-steps/s", "ms": seconds[name] * 1e3}
            base = seconds.get("built-in update")
            if base is not None:
                row["vs_built_in"] = seconds[name] / base
            rows.append(row)
    modifier = seconds.get("10-line modifier")
    for name, size in (("10-line modifier + 4 bytes of attributes", 4),
                       ("10-line modifier + 16 bytes of attributes", 16)):
        if modifier is not None and name in seconds:
            per_4_bytes = (seconds[name] - modifier) * 4 / size
            rows.append({"name": f"  cost per 4 bytes of attribute (from the {size}-byte row)",
                         "value": per_4_bytes / capacity * 1e12, "unit": "ps per particle-step",
                         "ms_per_4_bytes": per_4_bytes * 1e3})
    return rows


def update_seconds(ctx, folder: Path, capacity: int, extra: str, iterations: int,
                   index: int) -> float:
    """Seconds of the update pass of a pool near its steady state (90% alive); a zero timestep
    keeps it alive while the pass runs the same instructions (as emberfx bench emitter does)."""
    from emberfx.core.system import StepInfo
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import load_scene

    path = folder / f"case{index}.toml"
    path.write_text(SCENE.format(capacity=capacity, rate=0.9 * capacity / 2.0, extra=extra))
    with Engine(load_scene(path), size=(64, 64)) as engine:
        engine.step(150 if not ctx.is_software else 40)
        update = [p for p in engine.frame_passes() if p.name.endswith(":emitter:update")]
        engine.system_of("bench", "emitter").before_step(
            StepInfo(frame=engine.clock.steps, dt=0.0, seed=engine.scene.settings.seed))
        return timed_passes(ctx.device, update, iterations)
