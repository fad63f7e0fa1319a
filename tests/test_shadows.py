"""Shadows from the directional light on a real GPU (lavapipe in CI), against geometry worked out
here, independently of the shadow map.

Sphere colliders stand in front of a plane facing +z at z = -DEPTH: one of radius R at the
origin, and a smaller one off to the side and nearer the camera, so the pair is not symmetric
in the light's view (a mirrored map would cast the wrong shadow). An orthographic camera looks
down -z, so a world point (x, y) lands on a known pixel. A point p of the plane is in a sphere's
shadow exactly when the ray from p toward the light meets it: the distance from its centre c to
the line p + t L is below its radius, on the light's side (the analytic projection of the sphere
along L onto the plane, an ellipse). The expected shadow is the union of the two ellipses.

The images are the linear HDR scene target (Engine.render_hdr). Each plane pixel is compared with
the same pixel of the same scene rendered with ``shadows = false``: the floor's checker, its
hemisphere ambient and everything else but the shadow cancel in the ratio. The directional term
is I = 0.75 n.L of a 0.25 ambient (the default [light]; the plane's normal has no y, so its
hemisphere ambient is 1x), so a fully shadowed pixel keeps 0.25 / (0.25 + 0.75 n.L) of its light:
a pixel counts as shadowed when its ratio is below the midpoint between that and 1, i.e. less
than half the directional light reaches it.
"""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.core.shadows import light_box
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene

SIZE = 160            # pixels, square
HEIGHT = 6.0          # world units shown from bottom to top
PPU = SIZE / HEIGHT   # pixels per world unit
RADIUS = 0.6          # the sphere's at the origin
SPHERES = [((0.0, 0.0, 0.0), RADIUS), ((1.2, -1.3, 0.5), 0.35)]   # (centre, radius)
DEPTH = 2.5           # the plane's distance behind the sphere's centre
AMBIENT, INTENSITY = 0.25, 0.75   # the default [light]'s
EDGE = 2.0            # pixels either side of an outline left out of the counts
LIGHTS = [(0.5, 0.4, 1.0), (-0.7, -0.25, 1.0)]

_COLUMNS = (np.arange(SIZE) + 0.5 - SIZE / 2) / PPU
WORLD_X, WORLD_Y = np.meshgrid(_COLUMNS, -_COLUMNS)   # pixel centres, world units


def scene_text(direction, light: str = "") -> str:
    return f"""
[scene]
name = "shadows"
size = [{SIZE}, {SIZE}]
background = "#000000"
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = {HEIGHT}
[light]
direction = {list(direction)}
{light}
[[entity]]
name = "wall"
[entity.collider]
shape = "plane"
point = [0.0, 0.0, {-DEPTH}]
normal = [0.0, 0.0, 1.0]
extent = 20.0
""" + "".join(f"""
[[entity]]
name = "ball{k}"
[entity.collider]
shape = "sphere"
center = {list(centre)}
radius = {radius}
""" for k, (centre, radius) in enumerate(SPHERES))


def hdr(text: str) -> np.ndarray:
    engine = Engine(loads_scene(text), size=(SIZE, SIZE))
    try:
        return engine.render_hdr()[..., :3].astype(np.float64)
    finally:
        engine.close()


def ellipse_distance(direction) -> np.ndarray:
    """Per pixel, the least over the spheres of the distance in pixels from a sphere's centre
    to the line from the plane point under the pixel toward the light, minus its radius
    (negative: in the analytic shadow)."""
    light = np.asarray(direction, np.float64)
    light /= np.linalg.norm(light)
    nearest = np.full(WORLD_X.shape, np.inf)
    for (cx, cy, cz), radius in SPHERES:
        to_centre = np.stack([cx - WORLD_X, cy - WORLD_Y, np.full_like(WORLD_X, cz + DEPTH)], -1)
        along = to_centre @ light
        across = np.sqrt(np.maximum((to_centre ** 2).sum(-1) - along ** 2, 0.0))
        nearest = np.minimum(nearest, np.where(along > 0.0, (across - radius) * PPU, np.inf))
    return nearest


def plane_pixels() -> np.ndarray:
    """Pixels showing the plane: outside every sphere's silhouette by more than EDGE."""
    return np.all([np.hypot(WORLD_X - cx, WORLD_Y - cy) * PPU > radius * PPU + EDGE
                   for (cx, cy, _), radius in SPHERES], axis=0)


