"""Sprite looks on the real draw path (emitter/draw.wgsl, common/mip.wgsl on lavapipe): textures,
mips, flipbooks, velocity alignment, and the scene errors for unusable textures.

One particle, born by a burst at rest (or at a known velocity) without gravity, seen by an
orthographic camera over a black background, so every drawn pixel is the sprite. Oracles: the
image files written here (their quadrants, their mean, their frame colours) and the formulas of
the issue (flipbook frame position, stretched length), evaluated in numpy.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from emberfx.blocks.textures import BUILTINS, builtin_image
from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene

DT = 1.0 / 60.0
LEVELS = 2   # 8-bit levels of tolerance for colours that are exact in the image


def scene_text(texture: str, *, size: float = 2.0, speed: float = 0.0, blend: str = "alpha",
               pixels: int = 64, extra: str = "", lifetime: float = 100.0) -> str:
    return f"""
[scene]
name = "look"
seed = 3
fixed_dt = {DT!r}
size = [{pixels}, {pixels}]
background = "#000000"
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = 4.0
[[entity]]
name = "sprite"
[entity.emitter]
capacity = 1
rate = 0.0
bursts = [{{ time = 0.0, count = 1 }}]
lifetime = {lifetime!r}
speed = {speed!r}
direction = [1.0, 0.0, 0.0]
spread_deg = 0.0
gravity = [0.0, 0.0, 0.0]
size = {size!r}
color = "#ffffff"
blend = "{blend}"
texture = "{texture}"
{extra}
"""


def engine_for(tmp_path, texture: str, pixels: int = 64, **kw) -> Engine:
    scene = loads_scene(scene_text(texture, pixels=pixels, **kw), path=tmp_path / "look.toml")
    return Engine(scene, size=(pixels, pixels))


def write_png(path, rgba: np.ndarray) -> None:
    Image.fromarray(rgba.astype(np.uint8), "RGBA").save(path)


def solid(h: int, w: int, rgb) -> np.ndarray:
    image = np.empty((h, w, 4), np.uint8)
    image[..., :3] = rgb
    image[..., 3] = 255
    return image


def test_each_quadrant_of_the_texture_renders_where_it_belongs(gpu, tmp_path):
    quadrants = {(0, 0): (255, 0, 0), (0, 1): (0, 255, 0), (1, 0): (0, 0, 255),
                 (1, 1): (255, 255, 255)}   # (row, column) from the top left
    image = np.zeros((64, 64, 4), np.uint8)
    for (row, column), rgb in quadrants.items():
        image[row * 32:(row + 1) * 32, column * 32:(column + 1) * 32] = solid(32, 32, rgb)
    write_png(tmp_path / "quadrants.png", image)
    engine = engine_for(tmp_path, "quadrants.png")   # a 2-unit sprite: pixels 16..48
    engine.step(1)
    picture = engine.render()
    for (row, column), rgb in quadrants.items():
        y, x = 24 + 16 * row, 24 + 16 * column
        np.testing.assert_allclose(picture[y, x, :3], rgb, atol=LEVELS,
                                   err_msg=f"quadrant row {row}, column {column}")
    assert picture[4, 4, :3].max() == 0 and picture[60, 60, :3].max() == 0   # outside the sprite


TURN_QUADRANTS = {(-1, 1): (255, 0, 0), (1, 1): (0, 255, 0), (-1, -1): (0, 0, 255),
                  (1, -1): (255, 255, 255)}   # (x, y) signs of each quadrant in the sprite


def write_turn_quadrants(path) -> None:
    image = np.zeros((64, 64, 4), np.uint8)
    for (sx, sy), rgb in TURN_QUADRANTS.items():
        top, left = (1 - sy) * 16, (1 + sx) * 16
        image[top:top + 32, left:left + 32] = solid(32, 32, rgb)
    write_png(path, image)


def assert_quadrants_turned(picture: np.ndarray, angle: float, centre=(0.0, 0.0)) -> None:
    """Each quadrant's centre, turned by ``angle`` (radians, counter-clockwise as seen) about
    the sprite's ``centre`` (world units), shows its colour in a 128-pixel, 4-unit view."""
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    for (sx, sy), rgb in TURN_QUADRANTS.items():
        x, y = np.asarray(centre) + turn @ (0.5 * np.array([sx, sy]))   # sprite size 2
        column, row = int(64 + 32 * x), int(64 - 32 * y)   # 32 pixels per world unit
        np.testing.assert_allclose(picture[row, column, :3], rgb, atol=LEVELS,
                                   err_msg=f"quadrant {sx, sy} at angle {np.degrees(angle):.1f}")


