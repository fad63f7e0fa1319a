"""The fluid's screen-space water (look = { ... }, systems/fluid/surface.py) on the software GPU,
against oracles that do not share its code: the dam break's golden image is the water's, not
the sprites'; the normals read back from the GPU vary smoothly inside the silhouette (numpy
angles between neighbours); a striped backdrop seen through the water is displaced by
refraction (normalised correlation with the backdrop alone); an opaque box in front of the
water hides it (the pixels are the box-only render's); bad look tables get one-line errors;
look = "particles" still draws sprites."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_golden import GOLDEN, ROOT, difference, matches, read_png, render

from emberfx.core.errors import SceneError
from emberfx.core.readback import read_array
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene

SIZE = (128, 96)
STEPS_TO_MOUND = 12   # the column has slumped into a mound with sloped sides
NORMALS = "water/surface:normals"


def water_toml(look: str = 'look = { color = "#2f86c8", absorption = 2.0, ior = 1.33 }',
               extra: str = "", fill: bool = True) -> str:
    """A column of water 0.24 m on a side, 0.4 m tall, slumping in a box 0.8 m wide, seen from
    the front and a little above; ``extra``: more entities (TOML); ``fill``: False leaves the
    water out (the backdrop alone)."""
    water = f"""
[[entity]]
name = "water"
[entity.fluid]
particle_radius = 0.02
fill = [{{ center = [-0.18, 0.2, 0.0], half_size = [0.12, 0.2, 0.12] }}]
bounds = {{ center = [0.0, 0.4, 0.0], half_size = [0.4, 0.4, 0.2] }}
{look}
""" if fill else ""
    return f"""
[scene]
seed = 1
background = "#0b1016"
[camera]
kind = "perspective"
position = [0.0, 0.6, 2.0]
target = [0.0, 0.2, 0.0]
fov_deg = 35.0
{water}
{extra}
"""


def stripes(count: int = 14, z: float = -0.6) -> str:
    """Bright bars tilted 45 degrees on a vertical plane behind the water (out of its bounds):
    a pattern that any shift, across or along, changes."""
    bars = []
    for k in range(count):
        x = -1.3 + k * 0.2
        bars.append(f"""