def shadow_ratio(direction, light: str = "") -> tuple[np.ndarray, float]:
    """Shadowed over unshadowed light per pixel, and the ratio of full shadow."""
    shadowed = hdr(scene_text(direction, light))
    plain = hdr(scene_text(direction, light + "\nshadows = false"))
    ratio = shadowed.sum(-1) / np.maximum(plain.sum(-1), 1e-6)
    unit = np.asarray(direction, np.float64) / np.linalg.norm(direction)
    full = AMBIENT / (AMBIENT + INTENSITY * unit[2])   # the plane's normal is +z
    return ratio, full


@pytest.mark.parametrize("direction", LIGHTS)
@pytest.mark.parametrize("light", ["", "shadow_extent = 3.0"], ids=["fitted", "extent"])
def test_sphere_shadow_matches_its_projection(direction, light):
    ratio, full = shadow_ratio(direction, light)
    plane = plane_pixels()
    expected = ellipse_distance(direction) < 0.0
    assert (expected & plane).sum() > 200, "the analytic shadow is too small to test"
    found = ratio < 0.5 * (1.0 + full)
    union = (found | expected) & plane
    iou = (found & expected & plane).sum() / union.sum()
    assert iou >= 0.9, f"IoU {iou:.3f} of the shadow and the sphere's projection"
    # inside the shadow away from its edge, only the ambient is left
    core = (ellipse_distance(direction) < -EDGE) & plane
    assert np.allclose(ratio[core], full, rtol=0.02), (ratio[core].min(), ratio[core].max(), full)


@pytest.mark.parametrize("direction", LIGHTS)
def test_unshadowed_plane_keeps_its_light(direction):
    """Outside the shadow (beyond the PCF edge), the plane is as bright as without shadows:
    no acne, no darkening; float16 rounding is 0.1 %, the stated tolerance 0.5 %."""
    ratio, _ = shadow_ratio(direction)
    lit = (ellipse_distance(direction) > EDGE) & plane_pixels()
    assert lit.sum() > 10000
    assert np.abs(ratio[lit] - 1.0).max() < 0.005, np.abs(ratio[lit] - 1.0).max()


def test_sphere_lit_side_has_no_acne():
    """The sphere's own lit half, seen head-on, is as bright as without shadows (it draws its
    back faces into the map, so its front never shadows itself)."""
    direction = LIGHTS[0]
    shadowed = hdr(scene_text(direction))
    plain = hdr(scene_text(direction, "shadows = false"))
    r = np.hypot(WORLD_X, WORLD_Y)
    inside = r * PPU < RADIUS * PPU - EDGE
    z = np.sqrt(np.maximum(RADIUS ** 2 - r ** 2, 0.0))
    normals = np.stack([WORLD_X, WORLD_Y, z], -1) / RADIUS
    unit = np.asarray(direction) / np.linalg.norm(direction)
    facing = inside & (normals @ unit > 0.2)
    assert facing.sum() > 300
    ratio = shadowed.sum(-1)[facing] / plain.sum(-1)[facing]
    assert np.abs(ratio - 1.0).max() < 0.005


CLOTH_CORNER, CLOTH_SIZE = (0.6, 0.9, 0.3), (1.2, 0.9)   # a flat patch facing the camera
CUBE_CENTRE, CUBE_EDGE = (-1.2, 1.0, 0.5), 0.8          # one mesh particle, axis-aligned
OTHER_CASTERS = f"""
[[entity]]
name = "sheet"
[entity.cloth]
resolution = [6, 5]
size = {list(CLOTH_SIZE)}
position = {list(CLOTH_CORNER)}
pins = "none"
gravity = [0.0, 0.0, 0.0]
[[entity]]
name = "crate"
[entity.emitter]
capacity = 4
rate = 0.0
bursts = [{{ time = 0.0, count = 1 }}]
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = {list(CUBE_CENTRE)}
size = {CUBE_EDGE}
mesh = "cube"
rotation_deg = [0.0, 0.0]
angular_velocity_deg = [0.0, 0.0]
"""


def wall_scene(direction, casters: str, light: str = "") -> str:
    """The wall alone (no spheres) with ``casters``."""
    return scene_text(direction, light).split("[[entity]]\nname = \"ball0\"")[0] + casters


