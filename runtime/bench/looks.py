"""``emberfx bench looks``: what drawing particles costs per look, at 1M particles (a GPU) or
64k (a software adapter) and 1920x1080: milliseconds per frame of the draw-side passes (RENDER,
PREPARE and POST: depth keys, sorting, the draws) for today's dot sprites and each look, and the
ratio to the dot sprites measured in the same run. Every look is drawn with the default
``[render] msaa = 4``; the lit mesh cubes are drawn once more with ``msaa = 1``, and their 4x
row gives the ratio to that one (what anti-aliasing costs where it costs most: a million small
meshes, every edge resolved).

Two light rows follow (``light_rows``): a lit floor filling the image under 256 point lights,
with its ratio to the same floor under 1 (the tiled light lists: runtime/core/point_lights.py),
and casting particles (the look's count, 200k-odd on a GPU: a 256k pool) over a floor with
``[light] shadows`` on, with its ratio to shadows off."""

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

FLOOR = """
[scene]
name = "lights"
seed = 5
[camera]
kind = "perspective"
position = [0.0, 6.0, 6.0]
target = [0.0, 0.0, 0.0]
fov_deg = 50.0
[light]
shadows = {shadows}
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
extent = 40.0
{entities}
"""
LAMPS = (1, 256)
"""point lights over the floor: a 16 x 16 grid of them, 0.8 world units apart, against one"""
CASTERS = """
[[entity]]
name = "dust"
[entity.emitter]
capacity = {capacity}
rate = 0.0
bursts = [{{ time = 0.0, count = {capacity} }}]
lifetime = 1000.0
speed = [0.1, 0.4]
spread_deg = 180.0
gravity = [0.0, 0.0, 0.0]
position = [0.0, 1.5, 0.0]
shape = {{ kind = "sphere", radius = 1.5 }}
size = 0.02
blend = "alpha"
alpha_curve = [0.3]
cast_shadows = true
"""


def lamps(count: int) -> str:
    """``count`` point lights (1, or a square number) on a grid over the floor."""
    side = round(count ** 0.5)
    text = ""
    for k in range(count):
        x, z = (k % side - (side - 1) / 2) * 0.8, (k // side - (side - 1) / 2) * 0.8
        text += (f'[[entity]]\nname = "lamp{k}"\n[entity.point_light]\n'
                 f'position = [{x}, 0.6, {z}]\ncolor = "#ffd9a8"\nintensity = 0.2\n'
                 f'range = 1.6\n')
    return text


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
    return rows + light_rows(ctx, capacity // 4 if ctx.is_software else 1 << 18, phases,
                             iterations)


def light_rows(ctx, casters: int, phases, iterations: int) -> list[dict]:
    """The point-light rows (1 and 256 lights over a floor) and the shadow rows (``casters``
    casting particles, shadows off and on), each at 1920x1080."""
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    runs = [(f"lit floor, {n} point light{'s' if n > 1 else ''}, 1920x1080",
             FLOOR.format(shadows="false", entities=lamps(n))) for n in LAMPS]
    runs += [(f"{casters >> 10}k casting particles, shadows {state}, 1920x1080",
              FLOOR.format(shadows=flag, entities=CASTERS.format(capacity=casters)))
             for state, flag in (("off", "false"), ("on", "true"))]
    rows: list[dict] = []
    for k, (label, text) in enumerate(runs):
        with Engine(loads_scene(text, path="<bench>"), size=(1920, 1080)) as engine:
            engine.step(2)
            seconds = draw_seconds(ctx, engine, phases, iterations)
        row = {"name": label, "value": seconds * 1e3, "unit": "ms per frame"}
        if k % 2 == 1:   # the second of each pair, against the first
            key = "vs_1_light" if k == 1 else "vs_shadows_off"
            row[key] = seconds / (rows[-1]["value"] / 1e3)
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
