"""Point lights on a real GPU (lavapipe in CI), against the falloff worked out here in numpy.

A plane faces +z at z = -DEPTH and an orthographic camera looks down -z, so the world point
(x, y, -DEPTH) of each pixel is known. The plane's colour at each pixel (its floor checker
included) is measured first with the directional light shining straight at it (intensity 1,
no ambient, no shadows): every other image divided by that one is the light the pixel receives.
A point light of linear colour C at P gives a point X of the plane (normal +z)

    C x max(n.L, 0) / d^2 x clamp(1 - (d / range)^4, 0, 1)^2,   d = |P - X|, d >= 0.01

(systems/lights/component.py). The images are the linear HDR scene target, drawn at one sample
per pixel (pixel centres).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.core.point_lights import (
    LIGHT_CAPACITY,
    LIGHT_TILE,
    TILE_LIGHTS,
    TILE_STRIDE,
    TILES,
)
from emberfx.core.readback import read_buffer
from emberfx.engine.engine import Engine
from emberfx.model.colors import linear_color
from emberfx.model.scene import load_scene, loads_scene

ROOT = Path(__file__).resolve().parent.parent
SIZE = 72             # pixels, square: 4.5 tiles of 16, so the last ones are cut
HEIGHT = 4.0          # world units shown from bottom to top
PPU = SIZE / HEIGHT
DEPTH = 1.0           # the plane's z is -DEPTH

_COLUMNS = (np.arange(SIZE) + 0.5 - SIZE / 2) / PPU
WORLD_X, WORLD_Y = np.meshgrid(_COLUMNS, -_COLUMNS)   # pixel centres, world units


def scene_text(lights, *, light: str = "intensity = 0.0\nambient = 0.0", extra: str = "") -> str:
    text = f"""
[scene]
name = "point lights"
size = [{SIZE}, {SIZE}]
background = "#000000"
[render]
msaa = 1
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = {HEIGHT}
[light]
direction = [0.0, 0.0, 1.0]
shadows = false
{light}
[[entity]]
name = "wall"
[entity.collider]
shape = "plane"
point = [0.0, 0.0, {-DEPTH}]
normal = [0.0, 0.0, 1.0]
extent = 20.0
color = "#b0b0b0"
"""
    for k, (position, color, intensity, reach) in enumerate(lights):
        text += f"""
[[entity]]
name = "lamp{k}"
[entity.point_light]
position = {list(position)}
color = "{color}"
intensity = {intensity}
range = {reach}
"""
    return text + extra


def hdr(text: str) -> np.ndarray:
    engine = Engine(loads_scene(text), size=(SIZE, SIZE))
    try:
        return engine.render_hdr()[..., :3].astype(np.float64)
    finally:
        engine.close()


@pytest.fixture(scope="module")
def albedo() -> np.ndarray:
    """The plane's linear colour at each pixel."""
    return hdr(scene_text([], light="intensity = 1.0\nambient = 0.0"))


def expected(lights) -> np.ndarray:
    """(SIZE, SIZE, 3): the light the plane receives from ``lights``."""
    total = np.zeros((SIZE, SIZE, 3))
    for position, color, intensity, reach in lights:
        px, py, pz = position
        dx, dy, dz = px - WORLD_X, py - WORLD_Y, pz + DEPTH
        d2 = dx * dx + dy * dy + dz * dz
        cosine = np.maximum(dz, 0.0) / np.sqrt(d2)
        window = np.clip(1.0 - (d2 / reach ** 2) ** 2, 0.0, 1.0) ** 2
        falloff = window / np.maximum(d2, 1e-4)
        total += np.asarray(linear_color(color)[:3]) * intensity * (cosine * falloff)[..., None]
    return total


def test_one_light_follows_inverse_square_and_window(albedo):
    lights = [((0.3, -0.2, -0.4), "#ffd090", 0.8, 2.0)]
    got = hdr(scene_text(lights)) / albedo
    want = expected(lights)
    assert want.max() > 1.0 and (want == 0.0).mean() > 0.2   # a bright pool and a dark rim
    assert np.abs(got - want).max() <= 0.05 * want.max()
    assert np.all(got[want == 0.0] == 0.0)   # nothing beyond the range