def in_boxes_shadow(direction, boxes) -> np.ndarray:
    """Per pixel: whether the ray from the plane point under it toward the light passes
    through one of ``boxes`` [(low corner, high corner), ...] (the slab test)."""
    light = np.asarray(direction, np.float64) / np.linalg.norm(direction)
    origin = np.stack([WORLD_X, WORLD_Y, np.full_like(WORLD_X, -DEPTH)], -1)
    hit = np.zeros(WORLD_X.shape, bool)
    for low, high in boxes:
        with np.errstate(divide="ignore", invalid="ignore"):
            a = (np.asarray(low) - origin) / light
            b = (np.asarray(high) - origin) / light
        near = np.nanmax(np.minimum(a, b), -1)
        far = np.nanmin(np.maximum(a, b), -1)
        hit |= (near <= far) & (far > 0.0)
    return hit


@pytest.mark.parametrize("direction", LIGHTS)
def test_cloth_and_mesh_particles_cast(direction):
    """A flat cloth patch and a cube mesh particle at rest (no gravity) shadow the wall where
    the rays toward the light pass through the rectangle and the cube."""
    text = wall_scene(direction, OTHER_CASTERS)
    images = []
    for light in ("", "shadows = false"):
        engine = Engine(loads_scene(text.replace("[light]\n", f"[light]\n{light}\n")),
                        size=(SIZE, SIZE))
        try:
            engine.step(2)   # the particle is born
            images.append(engine.render_hdr()[..., :3].astype(np.float64))
        finally:
            engine.close()
    ratio = images[0].sum(-1) / np.maximum(images[1].sum(-1), 1e-6)
    unit = np.asarray(direction, np.float64) / np.linalg.norm(direction)
    full = AMBIENT / (AMBIENT + INTENSITY * unit[2])
    cx, cy, cz = CLOTH_CORNER
    sheet = ((cx, cy, cz - 1e-3), (cx + CLOTH_SIZE[0], cy + CLOTH_SIZE[1], cz + 1e-3))
    half = 0.5 * CUBE_EDGE
    cube = (tuple(np.subtract(CUBE_CENTRE, half)), tuple(np.add(CUBE_CENTRE, half)))
    # the wall where it shows: outside both casters' silhouettes seen head-on
    margin = EDGE / PPU
    plane = np.ones(WORLD_X.shape, bool)
    for low, high in (sheet, cube):
        plane &= ~((WORLD_X > low[0] - margin) & (WORLD_X < high[0] + margin)
                   & (WORLD_Y > low[1] - margin) & (WORLD_Y < high[1] + margin))
    for boxes in ([sheet], [cube]):
        expected = in_boxes_shadow(direction, boxes) & plane
        assert expected.sum() > 100, "the analytic shadow is too small to test"
    expected = in_boxes_shadow(direction, [sheet, cube])
    found = ratio < 0.5 * (1.0 + full)
    iou = (found & expected & plane).sum() / ((found | expected) & plane).sum()
    assert iou >= 0.9, f"IoU {iou:.3f} of the shadow and the casters' projection"


SLAB_CENTRE, SLAB_SIDE, SPRITE = (-1.0, 0.3, 0.0), 1.6, 0.08   # world units


def slab_text(count: int, alpha: float, cast: bool, light: str, wall: bool = True) -> str:
    """The wall, lit straight on (L = +z), and ``count`` sprites of edge SPRITE and ``alpha``
    spread evenly over a SLAB_SIDE square in front of it, facing the light. They are black and
    additive, so the camera sees the wall through them; an opaque white texture makes each
    cover its whole square (coverage 1). ``wall``: False leaves the wall out (a black
    background)."""
    head = (wall_scene((0.0, 0.0, 1.0), "", light) if wall
            else scene_text((0.0, 0.0, 1.0), light).split("[[entity]]")[0])
    return head + f"""
[[entity]]
name = "slab"
[entity.emitter]
capacity = {count}
rate = 0.0
bursts = [{{ time = 0.0, count = {count} }}]
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = {list(SLAB_CENTRE)}
shape = {{ kind = "box", size = [{SLAB_SIDE}, {SLAB_SIDE}, 0.0] }}
size = {SPRITE}
color = "#000000"
alpha_curve = [{alpha}]
blend = "additive"
texture = "white.png"
cast_shadows = {"true" if cast else "false"}
"""