@pytest.mark.parametrize("rotation, spin, steps", [(90.0, 0.0, 1), (0.0, 135.0, 40),
                                                  (-30.0, -200.0, 25)])
def test_sprites_turn_by_rotation_and_angular_velocity(gpu, tmp_path, rotation, spin, steps):
    write_turn_quadrants(tmp_path / "quadrants.png")
    extra = f"rotation_deg = [{rotation}, {rotation}]\nangular_velocity_deg = [{spin}, {spin}]"
    engine = engine_for(tmp_path, "quadrants.png", pixels=128, extra=extra)
    engine.step(steps)
    age = float(engine.state("sprite")["age"][0])
    assert_quadrants_turned(engine.render(), np.radians(rotation + spin * age))


@pytest.mark.parametrize("look, angle_deg", [
    ('align = "velocity"\ndirection = [1.0, 0.0, 0.0]', 0.0),
    ('align = "velocity"\ndirection = [-1.0, 0.0, 0.0]', 180.0),
    ('align = "velocity"\ndirection = [0.0, 1.0, 0.0]', 90.0),
    ('align = "axis"\naxis = [1.0, 1.0, 0.0]', 45.0),
])
def test_aligned_sprites_lay_their_x_axis_along_the_motion_or_axis(gpu, tmp_path, look,
                                                                   angle_deg):
    write_turn_quadrants(tmp_path / "quadrants.png")
    text = scene_text("quadrants.png", pixels=128, speed=0.5, extra=look)
    text = text.replace('direction = [1.0, 0.0, 0.0]\n', "", 1) if "direction" in look else text
    engine = Engine(loads_scene(text, path=tmp_path / "look.toml"), size=(128, 128))
    engine.step(1)
    centre = engine.state("sprite")["position"][0, :2]
    assert_quadrants_turned(engine.render(), np.radians(angle_deg), centre)


@pytest.mark.parametrize("rotation", [0.0, 90.0])
def test_plane_sprites_facing_the_camera_turn_about_their_normal(gpu, tmp_path, rotation):
    # align = "plane" with the normal towards the camera (+z) draws the texture as a
    # camera-facing sprite does, turned by rotation_deg about the normal
    write_turn_quadrants(tmp_path / "quadrants.png")
    extra = f'align = "plane"\naxis = [0.0, 0.0, 1.0]\nrotation_deg = [{rotation}, {rotation}]'
    engine = engine_for(tmp_path, "quadrants.png", pixels=128, extra=extra)
    engine.step(1)
    assert_quadrants_turned(engine.render(), np.radians(rotation))


def test_a_tilted_plane_sprite_is_foreshortened_along_its_y_axis(gpu, tmp_path):
    # normal (0, 1, 1)/sqrt 2: the sprite's x stays world x, its y is (0, 1, -1)/sqrt 2, so the
    # 2-unit square projects to 2 x sqrt 2 units (64 x 45.25 pixels at 32 pixels a unit), each
    # quadrant's centre at (0.5 sx, 0.5 sy / sqrt 2)
    write_turn_quadrants(tmp_path / "quadrants.png")
    extra = 'align = "plane"\naxis = [0.0, 1.0, 1.0]'
    engine = engine_for(tmp_path, "quadrants.png", pixels=128, extra=extra)
    engine.step(1)
    picture = engine.render()
    lit = picture[..., :3].max(axis=2) > 0
    assert lit.any(axis=0).sum() == 64
    assert abs(int(lit.any(axis=1).sum()) - 32 * np.sqrt(2.0)) <= 1.0
    for (sx, sy), rgb in TURN_QUADRANTS.items():
        column, row = int(64 + 16 * sx), int(64 - 16 * sy / np.sqrt(2.0))
        np.testing.assert_allclose(picture[row, column, :3], rgb, atol=LEVELS,
                                   err_msg=f"quadrant {sx, sy}")