def test_lights_add_ambient_once(albedo):
    lights = [((-1.0, 0.8, -0.5), "#ff4020", 0.5, 1.5), ((0.9, 0.5, -0.2), "#40a0ff", 0.9, 3.0),
              ((0.2, -1.1, -0.7), "#ffffff", 0.3, 1.0)]
    ambient = "intensity = 0.0\nambient = 0.1"
    alone = [hdr(scene_text([light], light=ambient)) for light in lights]
    none = hdr(scene_text([], light=ambient))
    together = hdr(scene_text(lights, light=ambient))
    summed = none + sum(a - none for a in alone)
    assert np.abs(together - summed).max() <= 2e-3 * together.max()
    assert np.abs(together / albedo - 0.1 - expected(lights)).max() <= 0.05 * together.max()


def test_256_lights_on_every_tile(albedo):
    """Every one of 256 lights reaches every pixel (the lists hold all of them), and their sum
    matches numpy's; one more than a tile holds would leave lights out."""
    assert TILE_LIGHTS >= 256 and LIGHT_CAPACITY >= 256
    rng = np.random.default_rng(7)
    colors = ["#" + "".join(f"{c:02x}" for c in rng.integers(64, 256, 3)) for _ in range(256)]
    lights = [((float(x), float(y), float(z)), color, 0.004, 8.0)
              for x, y, z, color in zip(rng.uniform(-2, 2, 256), rng.uniform(-2, 2, 256),
                                        rng.uniform(-0.8, -0.3, 256), colors)]
    got = hdr(scene_text(lights)) / albedo
    want = expected(lights)
    assert np.abs(got - want).max() <= 0.05 * want.max()
    # without the last 56 lights the image is measurably darker: each one counts
    fewer = expected(lights[:200])
    assert np.abs(fewer - want).min() > 0.05 * 0.05 * want.max()


def sparks_text(max_lights: int, *, emit: bool = True) -> str:
    """The wall with an emitter in front of it whose particles fade from white to black over
    exactly LIFETIME seconds (brightness 1 - age / LIFETIME: colour over life is interpolated in
    linear light) and may light it."""
    light = (f"emit_light = {{ intensity = {SPARK_INTENSITY}, range = {SPARK_RANGE}, "
             f"max_lights = {max_lights} }}") if emit else ""
    return scene_text([], extra=f"""
[[entity]]
name = "sparks"
[entity.emitter]
capacity = 1000
rate = 600.0
lifetime = {LIFETIME}
speed = [0.1, 0.6]
spread_deg = 180.0
position = [0.0, 0.0, -0.5]
gravity = [0.0, 0.0, 0.0]
drag = 0.0
size = 0.001
color = ["#ffffff", "#000000"]
blend = "additive"
{light}
""")


LIFETIME = 2.0
SPARK_INTENSITY = 0.01
SPARK_RANGE = 1.5


def sparks(max_lights: int, steps: int = 20, *, emit: bool = True):
    engine = Engine(loads_scene(sparks_text(max_lights, emit=emit)), size=(SIZE, SIZE))
    try:
        engine.step(steps)
        image = engine.render_hdr()[..., :3].astype(np.float64)
        return image, engine.state("sparks")
    finally:
        engine.close()


@pytest.mark.parametrize("max_lights", [400, 64])
def test_brightest_particles_light_the_wall(albedo, max_lights):
    image, state = sparks(max_lights)
    alive = np.flatnonzero(state["alive"])
    brightness = 1.0 - state["age"][alive] / LIFETIME
    assert 100 < len(alive) < 300 and brightness.min() > 0.0
    count = int(state["light_count"])
    assert count == min(len(alive), max_lights)
    chosen = state["light_slots"]
    assert len(chosen) == count and len(np.unique(chosen)) == count
    assert np.isin(chosen, alive).all()
    # the brightest, to within the selection's bin (1/32 octave)
    ranked = np.sort(brightness)[::-1]
    last = ranked[count - 1]
    bin_ratio = 2.0 ** (1.0 / 32.0)
    by_slot = dict(zip(alive.tolist(), brightness.tolist()))
    taken = np.array([by_slot[s] for s in chosen.tolist()])
    assert taken.min() >= last / bin_ratio - 1e-6
    left = np.setdiff1d(alive, chosen)
    if len(left):
        assert np.array([by_slot[s] for s in left.tolist()]).max() <= last * bin_ratio + 1e-6
    # the wall receives exactly those lights
    lights = [(tuple(state["position"][s]), "#ffffff", SPARK_INTENSITY * by_slot[s], SPARK_RANGE)
              for s in chosen.tolist()]
    want = expected(lights)
    got = image / albedo
    assert want.max() > 0.05
    assert np.abs(got - want).max() <= 0.05 * want.max()