def slab_light(tmp_path, count: int, alpha: float, cast: bool = True,
               light: str = "") -> np.ndarray:
    from PIL import Image

    Image.new("RGBA", (16, 16), (255, 255, 255, 255)).save(tmp_path / "white.png")
    scene = loads_scene(slab_text(count, alpha, cast, light), path=tmp_path / "slab.toml")
    engine = Engine(scene, size=(SIZE, SIZE))
    try:
        engine.step(2)   # the burst is born
        return engine.render_hdr()[..., :3].astype(np.float64).sum(-1)
    finally:
        engine.close()


@pytest.mark.parametrize("count, alpha", [(4000, 0.05), (6000, 0.1)])
def test_particle_slab_transmits_exp_minus_tau(tmp_path, count, alpha):
    """Behind the slab's middle (away from its edges, where the density falls off over one
    sprite), the wall gets exp(-tau) of the directional light, tau = N a s^2 / A, within 15 %.
    The directional share comes from the same scene without shadows: lit = ambient + D, with
    D / ambient = 0.75 / 0.25 (n.L = 1)."""
    shadowed = slab_light(tmp_path, count, alpha)
    plain = slab_light(tmp_path, count, alpha, light="shadows = false")
    inset = 0.5 * SLAB_SIDE - SPRITE - 2.0 / PPU
    middle = ((np.abs(WORLD_X - SLAB_CENTRE[0]) < inset)
              & (np.abs(WORLD_Y - SLAB_CENTRE[1]) < inset))
    ratio = shadowed[middle] / plain[middle]
    transmitted = (ratio * (AMBIENT + INTENSITY) - AMBIENT) / INTENSITY
    tau = count * alpha * SPRITE ** 2 / SLAB_SIDE ** 2
    assert 0.3 < tau < 2.0
    measured = transmitted.mean()
    assert abs(measured / np.exp(-tau) - 1.0) < 0.15, (measured, np.exp(-tau), tau)
    # outside the slab's shadow the wall is as lit as without shadows
    clear = ((np.abs(WORLD_X - SLAB_CENTRE[0]) > 0.5 * SLAB_SIDE + SPRITE + 2.0 / PPU)
             | (np.abs(WORLD_Y - SLAB_CENTRE[1]) > 0.5 * SLAB_SIDE + SPRITE + 2.0 / PPU))
    assert np.abs(shadowed[clear] / plain[clear] - 1.0).max() < 0.005


def test_particles_cast_only_when_asked(tmp_path):
    """``cast_shadows = false``: the wall is the same as without shadows, pixel for pixel."""
    quiet = slab_light(tmp_path, 4000, 0.1, cast=False)
    plain = slab_light(tmp_path, 4000, 0.1, cast=False, light="shadows = false")
    assert np.array_equal(quiet, plain)
    assert not np.array_equal(slab_light(tmp_path, 4000, 0.1), plain)


def test_particles_that_stop_casting_leave_no_shadow(tmp_path):
    """An emitter edited to cast_shadows = false: the opacity layers it filled are emptied, and
    the wall is lit as if it had never cast (a small sphere keeps the shadows on, in a box that
    holds the slab too)."""
    from PIL import Image

    Image.new("RGBA", (16, 16), (255, 255, 255, 255)).save(tmp_path / "white.png")
    path = tmp_path / "slab.toml"
    ball = collider_text("ball", (1.8, 1.8, 0.0), 0.2)

    def scene(cast: bool):
        return loads_scene(slab_text(4000, 0.1, cast, "shadow_extent = 4.0") + ball, path=path)

    def light(engine) -> np.ndarray:
        engine.step(2)
        return engine.render_hdr()[..., :3].astype(np.float64).sum(-1)

    with Engine(scene(False), size=(SIZE, SIZE)) as engine:
        plain = light(engine)
    with Engine(scene(True), size=(SIZE, SIZE)) as engine:
        cast = light(engine)
        engine.reload(scene(False))
        after = light(engine)
    assert not np.array_equal(cast, plain)
    assert np.array_equal(after, plain)