[[entity]]
name = "bar{k}"
[entity.collider]
shape = "box"
center = [{x:.3f}, 0.25, {z}]
half_size = [0.03, 0.9, 0.01]
rotation_deg = [0.0, 0.0, 45.0]
color = "#f0f0f0"
""")
    return "".join(bars)


def run(text: str, steps: int = STEPS_TO_MOUND, size=SIZE) -> tuple[Engine, np.ndarray]:
    engine = Engine(loads_scene(text, path="t.toml"), size=size)
    engine.step(steps)
    return engine, engine.render_hdr()[..., :3].astype(np.float64)


def read_normals(engine: Engine) -> np.ndarray:
    """(h, w, 4) float32: the surface's normals as the GPU wrote them (w: 1 where water is
    seen)."""
    w, h = engine.size
    view = engine.resources.buffer_view(NORMALS)
    return read_array(engine.device, view.buffer, np.float32, 4 * w * h).reshape(h, w, 4)


def water_mask(engine: Engine) -> np.ndarray:
    """(h, w) bool: the pixels where the water is seen."""
    return read_normals(engine)[..., 3] > 0.5


def eroded(mask: np.ndarray, steps: int) -> np.ndarray:
    out = mask.copy()
    for _ in range(steps):
        out[1:-1, 1:-1] &= (out[:-2, 1:-1] & out[2:, 1:-1] & out[1:-1, :-2] & out[1:-1, 2:])
        out[0, :] = out[-1, :] = False
        out[:, 0] = out[:, -1] = False
    return out


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / math.sqrt((a * a).sum() * (b * b).sum()))


# ------------------------------------------------------------------------------ golden image
def test_the_dam_break_golden_is_the_water_look(gpu):
    """tests/golden/dam_break.png (test_golden.py compares the scene with it) shows the water
    surface: the scene renders within the golden's tolerance, and the same scene drawn as
    sprites does not."""
    scene = load_scene(ROOT / "scenes" / "dam_break.toml")
    golden = read_png(GOLDEN / "dam_break.png")
    water = render(scene)   # at its preview, as the golden
    assert matches(water, golden), difference(water, golden)
    text = (ROOT / "scenes" / "dam_break.toml").read_text()
    start = text.index("look = {")
    sprites = text[:start] + 'look = "particles"' + text[text.index("\n", start):]
    image = render(loads_scene(sprites, path=ROOT / "scenes" / "dam_break.toml"))
    mean, changed = difference(image, golden)
    assert mean > 3.0 * 1.5 and changed > 0.02, (mean, changed)


# ---------------------------------------------------------------------------------- normals
def test_normals_inside_the_silhouette_vary_smoothly(gpu):
    """Neighbouring pixels' normals (read back from the GPU) inside the water's silhouette (3
    pixels in from its edge) differ by less than 5 degrees on average; the normals of the
    unsmoothed spheres would differ by far more (each sphere spans a few pixels)."""
    engine, _ = run(water_toml(), steps=STEPS_TO_MOUND, size=(160, 120))
    try:
        normals = read_normals(engine)
    finally:
        engine.close()
    seen = normals[..., 3] > 0.5
    inside = eroded(seen, 3)
    assert inside.sum() > 400, inside.sum()
    n = normals[..., :3].astype(np.float64)
    assert np.allclose(np.linalg.norm(n[seen], axis=1), 1.0, atol=1e-3)
    angles = []
    for dy, dx in ((0, 1), (1, 0)):
        a = n[: n.shape[0] - dy, : n.shape[1] - dx]
        b = n[dy:, dx:]
        both = inside[: n.shape[0] - dy, : n.shape[1] - dx] & inside[dy:, dx:]
        cos = np.clip(np.sum(a * b, axis=-1)[both], -1.0, 1.0)
        angles.append(np.degrees(np.arccos(cos)))
    mean = float(np.concatenate(angles).mean())
    assert mean < 5.0, mean


# ------------------------------------------------------------------------------- refraction
def test_refraction_displaces_the_backdrop_seen_through_the_water(gpu):
    """Inside the water's silhouette, the image with ior = 1 (no refraction; the water only
    tints, and reflects at grazing angles) follows the backdrop alone closely (normalised
    correlation of the luminance), and with ior = 1.33 it follows it clearly less: the bars
    are displaced."""
    backdrop_engine, backdrop = run(water_toml(extra=stripes(), fill=False))
    backdrop_engine.close()
    images, masks = {}, {}
    for ior in (1.0, 1.33):
        look = f'look = {{ color = "#2f86c8", absorption = 0.5, ior = {ior} }}'
        engine, images[ior] = run(water_toml(look, extra=stripes()))
        try:
            masks[ior] = eroded(water_mask(engine), 1)
        finally:
            engine.close()
    inside = masks[1.0] & masks[1.33]
    assert inside.sum() > 300, inside.sum()
    luminance = np.array([0.2126, 0.7152, 0.0722])
    plain = backdrop @ luminance
    assert plain[inside].std() > 0.05   # the bars are behind the water
    straight = correlation((images[1.0] @ luminance)[inside], plain[inside])
    bent = correlation((images[1.33] @ luminance)[inside], plain[inside])
    assert straight > 0.75, straight   # (measured 0.86: the Fresnel rim and highlight)
    assert bent < straight - 0.3, (straight, bent)   # (measured 0.25)


# ------------------------------------------------------------------------------------ depth
BOX = """
[[entity]]
name = "block"
[entity.collider]
shape = "box"
center = [{x}, 0.15, {z}]
half_size = [0.1, 0.15, 0.02]
color = "#c04020"
"""


@pytest.mark.parametrize("z", [0.6, -0.5], ids=["box-in-front", "box-behind"])
def test_an_opaque_box_in_front_hides_the_water_and_one_behind_is_covered(gpu, z):
    """A box in front of part of the water (outside its bounds): where it is drawn the image
    is exactly the box-only render's. A box behind the water: where the water is seen over
    it, the image differs from the box-only render."""
    box = BOX.format(x=-0.18, z=z)
    engine, both = run(water_toml(extra=box))
    try:
        seen = water_mask(engine)
    finally:
        engine.close()
    alone_engine, alone = run(water_toml(extra=box, fill=False))
    depth = alone_engine.render_depth()
    alone_engine.close()
    water_engine, water = run(water_toml())
    water_seen = water_mask(water_engine)
    water_engine.close()
    box_drawn = np.isfinite(depth)
    overlap = box_drawn & water_seen
    assert overlap.sum() > 100, overlap.sum()
    if z > 0:
        assert np.array_equal(both[overlap], alone[overlap])
        assert not seen[overlap].any()
        rest = water_seen & ~box_drawn
        assert np.abs(both[rest] - alone[rest]).max() > 0.05   # the water is there elsewhere
    else:
        assert seen[overlap].all()
        assert np.abs(both[overlap] - alone[overlap]).mean(axis=-1).mean() > 0.02


# ----------------------------------------------------------------------------------- errors
@pytest.mark.parametrize(("look", "pieces"), [
    ("{ ior = 0.9 }", ["fluid.look.ior", ">= 1.0", "0.9"]),
    ("{ absorption = -2 }", ["fluid.look.absorption", ">= 0.0", "-2"]),
    ("{ iro = 1.2 }", ["fluid.look.iro", "did you mean 'ior'"]),
    ('{ color = "blue" }', ["fluid.look.color", "'#rrggbb'", "'blue'"]),
    ('{ sky = "#12" }', ["fluid.look.sky", "'#12'"]),
    ("{ ior = 5.0 }", ["fluid.look.ior", "<= 3.0", "5.0"]),
    ('"sprites"', ["fluid.look", "'particles'", "'sprites'"]),
])
def test_bad_look_tables_get_one_line_errors(look, pieces):
    with pytest.raises(SceneError) as info:
        loads_scene(f'[[entity]]\nname = "water"\n[entity.fluid]\nlook = {look}\n',
                    path="f.toml")
    message = str(info.value)
    assert "\n" not in message and "f.toml" in message and "entity 'water'" in message
    for piece in pieces:
        assert piece in message, (piece, message)


# -------------------------------------------------------------------------------- particles
def test_the_particles_look_still_draws_sprites(gpu):
    """look = "particles": no surface resources, and the water's pixels take the sprites'
    colour (red here: the water look would be blue whatever the sprite colour)."""
    look = 'look = "particles"\ncolor = "#ff2010"'
    engine, image = run(water_toml(look))
    try:
        assert NORMALS not in engine.resources
    finally:
        engine.close()
    background = image[0, 0]
    drawn = np.abs(image - background).max(axis=-1) > 0.05
    assert drawn.sum() > 200, drawn.sum()
    red, green, blue = (image[drawn][:, c].mean() for c in range(3))
    assert red > 2.0 * green and red > 2.0 * blue, (red, green, blue)


# ------------------------------------------------------------------- live edits, new targets
def test_live_look_edits_and_a_new_target_size(gpu):
    """The look switched live from sprites to the water and back makes and drops the surface
    passes; a live absorption edit tints what is seen through the water; drawing into a
    texture of another size (a resized window) makes the surface's images at that size."""
    import wgpu

    from emberfx.systems.fluid.component import Water

    engine, sprites = run(water_toml('look = "particles"'))
    try:
        fluid = engine.entity("water").fluid
        fluid.look = Water(absorption=0.5)
        clear = engine.render_hdr()[..., :3].astype(np.float64)
        seen = water_mask(engine)
        assert seen.sum() > 200 and any(":fluid:surface:shade" in n for n in engine.passes())
        fluid.look = Water(absorption=20.0)
        dark = engine.render_hdr()[..., :3].astype(np.float64)
        # more absorption: the backdrop fades and the water takes the tint's colour (blue)
        def blueness(image):
            return float((image[seen][:, 2] - image[seen][:, 0]).mean())
        assert blueness(dark) > blueness(clear) + 0.02, (blueness(dark), blueness(clear))
        w, h = 160, 120   # larger than before: a stale buffer would be too small
        texture = engine.device.create_texture(
            size=(w, h, 1), format="rgba8unorm",
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        engine.draw_to(texture)
        assert engine.resources.buffer_view(NORMALS).size == 16 * w * h
        assert water_mask(engine).sum() > 100
        fluid.look = "particles"
        again = engine.render_hdr()[..., :3]
        assert NORMALS not in engine.resources
        assert not any(":fluid:surface:" in n for n in engine.passes())
        assert again.shape == (h, w, 3)
    finally:
        engine.close()
    assert sprites.shape == (SIZE[1], SIZE[0], 3)


def test_an_orthographic_camera_sees_the_water_where_the_sprites_are(gpu):
    """An orthographic camera's rays start on a near plane far from the water (its eye is
    half the far distance away): the water's silhouette still covers the pixels the sprites
    cover (intersection over union of the two masks)."""
    ortho = ('kind = "orthographic"\nheight = 1.2\ncenter = [0.0, 0.3]', 'kind = "perspective"')
    text = water_toml().replace(ortho[1], ortho[0]).replace("fov_deg = 35.0", "")
    text = text.replace("position = [0.0, 0.6, 2.0]\ntarget = [0.0, 0.2, 0.0]\n", "")
    engine, _ = run(text)
    try:
        seen = water_mask(engine)
    finally:
        engine.close()
    start = text.index("look = {")
    sprites_text = text[:start] + 'look = "particles"' + text[text.index("\n", start):]
    sprite_engine = Engine(loads_scene(sprites_text, path="t.toml"), size=SIZE)
    try:
        sprite_engine.step(STEPS_TO_MOUND)
        drawn = np.isfinite(sprite_engine.render_depth())
    finally:
        sprite_engine.close()
    assert drawn.sum() > 300, drawn.sum()
    overlap = (seen & drawn).sum() / (seen | drawn).sum()
    assert overlap > 0.75, overlap