def test_without_emit_light_the_wall_stays_dark(albedo):
    image, state = sparks(64, emit=False)
    assert "light_count" not in state
    assert image.max() < 1e-3   # the tiny sprites add next to nothing; no light reaches the wall


def lit_sprites(light: str, lamps) -> np.ndarray:
    """Still sprites with receive_shadows at the origin, no wall, seen head on."""
    text = f"""
[scene]
name = "lit sprites"
size = [{SIZE}, {SIZE}]
background = "#000000"
[render]
msaa = 1
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = {HEIGHT}
[light]
direction = [0.0, 0.0, 1.0]
shadows = false
{light}
[[entity]]
name = "motes"
[entity.emitter]
capacity = 8
rate = 60.0
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
size = 0.6
color = "#ffffff"
receive_shadows = true
""" + scene_text(lamps).split('color = "#b0b0b0"', 1)[1]
    engine = Engine(loads_scene(text), size=(SIZE, SIZE))
    try:
        engine.step(4)
        return engine.render_hdr()[..., :3].astype(np.float64)
    finally:
        engine.close()


def test_lit_sprites_take_the_point_lights_at_their_centre():
    """A sprite that receives light takes each point light at its centre as a surface facing
    it: the same sprite under a white directional light of intensity 1 (and no ambient) shows
    its own colour, so the ratio is the lights' color x intensity x falloff."""
    lamps = [((0.0, 0.0, 0.8), "#ff8040", 0.5, 2.0), ((0.6, 0.3, -0.4), "#4080ff", 0.2, 1.0)]
    own = lit_sprites("intensity = 1.0\nambient = 0.0", [])
    lit = lit_sprites("intensity = 0.0\nambient = 0.0", lamps)
    want = np.zeros(3)
    for position, color, intensity, reach in lamps:
        d2 = float(np.dot(position, position))
        window = max(0.0, 1.0 - (d2 / reach ** 2) ** 2) ** 2
        want += np.asarray(linear_color(color)[:3]) * intensity * window / d2
    covered = own[..., 1] > 0.2 * own[..., 1].max()
    assert covered.sum() > 20
    ratio = lit[covered] / own[covered]
    assert np.abs(ratio - want).max() <= 0.02 * want.max()


def test_a_live_edit_moves_the_light(albedo):
    before = [((-0.8, 0.5, -0.5), "#ffffff", 0.4, 1.5)]
    after = [((0.7, -0.6, -0.3), "#ffffff", 0.8, 1.2)]
    engine = Engine(loads_scene(scene_text(before)), size=(SIZE, SIZE))
    try:
        first = engine.render_hdr()[..., :3].astype(np.float64)
        lamp = engine.entity("lamp0").point_light
        lamp.position, lamp.intensity, lamp.range = after[0][0], 0.8, 1.2
        second = engine.render_hdr()[..., :3].astype(np.float64)
    finally:
        engine.close()
    for image, lights in ((first, before), (second, after)):
        want = expected(lights)
        assert np.abs(image / albedo - want).max() <= 0.05 * want.max()