def dots(name: str, centre, receive: bool) -> str:
    """One white additive dot of edge 0.4 at rest at ``centre``."""
    return f"""
[[entity]]
name = "{name}"
[entity.emitter]
capacity = 1
rate = 0.0
bursts = [{{ time = 0.0, count = 1 }}]
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = {list(centre)}
size = 0.4
color = "#ffffff"
receive_shadows = {"true" if receive else "false"}
"""


def peak(image: np.ndarray, centre) -> float:
    """The brightest pixel within 2 pixels of where world point ``centre`` lands."""
    near = np.hypot(WORLD_X - centre[0], WORLD_Y - centre[1]) * PPU < 2.0
    return float(image[near].max())


def dot_light(text: str, path=None) -> np.ndarray:
    engine = Engine(loads_scene(text, path=path), size=(SIZE, SIZE))
    try:
        engine.step(2)
        return engine.render_hdr()[..., :3].astype(np.float64).sum(-1)
    finally:
        engine.close()


@pytest.mark.parametrize("receive", [True, False])
def test_sprites_receive_the_shadow_of_a_solid(receive):
    """A dot behind a sphere from the light keeps the ambient share of its colour, a dot in the
    open all of it (ambient + intensity = 1 for the default light); without receive_shadows both
    keep their colour."""
    hidden, open_ = (0.0, 0.8, 0.0), (0.0, -1.2, 0.0)
    text = (scene_text((1.0, 0.0, 0.2)).split("[[entity]]")[0]
            + collider_text("ball", (1.8, 0.8, 0.0), 0.6)
            + dots("hidden", hidden, receive) + dots("open", open_, receive))
    image = dot_light(text)
    ratio = peak(image, hidden) / peak(image, open_)
    assert ratio == pytest.approx(AMBIENT / (AMBIENT + INTENSITY) if receive else 1.0, rel=0.02)


def collider_text(name: str, centre, radius: float) -> str:
    return (f'\n[[entity]]\nname = "{name}"\n[entity.collider]\nshape = "sphere"\n'
            f"center = {list(centre)}\nradius = {radius}\n")


def test_sprites_receive_the_light_through_casting_particles(tmp_path):
    """A dot behind the middle of a casting slab from the light (on a black background) gets
    ambient + intensity x exp(-tau) of its colour, tau = N a s^2 / A, within 15 % of the
    transmitted share; a dot outside the slab's shadow all of it."""
    from PIL import Image

    Image.new("RGBA", (16, 16), (255, 255, 255, 255)).save(tmp_path / "white.png")
    count, alpha, edge = 8000, 0.005, 0.2
    behind = (SLAB_CENTRE[0], SLAB_CENTRE[1], -1.5)
    elsewhere = (1.8, -1.8, -1.5)
    text = (slab_text(count, alpha, True, "", wall=False).replace(f"size = {SPRITE}",
                                                                   f"size = {edge}")
            + dots("behind", behind, True) + dots("elsewhere", elsewhere, True))
    image = dot_light(text, tmp_path / "slab.toml")
    ratio = peak(image, behind) / peak(image, elsewhere)
    transmitted = (ratio * (AMBIENT + INTENSITY) - AMBIENT) / INTENSITY
    tau = count * alpha * edge ** 2 / SLAB_SIDE ** 2
    assert abs(transmitted / np.exp(-tau) - 1.0) < 0.15, (transmitted, np.exp(-tau))


def test_a_new_shadow_resolution_rebinds_every_receiver(tmp_path):
    """Reloading with another shadow_resolution makes a new map: the collider, cloth, mesh and
    receiving sprite draws bind it, and the casters' shadow is where it was."""
    direction = LIGHTS[0]
    text = wall_scene(direction, OTHER_CASTERS + dots("dot", (-2.0, -2.0, 0.0), True))
    engine = Engine(loads_scene(text), size=(SIZE, SIZE))
    try:
        engine.step(2)
        before = engine.render_hdr()[..., :3].astype(np.float64).sum(-1)
        engine.reload(loads_scene(text.replace("[light]\n", "[light]\nshadow_resolution = 512\n")))
        engine.step(1)
        after = engine.render_hdr()[..., :3].astype(np.float64).sum(-1)
    finally:
        engine.close()
    darker = before < 0.9 * before.max()
    assert darker.sum() > 200
    # the same shadow, edges moved by at most the coarser texels
    assert ((before < 0.6 * before.max()) != (after < 0.6 * after.max())).mean() < 0.01


