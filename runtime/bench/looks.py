"""``emberfx bench looks``: what drawing particles costs per look, at 1M particles (a GPU) or
64k (a software adapter) and 1920x1080: milliseconds per frame of the draw-side passes (RENDER,
PREPARE and POST: depth keys, sorting, the draws) for today's dot sprites and each look, and the
ratio to the dot sprites measured in the same run. Every look is drawn with the default
``[render] msaa = 4``; the lit mesh cubes are drawn once more with ``msaa = 1``, and their 4x
row gives the ratio to that one (what anti-aliasing costs where it costs most: a million small
meshes, every edge resolved)."""

from __future__ import annotations

from emberfx.bench.harness import output_texture, timed
from emberfx.core.errors import EmberError

SCENE = """
[scene]
name = "looks"
seed = 5
[render]
msaa = {msaa}
[camera]
kind = "perspective"
position = [0.0, 0.0, 6.0]
target = [0.0, 0.0, 0.0]
fov_deg = 50.0
[[entity]]
name = "cloud"
[entity.emitter]
capacity = {capacity}
rate = 0.0
bursts = [{{ time = 0.0, count = {capacity} }}]
lifetime = 1000.0
speed = [0.5, 1.5]
spread_deg = 180.0
gravity = [0.0, 0.0, 0.0]
shape = {{ kind = "sphere", radius = 2.0 }}
size = 0.02
{look}
"""

LOOKS = {
    "dot sprites": "",
    "textured sprites (spark)": 'texture = "spark"',
    "velocity-aligned sprites": 'align = "velocity"\nstretch = 0.05',
    "mesh cubes": 'mesh = "cube"',
    "flipbook sprites (8x8, interpolated)":
        'texture = "smoke"\nflipbook = { columns = 8, rows = 8, interpolate = true }',
    "soft sprites (soft = 0.3)": 'soft = 0.3',
}
ANTI_ALIASED = "mesh cubes"
"""the look drawn at msaa = 1 too, for anti-aliasing's cost"""


def bench_looks() -> list[dict]:
    from emberfx.core.frame_graph import DRAWING_PHASES, Phase
    from emberfx.core.gpu import get_context
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    ctx = get_context()
    capacity = 1 << (16 if ctx.is_software else 20)
    iterations = 3 if ctx.is_software else 50
    phases = set(DRAWING_PHASES) | {Phase.PREPARE}
    rows: list[dict] = []
    base = None
    one_sample = None   # the anti-aliased look's seconds at msaa = 1
    runs = [(name, look, 4) for name, look in LOOKS.items()]
    runs.insert(list(LOOKS).index(ANTI_ALIASED), (ANTI_ALIASED, LOOKS[ANTI_ALIASED], 1))
    for name, look, msaa in runs:
        label = f"{name}{', msaa = 1' if msaa == 1 else ''}, {capacity >> 10}k particles, 1920x1080"
        try:
            engine = Engine(loads_scene(SCENE.format(capacity=capacity, look=look, msaa=msaa),
                                        path="<bench>"), size=(1920, 1080))
        except EmberError as exc:   # a look this build or device does not have: say so
            rows.append({"name": label, "value": None, "unit": "skipped", "note": str(exc)})
            continue
        with engine:
            engine.step(2)   # every slot born and moving
            seconds = draw_seconds(ctx, engine, phases, iterations)
        base = seconds if base is None else base
        row = {"name": label, "value": seconds * 1e3, "unit": "ms per frame",
               "vs_dot_sprites": seconds / base}
        if name == ANTI_ALIASED and msaa == 1:
            one_sample = seconds
        elif name == ANTI_ALIASED and one_sample is not None:
            row["vs_msaa_1"] = seconds / one_sample
        rows.append(row)
    return rows


def draw_seconds(ctx, engine, phases, iterations: int) -> float:
    """Seconds per frame of ``engine``'s passes in ``phases``, encoded into a 1920x1080 target
    (wall time: lavapipe's timestamps around render passes came back far too small)."""
    output = output_texture(engine)
    try:
        return timed(ctx.device, lambda enc: engine.encode(enc, output, phases=phases),
                     iterations, timestamps=False)
    finally:
        output.destroy()