@pytest.mark.parametrize("table, message", [
    ("[entity.point_light]\npositon = [0, 1, 0]",
     "entity 'lamp': point_light.positon: unknown key 'positon', did you mean 'position'?"),
    ("[entity.point_light]\nrange = 0.0", "point_light.range: expected float > 0.0, found 0.0"),
    ("[entity.point_light]\nintensity = -1.0",
     "point_light.intensity: expected float >= 0.0, found -1.0"),
    ("[entity.point_light]\ncolor = \"#zzz\"", "point_light.color: expected a colour"),
    ("[entity.emitter]\nemit_light = { max_light = 3 }",
     "emitter.emit_light.max_light: unknown key 'max_light', did you mean 'max_lights'?"),
    ("[entity.emitter]\nemit_light = { max_lights = 5000 }",
     f"emitter.emit_light.max_lights: expected int <= {LIGHT_CAPACITY}, found 5000"),
    ("[entity.emitter]\nemit_light = { range = -2.0 }",
     "emitter.emit_light.range: expected float > 0.0, found -2.0"),
])
def test_bad_light_fields_name_entity_and_field(table, message):
    with pytest.raises(SceneError) as caught:
        loads_scene(f'[scene]\nname = "bad"\n[[entity]]\nname = "lamp"\n{table}\n')
    text = str(caught.value)
    assert message in text and "\n" not in text


PERSPECTIVE = """
[scene]
name = "floor"
size = [{w}, {h}]
background = "#000000"
[render]
msaa = 1
[camera]
kind = "perspective"
position = [0.3, 2.2, 3.4]
target = [0.0, 0.0, -0.3]
fov_deg = 55.0
[light]
direction = [0.0, 1.0, 0.0]
shadows = false
{light}
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
extent = 20.0
"""


def test_tiles_in_perspective_drop_no_light():
    """Many small lights over a floor seen in perspective (a 100 x 60 image: partial tiles at
    the right and bottom): every pixel of the floor gets the sum over all of them, so the
    culling per tile left out none that reaches it."""
    w, h = 100, 60
    rng = np.random.default_rng(3)
    lights = [((float(x), float(y), float(z)), "#ffffff", 0.05, float(r))
              for x, y, z, r in zip(rng.uniform(-2.5, 2.5, 60), rng.uniform(0.05, 0.5, 60),
                                    rng.uniform(-3.0, 1.5, 60), rng.uniform(0.3, 1.0, 60))]
    lamps = "".join(f'[[entity]]\nname = "lamp{k}"\n[entity.point_light]\nposition = {list(p)}\n'
                    f'intensity = {i}\nrange = {r}\n' for k, (p, _, i, r) in enumerate(lights))

    def render(light: str, extra: str = ""):
        engine = Engine(loads_scene(PERSPECTIVE.format(w=w, h=h, light=light) + extra),
                        size=(w, h))
        try:
            image = engine.render_hdr()[..., :3].astype(np.float64)
            camera = engine.camera
            matrix = camera.projection_matrix(w / h) @ camera.view_matrix()
        finally:
            engine.close()
        return image, matrix

    albedo, matrix = render("intensity = 1.0\nambient = 0.0")
    lit, _ = render("intensity = 0.0\nambient = 0.0", lamps)
    # each pixel centre's ray meets the floor y = 0
    inverse = np.linalg.inv(matrix)
    px, py = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    ndc = np.stack([2 * px / w - 1, 1 - 2 * py / h], -1)
    ends = [np.einsum("ij,hwj->hwi", inverse, np.concatenate(
        [ndc, np.full((h, w, 1), z), np.ones((h, w, 1))], -1)) for z in (0.0, 1.0)]
    near, far = (e[..., :3] / e[..., 3:] for e in ends)
    t = near[..., 1] / (near[..., 1] - far[..., 1])
    point = near + (far - near) * t[..., None]
    want = np.zeros((h, w))
    for (x, y, z), _, intensity, reach in lights:
        d = np.array([x, y, z]) - point
        d2 = (d * d).sum(-1)
        window = np.clip(1.0 - (d2 / reach ** 2) ** 2, 0.0, 1.0) ** 2
        want += intensity * np.maximum(d[..., 1], 0.0) / np.sqrt(d2) * window / d2
    floor = (t > 0) & (t < 1) & (albedo[..., 1] > 0.05)
    assert floor.mean() > 0.5
    got = lit[..., 1] / np.where(floor, albedo[..., 1], 1.0)
    assert want[floor].max() > 1.0
    assert np.abs(got - want)[floor].max() <= 0.05 * want[floor].max()