@pytest.mark.parametrize("gravity, drag", [((0.0, -9.81, 0.0), 0.0), ((0.0, 0.6, 0.0), 0.5),
                                           ((0.0, 0.0, 0.0), 0.0)])
def test_an_emitters_bounding_sphere_holds_its_particles(gravity, drag):
    """The sphere the light's box is fitted to holds every alive particle the GPU simulated
    (falling particles above the cut at the sideways reach; a floor stops them in scenes)."""
    from emberfx.systems.emitter.opacity import caster_sphere

    text = f"""
[scene]
name = "reach"
[[entity]]
name = "puffs"
[entity.emitter]
capacity = 4000
rate = 2000.0
lifetime = [1.0, 2.0]
speed = [1.0, 3.0]
spread_deg = 30.0
position = [0.5, 1.0, -0.5]
gravity = {list(gravity)}
drag = {drag}
size = 0.1
cast_shadows = true
"""
    with Engine(loads_scene(text), size=(32, 32)) as engine:
        engine.step(150)
        state = engine.state("puffs")
        component = engine.scene.entities[0].components["emitter"]
    alive = state["alive"].astype(bool)
    centre, radius = caster_sphere(component)
    positions = state["position"][alive]
    assert len(positions) > 1000
    distance = np.linalg.norm(positions - np.asarray(centre), axis=1)
    kept = positions[:, 1] > 1.0 - radius if gravity[1] < 0 else np.ones(len(positions), bool)
    assert distance[kept].max() <= radius, (distance.max(), radius)


def test_without_shadows_nothing_draws_into_the_maps(tmp_path):
    """shadows = false leaves every caster's draw out of the frame (the maps would go unread);
    turning them on by a reload brings the draws back."""
    from PIL import Image

    Image.new("RGBA", (16, 16), (255, 255, 255, 255)).save(tmp_path / "white.png")
    path = tmp_path / "slab.toml"
    text = slab_text(100, 0.1, True, "") + OTHER_CASTERS + collider_text("ball", (0, 0, 0), 0.3)
    casters = {"sheet:cloth:shadow", "crate:mesh:shadow", "ball:collider:shadow",
               "slab:emitter:opacity"}
    off = text.replace("[light]\n", "[light]\nshadows = false\n")
    with Engine(loads_scene(off, path=path), size=(32, 32)) as engine:
        engine.render()
        assert not casters & set(engine.passes())
        engine.reload(loads_scene(text, path=path))
        engine.render()
        assert casters <= set(engine.passes())


def test_light_box_holds_the_casters():
    """Each caster's bounding sphere lies inside the clip box [-1, 1]^2 x [0, 1]; the texel
    is the box's width over the resolution."""
    casters = [((0.0, 1.0, 0.0), 0.5), ((3.0, 0.2, -1.0), 0.3)]
    box = light_box((0.3, 0.8, 0.5), casters, 1024, 1.5)
    assert box is not None
    matrix, texel = box
    for centre, radius in casters:
        for offset in np.vstack([np.eye(3), -np.eye(3)]):
            clip = matrix @ np.append(np.add(centre, radius * offset), 1.0)
            assert np.all(np.abs(clip[:2]) < 1.0) and 0.0 < clip[2] < 1.0
    width = 2.0 / np.linalg.norm(matrix[0, :3])
    assert texel == pytest.approx(width / 1024)
    assert light_box((0.0, 1.0, 0.0), [], 1024, 1.5) is None


@pytest.mark.parametrize("line, message", [
    ("shadow_resolution = 8", "light.shadow_resolution: expected int >= 16, found 8"),
    ("shadow_resolution = 10000", "light.shadow_resolution: expected int <= 8192, found 10000"),
    ("softness = -1.0", "light.softness: expected float >= 0.0, found -1"),
    ("shadows = 1", "light.shadows: expected bool, found 1"),
    ("shadow_extent = 0.0", "light.shadow_extent: expected float > 0.0, found 0"),
    ("shadow_extnt = 2.0", "did you mean 'shadow_extent'?"),
])
def test_bad_light_fields(line, message):
    with pytest.raises(SceneError) as caught:
        loads_scene(f'[scene]\nname = "x"\n[light]\n{line}\n')
    text = str(caught.value)
    assert message in text and "\n" not in text, text