def test_a_floor_plane_sprite_seen_edge_on_draws_nothing(gpu, tmp_path):
    # normal +y, the camera looking along -z: the quad has no area on screen (a ripple on a
    # floor seen exactly from its side)
    flat = 'align = "plane"\naxis = [0.0, 1.0, 0.0]'
    engine = engine_for(tmp_path, "soft", pixels=64, extra=flat)
    engine.step(1)
    assert engine.render()[..., :3].max() == 0
    engine.entity("sprite").emitter.align = "camera"   # the same sprite, facing the camera
    engine.step(1)
    assert engine.render()[..., :3].max() > 200


@pytest.mark.parametrize("name", BUILTINS)
def test_each_built_in_texture_draws_its_coverage(gpu, tmp_path, name):
    # additive white over black: each pixel's linear value is the coverage sampled there, so
    # the sprite's mean is the image's mean alpha ("dot" is drawn analytically, the same shape)
    engine = engine_for(tmp_path, name, blend="additive")
    engine.step(1)
    drawn = srgb_to_linear(engine.render()[16:48, 16:48, 0].astype(float)).mean()
    expected = builtin_image(name)[..., 3].mean() / 255.0
    assert drawn == pytest.approx(expected, rel=0.05, abs=0.005)


def test_a_small_checkered_sprite_shows_the_checker_mean(gpu, tmp_path):
    checker = ((np.indices((256, 256)).sum(axis=0) % 2) * 255).astype(np.uint8)
    image = np.repeat(checker[..., None], 4, axis=2)
    image[..., 3] = 255
    write_png(tmp_path / "checker.png", image)
    # 0.5 units = 8 pixels for 256 texels: the sampler reads mip level 5, where each texel
    # averages 32 x 32 checker texels to half the linear intensity. Moved 0.3 pixels off the
    # pixel grid, level 0 alone would give 0.1 or 0.9 (not an even mix at texel edges).
    engine = engine_for(tmp_path, "checker.png", size=0.5,
                        extra="position = [0.01875, 0.01875, 0.0]")
    engine.step(1)
    inner = engine.render()[30:34, 30:34, :3].astype(float)
    np.testing.assert_allclose(inner, srgb(0.5), atol=4.0)   # sRGB of the linear mean


def srgb(linear: float) -> float:
    """8-bit level of the sRGB encoding of a linear intensity."""
    if linear <= 0.0031308:
        return 255.0 * 12.92 * linear
    return 255.0 * (1.055 * linear ** (1 / 2.4) - 0.055)


@pytest.mark.parametrize("blend", ["alpha", "additive", "opaque"])
def test_a_half_grey_srgb_texture_renders_as_the_same_srgb_grey(gpu, tmp_path, blend):
    write_png(tmp_path / "grey.png", solid(16, 16, (128, 128, 128)))
    engine = engine_for(tmp_path, "grey.png", blend=blend)
    engine.step(1)
    np.testing.assert_allclose(engine.render()[24:40, 24:40, :3], 128, atol=1)


@pytest.mark.parametrize("blend, expected", [("alpha", srgb(128 / 255)),
                                             ("additive", srgb(128 / 255)),
                                             ("opaque", 255.0)])   # a cutout at alpha 0.5