def test_tile_lists_hold_exactly_the_lights_reaching_them():
    """The lists read back: seen orthographically, a tile's frustum is the box over its pixel
    square, and the cull keeps a light unless its centre lies farther than its range beyond one
    of the box's sides. So each list holds every light whose sphere meets the box (distance
    from the centre to the tile's square at most the range), and none more than its range
    beyond a side, in increasing order."""
    rng = np.random.default_rng(11)
    lights = [((float(x), float(y), -0.5), "#ffffff", 0.1, float(r))
              for x, y, r in zip(rng.uniform(-2.5, 2.5, 40), rng.uniform(-2.5, 2.5, 40),
                                 rng.uniform(0.05, 1.2, 40))]
    engine = Engine(loads_scene(scene_text(lights)), size=(SIZE, SIZE))
    try:
        engine.render_hdr()
        words = np.frombuffer(read_buffer(engine.device, engine.resources[TILES]), np.uint32)
    finally:
        engine.close()
    side = -(-SIZE // LIGHT_TILE)
    tiles = words.reshape(side * side, TILE_STRIDE)
    for t in range(side * side):
        column, row = t % side, t // side
        # the tile's square in world units (x right, y up); the image's edge cuts the last ones
        x0, x1 = (np.array([column, min(column + 1, SIZE / LIGHT_TILE)]) * LIGHT_TILE
                  - SIZE / 2) / PPU
        y1, y0 = (SIZE / 2 - np.array([row, min(row + 1, SIZE / LIGHT_TILE)]) * LIGHT_TILE) / PPU
        listed = tiles[t, 1:1 + tiles[t, 0]]
        assert np.all(np.diff(listed.astype(np.int64)) > 0)
        for k, ((x, y, _), _, _, reach) in enumerate(lights):
            gap_x, gap_y = max(x0 - x, 0.0, x - x1), max(y0 - y, 0.0, y - y1)
            if np.hypot(gap_x, gap_y) <= reach * 0.999:
                assert k in listed, (t, k)
            if max(gap_x, gap_y) > reach * 1.01:
                assert k not in listed, (t, k)


def test_particle_lights_give_the_same_bytes_twice():
    """The lights are chosen and ordered from the particles' state alone (no race between
    threads), so two runs of the sparks scene give the same image and the same lights."""
    runs = []
    for _ in range(2):
        engine = Engine(load_scene(ROOT / "scenes" / "sparks.toml"), size=(96, 54))
        try:
            engine.step(45)
            runs.append((engine.render_hdr().tobytes(), engine.state("sparks")["light_slots"]))
        finally:
            engine.close()
    assert len(runs[0][1]) == 128
    assert runs[0][0] == runs[1][0]
    assert np.array_equal(runs[0][1], runs[1][1])


def test_deleting_the_last_light_leaves_the_emitters_lights_alone(albedo):
    """With the scene's only lamp deleted, the particle lights start the list again: the wall
    gets exactly theirs and nothing of the lamp's."""
    lamp = [((0.0, 0.0, -0.5), "#ffffff", 0.5, 1.5)]
    emitter = '[[entity]]\nname = "sparks"' + sparks_text(64).split('name = "sparks"', 1)[1]
    engine = Engine(loads_scene(scene_text(lamp, extra=emitter)), size=(SIZE, SIZE))
    try:
        engine.step(20)
        engine.render_hdr()
        engine.delete("lamp0")
        image = engine.render_hdr()[..., :3].astype(np.float64)
        state = engine.state("sparks")
    finally:
        engine.close()
    alive = set(np.flatnonzero(state["alive"]).tolist())
    chosen = state["light_slots"].tolist()
    assert len(chosen) == 64 and alive.issuperset(chosen)
    lights = [(tuple(state["position"][s]), "#ffffff",
               SPARK_INTENSITY * (1.0 - state["age"][s] / LIFETIME), SPARK_RANGE)
              for s in chosen]
    want = expected(lights)
    assert np.abs(image / albedo - want).max() <= 0.05 * want.max()
