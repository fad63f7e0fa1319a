"""Soft particles on the real draw path (emitter/draw_soft.wgsl on lavapipe): a sprite's alpha is
multiplied by clamp((d_scene - d_particle) / soft, 0, 1), both linear view depths, d_scene being
the opaque depth drawn earlier in the same frame.

One white additive particle at rest on the view axis, `gap` world units in front of a black,
opaque, drawn plane facing the camera: the plane adds nothing to the colour but writes the depth,
so the pixel under the sprite's centre is the sprite's alpha x the fade (the dot's falloff is 1
at its centre, to within the half-pixel offset). Oracle: the formula in numpy, per camera kind.
"""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene

PIXELS = 64
SOFT = 0.2
TOLERANCE = 0.02   # linear intensity: 8-bit sRGB output and the falloff at the centre pixel

CAMERAS = {
    "orthographic": 'kind = "orthographic"\ncenter = [0.0, 0.0]\nheight = 4.0',
    "perspective": 'kind = "perspective"\nposition = [0.0, 0.0, 5.0]\ntarget = [0.0, 0.0, 0.0]\n'
                   'fov_deg = 40.0',
}


def scene_text(camera: str, gap: float, *, soft: float = SOFT, plane: bool = True,
               blend: str = "additive", texture: str = "dot") -> str:
    text = f"""
[scene]
name = "soft"
seed = 5
fixed_dt = 0.016666667
size = [{PIXELS}, {PIXELS}]
background = "#000000"
[camera]
{CAMERAS[camera]}
[[entity]]
name = "mist"
[entity.emitter]
capacity = 1
rate = 0.0
bursts = [{{ time = 0.0, count = 1 }}]
lifetime = 100.0
speed = 0.0
position = [0.0, 0.0, {gap!r}]
gravity = [0.0, 0.0, 0.0]
size = 1.0
color = "#ffffff"
blend = "{blend}"
texture = "{texture}"
soft = {soft!r}
"""
    if plane:
        text += """
[[entity]]
name = "wall"
[entity.collider]
shape = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 0.0, 1.0]
visible = true
color = "#000000"
extent = 20.0
"""
    return text


def centre_intensity(tmp_path, text: str) -> float:
    """The linear intensity at the middle of the frame after one step."""
    scene = loads_scene(text, path=tmp_path / "soft.toml")
    with Engine(scene, size=(PIXELS, PIXELS)) as engine:
        engine.step()
        image = engine.render()
    rgb = image[PIXELS // 2 - 1:PIXELS // 2 + 1, PIXELS // 2 - 1:PIXELS // 2 + 1, :3]
    srgb = rgb.astype(np.float64) / 255.0
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    return float(linear.mean())


def fade(gap: float, soft: float = SOFT) -> float:
    return float(np.clip(gap / soft, 0.0, 1.0))


@pytest.mark.parametrize("camera", sorted(CAMERAS))
def test_alpha_follows_the_formula_at_three_depths(gpu, tmp_path, camera):
    for gap in (0.05, 0.1, 0.15):
        found = centre_intensity(tmp_path, scene_text(camera, gap))
        assert abs(found - fade(gap)) < TOLERANCE, (camera, gap, found, fade(gap))


@pytest.mark.parametrize("camera", sorted(CAMERAS))
def test_far_from_the_scene_or_without_it_a_soft_sprite_is_whole(gpu, tmp_path, camera):
    assert abs(centre_intensity(tmp_path, scene_text(camera, 0.5)) - 1.0) < TOLERANCE
    alone = centre_intensity(tmp_path, scene_text(camera, 0.05, plane=False))
    assert abs(alone - 1.0) < TOLERANCE   # nothing opaque drawn: the depth is the far plane


def test_behind_the_opaque_scene_it_is_hidden(gpu, tmp_path):
    assert centre_intensity(tmp_path, scene_text("orthographic", -0.05)) < 1e-3


def test_soft_zero_is_the_hard_sprite(gpu, tmp_path):
    """Without soft, the sprite is cut by the plane but whole in front of it."""
    assert abs(centre_intensity(tmp_path, scene_text("orthographic", 0.05, soft=0.0))
               - 1.0) < TOLERANCE


def test_alpha_blended_textured_sprites_fade_too(gpu, tmp_path):
    """The premultiplied alpha path: a white "soft" texture over black, faded."""
    whole = centre_intensity(tmp_path, scene_text("orthographic", 0.5, blend="alpha",
                                                  texture="soft"))
    half = centre_intensity(tmp_path, scene_text("orthographic", 0.1, blend="alpha",
                                                 texture="soft"))
    assert whole > 0.5
    assert abs(half - 0.5 * whole) < TOLERANCE, (whole, half)


def test_soft_with_opaque_blend_is_a_scene_error(tmp_path):
    with pytest.raises(SceneError) as error:
        loads_scene(scene_text("orthographic", 0.1, blend="opaque"), path=tmp_path / "s.toml")
    message = str(error.value)
    assert "\n" not in message and "soft" in message and 'blend "opaque"' in message