def test_texture_alpha_is_premultiplied_for_each_blend_mode(gpu, tmp_path, blend, expected):
    image = solid(16, 16, (255, 255, 255))
    image[..., 3] = 128   # straight alpha: white at half coverage, over the black background
    write_png(tmp_path / "half.png", image)
    engine = engine_for(tmp_path, "half.png", blend=blend)
    engine.step(1)
    np.testing.assert_allclose(engine.render()[24:40, 24:40, :3], expected, atol=1.5)


ATLAS_COLUMNS, ATLAS_ROWS = 4, 2
FRAME_COLORS = np.array([(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0),
                         (255, 0, 255), (0, 255, 255), (255, 255, 255), (128, 64, 0)])


def numbered_atlas(path) -> None:
    """Frame k (row by row from the top left) a flat FRAME_COLORS[k], 16 x 16 texels each."""
    image = np.zeros((16 * ATLAS_ROWS, 16 * ATLAS_COLUMNS, 4), np.uint8)
    for k, rgb in enumerate(FRAME_COLORS):
        row, column = divmod(k, ATLAS_COLUMNS)
        image[16 * row:16 * (row + 1), 16 * column:16 * (column + 1)] = solid(16, 16, rgb)
    write_png(path, image)


def shown_frame(picture: np.ndarray) -> int:
    centre = picture[32, 32, :3].astype(int)
    distance = np.abs(FRAME_COLORS - centre).sum(axis=1)
    assert distance.min() <= 3 * LEVELS, f"centre {centre} is no frame's colour"
    return int(distance.argmin())


@pytest.mark.parametrize("mode, lifetime, expected_frame", [
    ("over_life", 1.0, lambda age: min(int(np.floor(age / 1.0 * 8)), 7)),
    ("fps", 100.0, lambda age: int(np.floor(age * 20.0)) % 8),
])
def test_the_flipbook_shows_the_frame_of_the_formula(gpu, tmp_path, mode, lifetime,
                                                     expected_frame):
    numbered_atlas(tmp_path / "atlas.png")
    book = f'flipbook = {{ columns = 4, rows = 2, fps = 20.0, mode = "{mode}" }}'
    engine = engine_for(tmp_path, "atlas.png", extra=book, lifetime=lifetime)
    checked = set()
    for _ in range(14):
        engine.step(5)   # 1 2/3 frame positions apart in fps mode: every residue comes up
        age = float(engine.state("sprite")["age"][0])
        if age >= lifetime:
            break
        position = age / lifetime * 8 if mode == "over_life" else age * 20.0
        if abs(position - round(position)) < 1e-3:   # on a frame boundary: either is right
            continue
        frame = expected_frame(age)
        assert shown_frame(engine.render()) == frame, f"age {age:.4f}"
        checked.add(frame)
    assert len(checked) >= 6   # the test walked through most of the atlas


def srgb_to_linear(levels: np.ndarray) -> np.ndarray:
    c = levels / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def test_an_interpolated_flipbook_blends_a_frame_into_the_next_by_the_fraction(gpu, tmp_path):
    numbered_atlas(tmp_path / "atlas.png")
    book = 'flipbook = { columns = 4, rows = 2, fps = 7.0, mode = "fps", interpolate = true }'
    engine = engine_for(tmp_path, "atlas.png", extra=book)
    for _ in range(6):
        engine.step(7)
        age = float(engine.state("sprite")["age"][0])
        position = age * 7.0
        a, weight = int(np.floor(position)) % 8, position - np.floor(position)
        linear = ((1 - weight) * srgb_to_linear(FRAME_COLORS[a])
                  + weight * srgb_to_linear(FRAME_COLORS[(a + 1) % 8]))
        np.testing.assert_allclose(engine.render()[32, 32, :3], [srgb(v) for v in linear],
                                   atol=LEVELS, err_msg=f"age {age:.4f}")


def footprint(picture: np.ndarray) -> tuple[int, int]:
    """(width, height) in pixels of the lit region."""
    lit = picture[..., :3].max(axis=2) > 127
    columns, rows = np.flatnonzero(lit.any(axis=0)), np.flatnonzero(lit.any(axis=1))
    return int(columns[-1] - columns[0] + 1), int(rows[-1] - rows[0] + 1)


