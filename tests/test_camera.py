"""Camera mouse interaction (orbit, pan, zoom, ray, view_plane_point) against the camera's own
matrices: a point is checked by projecting it with projection_matrix(w / h) @ view_matrix() and
converting to cursor pixels. All float64; tolerances are in pixels or world units as stated."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from emberfx.model.camera import PITCH_LIMIT_DEG, Camera

PIXEL_TOL = 1e-6     # pixels: float64 round trips through the 4x4 matrices
WORLD_TOL = 1e-9     # world units, for scenes of size ~10

CAMERAS = {
    "perspective": Camera(),
    "tilted": Camera(position=(3.0, -2.0, 4.5), target=(0.5, 1.0, -1.0), up=(0.2, 1.0, 0.1),
                     fov_deg=70.0, near=0.1, far=100.0),
    "narrow": Camera(position=(0.0, 0.0, 40.0), target=(0.0, 0.0, 0.0), fov_deg=8.0),
    "orthographic": Camera(kind="orthographic", center=(1.5, -0.5), height=6.0),
    # fitted to a reference aspect: VIEWPORTS has views both wider and narrower than each
    "perspective-contain": Camera(position=(1.0, 2.0, 7.0), target=(0.0, 0.5, 0.0), fov_deg=45.0,
                                  fit="contain", reference_aspect=1.0),
    "orthographic-width": Camera(kind="orthographic", center=(-2.0, 1.0), height=3.0, fit="width",
                                 reference_aspect=4 / 3),
    "orthographic-contain": Camera(kind="orthographic", center=(0.5, 0.5), height=2.5,
                                   fit="contain", reference_aspect=1.5),
}
ORTHOGRAPHIC = [n for n, c in CAMERAS.items() if c.kind == "orthographic"]
VIEWPORTS = [(1280, 720), (300, 500), (64, 48)]


def copy(camera: Camera) -> Camera:
    return dataclasses.replace(camera)


def to_pixel(camera: Camera, point, viewport) -> np.ndarray:
    """World point -> (px, py, depth) with (0, 0) at the top-left, as Camera.ray expects."""
    w, h = viewport
    clip = camera.projection_matrix(w / h) @ camera.view_matrix() @ np.append(point, 1.0)
    ndc = clip[:3] / clip[3]
    return np.array([(ndc[0] + 1.0) * 0.5 * w, (1.0 - ndc[1]) * 0.5 * h, ndc[2]])


def pixels(viewport):
    w, h = viewport
    return [(0.0, 0.0), (w, h), (w * 0.5, h * 0.5), (0.37 * w, 0.81 * h), (w - 0.5, 0.5)]


def check_invariants(camera: Camera) -> None:
    Camera(**{f.name: getattr(camera, f.name) for f in dataclasses.fields(camera)})


@pytest.mark.parametrize("name", CAMERAS)
@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda v: f"{v[0]}x{v[1]}")
def test_ray_points_project_back_to_the_pixel(name, viewport):
    camera = CAMERAS[name]
    for px, py in pixels(viewport):
        origin, direction = camera.ray(px, py, viewport)
        assert direction.shape == (3,) and abs(np.linalg.norm(direction) - 1.0) < 1e-12
        # the origin is on the near plane (depth 0), and depth grows along the ray
        assert abs(to_pixel(camera, origin, viewport)[2]) < 1e-9
        depths = []
        for t in (0.0, 0.5, 3.0, 20.0, 90.0):
            p = to_pixel(camera, origin + t * direction, viewport)
            np.testing.assert_allclose(p[:2], (px, py), atol=PIXEL_TOL)
            depths.append(p[2])
        assert np.all(np.diff(depths) > 0)


def test_ray_through_the_centre_is_the_view_direction():
    camera = CAMERAS["tilted"]
    origin, direction = camera.ray(320, 240, (640, 480))
    forward = np.subtract(camera.target, camera.position)
    np.testing.assert_allclose(direction, forward / np.linalg.norm(forward), atol=1e-12)
    ortho = CAMERAS["orthographic"]
    origin, direction = ortho.ray(100, 50, (200, 100))
    np.testing.assert_allclose(direction, (0.0, 0.0, -1.0))
    np.testing.assert_allclose(origin[:2], ortho.center, atol=WORLD_TOL)


def test_ray_rejects_an_empty_viewport():
    with pytest.raises(ValueError, match="viewport"):
        Camera().ray(0, 0, (0, 10))


# ------------------------------------------------------------------------------------------ orbit
def elevation_deg(camera: Camera) -> float:
    offset = np.subtract(camera.position, camera.target)
    up = np.asarray(camera.up) / np.linalg.norm(camera.up)
    return math.degrees(math.asin(offset @ up / np.linalg.norm(offset)))


@pytest.mark.parametrize("name", ["perspective", "tilted"])
def test_orbit_keeps_the_distance_and_target(name):
    camera = copy(CAMERAS[name])
    start = np.linalg.norm(np.subtract(camera.position, camera.target))
    target = camera.target
    for dx, dy in [(40, 0), (0, 25), (-300, 140), (7, -90), (1000, 1000)]:
        camera.orbit(dx, dy, (800, 600))
        assert camera.target == target
        distance = np.linalg.norm(np.subtract(camera.position, camera.target))
        assert abs(distance - start) < 1e-9 * start
        check_invariants(camera)


def test_orbit_turns_once_per_viewport_width_and_follows_the_drag():
    camera = Camera(position=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0))
    camera.orbit(200, 0, (800, 600))          # a quarter width: a quarter turn
    np.testing.assert_allclose(camera.position, (-5.0, 0.0, 0.0), atol=1e-12)  # swung left
    camera.orbit(600, 0, (800, 600))          # the rest of the turn
    np.testing.assert_allclose(camera.position, (0.0, 0.0, 5.0), atol=1e-12)
    camera.orbit(0, 50, (800, 600))           # drag down: the camera rises
    assert camera.position[1] > 0.0
    assert abs(elevation_deg(camera) - 50 * 360 / 800) < 1e-9


def test_orbit_pitch_is_clamped_and_never_flips():
    camera = Camera(position=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0))
    for dy in [300] * 10 + [-300] * 20:
        camera.orbit(13, dy, (800, 600))
        assert abs(elevation_deg(camera)) <= PITCH_LIMIT_DEG + 1e-9
        # the screen's up stays on the same side as the world's up: no flip over the pole
        assert camera.view_matrix()[1, :3] @ np.asarray(camera.up) > 0.0
        check_invariants(camera)
    assert abs(elevation_deg(camera) + PITCH_LIMIT_DEG) < 1e-9


def test_orbit_from_the_pole_moves_off_it_and_orthographic_is_unchanged():
    camera = Camera(position=(0.0, 5.0, 0.0), target=(0.0, 0.0, 0.0))   # straight above
    camera.orbit(0, -10, (800, 600))
    assert abs(elevation_deg(camera) - (90.0 - 10 * 360 / 800)) < 1e-9
    ortho = copy(CAMERAS["orthographic"])
    ortho.orbit(100, 100, (800, 600))
    assert ortho == CAMERAS["orthographic"]


# -------------------------------------------------------------------------------------------- pan
@pytest.mark.parametrize("name", ORTHOGRAPHIC)
@pytest.mark.parametrize("viewport", [(800, 600), (300, 500)], ids=lambda v: f"{v[0]}x{v[1]}")
def test_pan_orthographic_keeps_the_world_point_under_the_cursor(viewport, name):
    camera = copy(CAMERAS[name])
    for (px, py), (dx, dy) in [((100, 200), (35, -12)), ((10.5, 3.25), (-200, 170))]:
        grabbed = camera.ray(px, py, viewport)[0]
        camera.pan(dx, dy, viewport)
        after = camera.ray(px + dx, py + dy, viewport)[0]
        np.testing.assert_allclose(after[:2], grabbed[:2], atol=WORLD_TOL)
        np.testing.assert_allclose(to_pixel(camera, grabbed, viewport)[:2], (px + dx, py + dy),
                                   atol=PIXEL_TOL)
        check_invariants(camera)


@pytest.mark.parametrize("name", ["perspective", "tilted", "narrow", "perspective-contain"])
def test_pan_perspective_keeps_the_point_at_target_depth_under_the_cursor(name):
    camera = copy(CAMERAS[name])
    viewport = (640, 360)
    offset = np.subtract(camera.target, camera.position)
    for (px, py), (dx, dy) in [((320, 180), (50, 20)), ((12, 300), (-80, -45))]:
        grabbed = camera.view_plane_point(px, py, viewport, camera.target)
        camera.pan(dx, dy, viewport)
        np.testing.assert_allclose(to_pixel(camera, grabbed, viewport)[:2], (px + dx, py + dy),
                                   atol=PIXEL_TOL)
        # position and target move together: the view direction and distance are unchanged
        np.testing.assert_allclose(np.subtract(camera.target, camera.position), offset, atol=1e-12)
        check_invariants(camera)


# ------------------------------------------------------------------------------------------- zoom
@pytest.mark.parametrize("name", ORTHOGRAPHIC)
@pytest.mark.parametrize("cursor", [None, (0.0, 0.0), (611.0, 97.5), (640.0, 360.0)])
def test_zoom_orthographic_keeps_the_cursor_point_fixed(cursor, name):
    camera = copy(CAMERAS[name])
    viewport = (640, 360)
    at = cursor if cursor is not None else (320.0, 180.0)   # no cursor: the centre stays
    for steps in (1, 3, -2, 0.5, -7):
        grabbed = camera.ray(*at, viewport)[0]
        height = camera.height
        camera.zoom(steps, viewport, cursor)
        assert math.isclose(camera.height, height * 0.85 ** steps, rel_tol=1e-12)
        np.testing.assert_allclose(camera.ray(*at, viewport)[0][:2], grabbed[:2], atol=WORLD_TOL)
        check_invariants(camera)


def test_zoom_orthographic_height_stays_positive_and_finite():
    camera = copy(CAMERAS["orthographic"])
    camera.zoom(10_000, (640, 360), (5, 5))
    assert camera.height > 0.0
    camera.zoom(-100_000, (640, 360))
    assert math.isfinite(camera.height)
    check_invariants(camera)


@pytest.mark.parametrize("name", ["perspective", "tilted"])
def test_zoom_perspective_dollies_towards_the_target_and_never_passes_it(name):
    camera = copy(CAMERAS[name])
    direction = np.subtract(camera.target, camera.position)
    direction /= np.linalg.norm(direction)
    distance = np.linalg.norm(np.subtract(camera.target, camera.position))
    camera.zoom(1, (640, 360), cursor=(3, 3))
    assert math.isclose(np.linalg.norm(np.subtract(camera.target, camera.position)),
                        distance * 0.85, rel_tol=1e-12)
    for steps in [5, 50, 500, 0.5]:
        camera.zoom(steps, (640, 360))
        offset = np.subtract(camera.target, camera.position)
        assert np.linalg.norm(offset) > camera.near          # never reaches it
        # nor passes it: the camera is still on the same side, looking the same way
        np.testing.assert_allclose(offset / np.linalg.norm(offset), direction, atol=1e-12)
        check_invariants(camera)
    camera.zoom(-1000, (640, 360))
    assert np.linalg.norm(np.subtract(camera.target, camera.position)) <= camera.far * 0.5 + 1e-9
    check_invariants(camera)


# ------------------------------------------------------------------------------ view_plane_point
@pytest.mark.parametrize("name", CAMERAS)
def test_view_plane_point_lies_on_the_plane_and_projects_to_the_pixel(name):
    camera = CAMERAS[name]
    viewport = (500, 300)
    _, _, _, forward = camera.basis()
    for through in [(0.0, 1.0, 0.0), (0.7, -0.3, -2.0), camera.target]:
        for px, py in pixels(viewport):
            p = camera.view_plane_point(px, py, viewport, through)
            if camera.kind == "orthographic":
                assert p[2] == through[2]
            else:
                assert abs((p - np.asarray(through)) @ forward) < WORLD_TOL
            np.testing.assert_allclose(to_pixel(camera, p, viewport)[:2], (px, py), atol=PIXEL_TOL)


def test_view_plane_point_behind_the_camera_uses_the_target_depth():
    camera = Camera(position=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0))
    p = camera.view_plane_point(100, 40, (400, 300), through=(0.0, 0.0, 9.0))
    assert abs(p[2]) < WORLD_TOL
    np.testing.assert_allclose(to_pixel(camera, p, (400, 300))[:2], (100, 40), atol=PIXEL_TOL)


# -------------------------------------------------------------------------------------------- fit
def ndc(camera: Camera, point, aspect: float) -> np.ndarray:
    clip = camera.projection_matrix(aspect) @ camera.view_matrix() @ np.append(point, 1.0)
    return clip[:3] / clip[3]


# orthographic, height 2 at a 16:9 reference; each row: fit, viewport aspect, and the half width
# and half height (world units) that must land on the viewport's edges, worked out by hand
ORTHO_FITS = [
    ("height", 4 / 3, 4 / 3, 1.0),            # the height stays; width = 1 * 4/3
    ("width", 4 / 3, 16 / 9, 4 / 3),          # the 16:9 width stays; height = (16/9) / (4/3)
    ("width", 21 / 9, 16 / 9, 16 / 21),       # a wider view shows less height
    ("contain", 4 / 3, 16 / 9, 4 / 3),        # narrower than 16:9: keeps the width
    ("contain", 21 / 9, 7 / 3, 1.0),          # wider: keeps the height; width = 21/9
    ("contain", 16 / 9, 16 / 9, 1.0),         # at the reference: exactly the reference view
]


@pytest.mark.parametrize("fit,aspect,half_w,half_h", ORTHO_FITS)
def test_orthographic_fit_puts_known_points_on_the_edges(fit, aspect, half_w, half_h):
    camera = Camera(kind="orthographic", center=(0.0, 0.0), height=2.0, fit=fit,
                    reference_aspect=16 / 9)
    for point, want in [((half_w, 0.0, 0.0), (1.0, 0.0)), ((-half_w, 0.0, 0.0), (-1.0, 0.0)),
                        ((0.0, half_h, 0.0), (0.0, 1.0)), ((0.0, -half_h, 0.0), (0.0, -1.0)),
                        ((half_w / 2, -half_h / 2, 0.0), (0.5, -0.5))]:
        np.testing.assert_allclose(ndc(camera, point, aspect)[:2], want, atol=1e-12)


def test_orthographic_fit_width_edge_pixels_and_offset_centre():
    """The issue's case: height 2 at 16:9, shown 4:3 with fit = "width", shows x in [-16/9, 16/9];
    with the centre moved the window moves with it, and the cursor at the first and last pixel
    edge hits those x."""
    camera = Camera(kind="orthographic", center=(3.0, -1.0), height=2.0, fit="width",
                    reference_aspect=16 / 9)
    assert ndc(camera, (3.0 + 16 / 9, -1.0, 0.0), 4 / 3)[0] == pytest.approx(1.0, abs=1e-12)
    assert ndc(camera, (3.0 - 16 / 9, -1.0, 0.0), 4 / 3)[0] == pytest.approx(-1.0, abs=1e-12)
    left = camera.ray(0.0, 240.0, (640, 480))[0]
    right = camera.ray(640.0, 0.0, (640, 480))[0]
    np.testing.assert_allclose(left[:2], (3.0 - 16 / 9, -1.0), atol=1e-12)
    np.testing.assert_allclose(right[:2], (3.0 + 16 / 9, -1.0 + 4 / 3), atol=1e-12)


# perspective, fov 90 degrees (tan 45 = 1) at a 16:9 reference, the eye 5 units from the origin:
# at depth 5 the reference view is 5 high and 5 * 16/9 wide (half extents)
PERSPECTIVE_FITS = [
    ("height", 1.0, 5.0, 5.0),
    ("width", 1.0, 80 / 9, 80 / 9),           # square view: the 16:9 width, so as much height
    ("width", 32 / 9, 80 / 9, 2.5),           # twice as wide as the reference: half the height
    ("contain", 1.0, 80 / 9, 80 / 9),
    ("contain", 32 / 9, 160 / 9, 5.0),
]


@pytest.mark.parametrize("fit,aspect,half_w,half_h", PERSPECTIVE_FITS)
def test_perspective_fit_puts_known_points_on_the_edges(fit, aspect, half_w, half_h):
    camera = Camera(position=(0.0, 0.0, 5.0), target=(0.0, 0.0, 0.0), fov_deg=90.0, fit=fit,
                    reference_aspect=16 / 9)
    for point, want in [((half_w, 0.0, 0.0), (1.0, 0.0)), ((0.0, -half_h, 0.0), (0.0, -1.0)),
                        ((-half_w, half_h, 0.0), (-1.0, 1.0))]:
        np.testing.assert_allclose(ndc(camera, point, aspect)[:2], want, atol=1e-12)
    # twice as far, twice the extent
    far = ndc(camera, (2 * half_w, 0.0, -5.0), aspect)
    assert far[0] == pytest.approx(1.0, abs=1e-12)


def test_without_a_reference_every_fit_is_the_plain_view():
    plain = Camera(kind="orthographic", height=2.0).projection_matrix(0.5)
    for fit in ("width", "contain"):
        np.testing.assert_array_equal(
            Camera(kind="orthographic", height=2.0, fit=fit).projection_matrix(0.5), plain)


def test_with_reference_takes_the_scene_size_unless_the_camera_sets_one():
    camera = Camera(kind="orthographic", fit="width")
    live = camera.with_reference((1920, 1080))
    assert live.reference_aspect == 1920 / 1080 and camera.reference_aspect is None
    assert live is not camera and live.fit == "width"
    own = Camera(fit="contain", reference_aspect=2.0).with_reference((1920, 1080))
    assert own.reference_aspect == 2.0


@pytest.mark.parametrize("text,pieces", [
    ('fit = "cover"', ["camera.fit", "'height', 'width', 'contain'", "cover"]),
    ("reference_aspect = 0.0", ["camera.reference_aspect", "> 0"]),
])
def test_bad_fit_fields_are_one_line_errors(text, pieces):
    from emberfx.core.errors import SceneError
    from emberfx.model.scene import loads_scene

    with pytest.raises(SceneError) as info:
        loads_scene(f'[camera]\nkind = "orthographic"\n{text}\n', path="fit.toml")
    message = str(info.value)
    assert "\n" not in message and "fit.toml" in message
    for piece in pieces:
        assert piece in message, message


FIT_RENDERS = {
    # fit, render size, and the quad's pixel rectangle worked out by hand: [x0, x1) x [y0, y1)
    # "width" at 4:3: the 32/9 reference width spans all 160 px; the height shown is 8/3, so
    # the quad's 2 units are 90 px of 120, 15 px below the top
    "width-4:3": ("width", (160, 120), (0, 160, 15, 105)),
    # "contain" at 4:3: the same (narrower than the reference: the width is kept)
    "contain-4:3": ("contain", (160, 120), (0, 160, 15, 105)),
    # "contain" at 21:9: the height is kept (2 units = 90 px), the width shown is 14/3, so the
    # quad's 32/9 are 160 px of 210, 25 px from the left
    "contain-21:9": ("contain", (210, 90), (25, 185, 0, 90)),
    # "height" at 4:3 (the default): 2 units = 120 px, 4/3 * 2 shown across, the quad cropped
    "height-4:3": ("height", (160, 120), (0, 160, 0, 120)),
}


@pytest.mark.parametrize("case", FIT_RENDERS)
def test_engine_renders_the_scene_size_view_with_fit(gpu, case):
    """A white world quad exactly as large as the reference view (16:9 from [scene] size, height
    2) drawn through the Engine: where it lands in other window shapes is known."""
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import EntitySpec, Scene, SceneSettings
    from emberfx.systems.life.component import Life

    fit, size, (x0, x1, y0, y1) = FIT_RENDERS[case]
    life = Life(size=(16, 9), display="quad", quad_center=(0.0, 0.0, 0.0),
                quad_size=(32 / 9, 2.0), alive_color="#ffffff", dead_color="#ffffff", paused=True)
    scene = Scene(SceneSettings(size=(1600, 900), background="#0000ff"),
                  Camera(kind="orthographic", height=2.0, fit=fit),
                  [EntitySpec("quad", {"life": life})])
    engine = Engine(scene, size=size)
    assert engine.camera.reference_aspect == 16 / 9 and scene.camera.reference_aspect is None
    white = (engine.render()[:, :, :3] == 255).all(axis=2)
    engine.close()
    expected = np.zeros(white.shape, bool)
    expected[y0:y1, x0:x1] = True
    np.testing.assert_array_equal(white, expected)


def test_reload_with_a_new_scene_size_refits_the_live_camera(gpu):
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import Scene, SceneSettings

    scene = Scene(SceneSettings(size=(1600, 900)), Camera(kind="orthographic", fit="contain"))
    engine = Engine(scene, size=(64, 48))
    assert engine.camera.reference_aspect == 16 / 9
    engine.reload(dataclasses.replace(scene, settings=SceneSettings(size=(900, 900))))
    assert engine.camera.reference_aspect == 1.0
    own = Camera(kind="orthographic", reference_aspect=2.5)
    engine.reload(dataclasses.replace(scene, camera=own))
    assert engine.camera.reference_aspect == 2.5
    engine.close()


# ------------------------------------------------------------------------------------ depth range
# WebGPU clips depth to [0, 1]: the near plane must map to 0 and the far plane to 1. Perspective
# depth at view distance d is f (d - n) / (d (f - n)); orthographic depth is (d - n) / (f - n).
# With n = 1, f = 101 the perspective values are worked out by hand: d = 2 -> 101 / 200,
# d = 11 -> 101 / 110; orthographic with n = 1, f = 11: d = 3.5 -> 0.25, d = 6 -> 0.5.
PERSPECTIVE_DEPTHS = [(1.0, 0.0), (2.0, 0.505), (11.0, 101 / 110), (101.0, 1.0)]
ORTHOGRAPHIC_DEPTHS = [(1.0, 0.0), (3.5, 0.25), (6.0, 0.5), (11.0, 1.0)]


@pytest.mark.parametrize("distance,depth", PERSPECTIVE_DEPTHS)
def test_perspective_depth_at_known_view_distances(distance, depth):
    straight = Camera(position=(0.0, 0.0, 0.0), target=(0.0, 0.0, -1.0), near=1.0, far=101.0)
    assert ndc(straight, (0.0, 0.0, -distance), 16 / 9)[2] == pytest.approx(depth, abs=1e-12)
    # off-axis and from a tilted camera: depth depends only on the distance along the view axis
    assert ndc(straight, (0.3 * distance, -0.2 * distance, -distance), 0.5)[2] == pytest.approx(
        depth, abs=1e-12)
    tilted = Camera(position=(3.0, -2.0, 4.5), target=(0.5, 1.0, -1.0), up=(0.2, 1.0, 0.1),
                    near=1.0, far=101.0)
    eye, right, up, forward = tilted.basis()
    point = eye + distance * forward + 0.1 * distance * (right - up)
    assert ndc(tilted, point, 4 / 3)[2] == pytest.approx(depth, abs=1e-9)


@pytest.mark.parametrize("distance,depth", ORTHOGRAPHIC_DEPTHS)
def test_orthographic_depth_is_linear_between_near_and_far(distance, depth):
    camera = Camera(kind="orthographic", center=(2.0, -1.0), height=3.0, near=1.0, far=11.0)
    eye = camera.basis()[0]
    assert eye[2] == pytest.approx(5.5)          # the virtual eye sits at far / 2, looking down -z
    point = (2.7, -1.4, eye[2] - distance)
    assert ndc(camera, point, 1.5)[2] == pytest.approx(depth, abs=1e-12)


@pytest.mark.parametrize("camera", [Camera(near=1.0, far=101.0),
                                    Camera(kind="orthographic", near=1.0, far=11.0)],
                         ids=["perspective", "orthographic"])
def test_points_outside_near_and_far_fall_outside_the_depth_range(camera):
    eye, _, _, forward = camera.basis()
    assert ndc(camera, eye + 0.5 * forward, 1.0)[2] < 0.0           # nearer than near: clipped
    assert ndc(camera, eye + 1.01 * camera.far * forward, 1.0)[2] > 1.0   # beyond far: clipped