def test_a_velocity_aligned_sprite_is_stretched_along_its_motion(gpu, tmp_path):
    write_png(tmp_path / "white.png", solid(8, 8, (255, 255, 255)))
    size, speed, stretch = 0.5, 2.0, 0.5
    engine = engine_for(tmp_path, "white.png", pixels=128, size=size, speed=speed,
                        blend="opaque", extra=f'align = "velocity"\nstretch = {stretch}')
    engine.step(1)
    width, height = footprint(engine.render())
    per_unit = 128 / 4.0
    assert abs(width - (size + stretch * speed) * per_unit) <= 1
    assert abs(height - size * per_unit) <= 1
    engine.entity("sprite").emitter.align = "camera"   # the same particle, facing the camera
    engine.step(1)   # live fields take effect at the next step
    width, height = footprint(engine.render())
    assert abs(width - size * per_unit) <= 1 and abs(height - size * per_unit) <= 1


# bad input ---------------------------------------------------------------------------------------
def load_error(tmp_path, texture: str, extra: str = "") -> str:
    with pytest.raises(SceneError) as caught:
        loads_scene(scene_text(texture, extra=extra), path=tmp_path / "look.toml")
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_missing_texture_is_a_scene_error_naming_field_and_file(tmp_path):
    message = load_error(tmp_path, "nowhere.png")
    assert "emitter.texture" in message and "nowhere.png" in message and "sprite" in message


def test_an_unreadable_texture_is_a_scene_error(tmp_path):
    (tmp_path / "notes.png").write_text("not an image")
    message = load_error(tmp_path, "notes.png")
    assert "emitter.texture" in message and "notes.png" in message


def test_a_flipbook_grid_that_does_not_divide_the_image_is_a_scene_error(tmp_path):
    write_png(tmp_path / "atlas.png", solid(32, 64, (255, 255, 255)))
    message = load_error(tmp_path, "atlas.png", "flipbook = { columns = 5, rows = 2 }")
    assert "emitter.flipbook" in message and "atlas.png" in message and "64 x 32" in message


def test_a_texture_beyond_the_device_limit_is_a_scene_error(gpu, tmp_path):
    limit = gpu.limits["max-texture-dimension-2d"]
    write_png(tmp_path / "wide.png", solid(1, limit + 1, (255, 255, 255)))
    scene = loads_scene(scene_text("wide.png"), path=tmp_path / "look.toml")
    with pytest.raises(SceneError) as caught:
        Engine(scene, size=(64, 64))
    message = str(caught.value)
    assert "emitter.texture" in message and "wide.png" in message and str(limit) in message


def run_module(*argv, cwd):
    """`python -m emberfx ...` in a fresh interpreter: what a user's terminal shows."""
    return subprocess.run([sys.executable, "-m", "emberfx", *map(str, argv)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_the_cli_reports_an_unusable_texture_in_one_line(gpu, tmp_path):
    (tmp_path / "missing.toml").write_text(scene_text("sprites/nowhere.png"))
    limit = gpu.limits["max-texture-dimension-2d"]
    write_png(tmp_path / "wide.png", solid(1, limit + 1, (255, 255, 255)))
    (tmp_path / "wide.toml").write_text(scene_text("wide.png"))
    for argv, file in ((("validate", "missing.toml"), "nowhere.png"),
                       (("render", "wide.toml", "--frames", "1", "--out", "x.png"), "wide.png")):
        r = run_module(*argv, cwd=tmp_path)
        errors = [line for line in r.stderr.splitlines() if line.startswith("emberfx: error:")]
        assert r.returncode == 1 and len(errors) == 1, r.stderr   # progress notes aside
        assert "emitter.texture" in errors[0] and file in errors[0], r.stderr
        assert "Traceback" not in r.stderr
