"""Anti-aliasing (``[render] msaa``) on a real GPU (lavapipe in CI), against coverage worked out
here from WebGPU's standard sample positions.

An orthographic camera looks down -z at the origin, HEIGHT world units over SIZE pixels. A white
box collider faces the camera with one edge crossing the view at 30 degrees; its face is flat and
evenly lit, so every covered sample has the same linear colour and a pixel's resolved value is
that colour times the share of its samples the box covers. WebGPU's 4x pattern puts the samples at
SAMPLE_POSITIONS (pixel units, origin at the pixel's top-left corner, y down); a sample is covered
when its point lies inside the box's rotated rectangle, so the oracle needs no rasteriser.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene, loads_scene

SIZE = 64            # pixels, square
HEIGHT = 4.0         # world units from the bottom of the view to the top
PPU = SIZE / HEIGHT  # pixels per world unit
SAMPLE_POSITIONS = ((0.375, 0.125), (0.875, 0.375), (0.125, 0.625), (0.625, 0.875))
ANGLE = 30.0         # degrees: the edge's slope
HALF = (6.0, 3.0)    # the box's half size along its own x and y: only its top edge is in view
# the box's centre sits below the origin so that its top edge passes through (0, 0)
CENTER = (3.0 * math.sin(math.radians(ANGLE)), -3.0 * math.cos(math.radians(ANGLE)))
TOLERANCE = 1.0 / 16.0   # of the face's value
APEX = 0.005   # world units: a sphere's bulge between pixel centres at its front point


def scene_text(msaa: int | None, extra: str = "", half_depth: float = 0.5) -> str:
    render = f"[render]\nmsaa = {msaa}\n" if msaa is not None else ""
    return f"""
[scene]
name = "msaa"
size = [{SIZE}, {SIZE}]
background = "#000000"
{render}
[camera]
kind = "orthographic"
center = [0.0, 0.0]
height = {HEIGHT}

[[entity]]
name = "crate"
[entity.collider]
shape = "box"
half_size = [{HALF[0]}, {HALF[1]}, {half_depth}]
center = [{CENTER[0]}, {CENTER[1]}, 0.0]
rotation_deg = [0.0, 0.0, {ANGLE}]
color = "#ffffff"
{extra}
"""


def coverage(samples) -> np.ndarray:
    """(SIZE, SIZE): the share of each pixel's ``samples`` (pixel-unit offsets) inside the
    box's rectangle, worked out from the box's placement alone."""
    rows, cols = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    turn = math.radians(ANGLE)
    inside = np.zeros((SIZE, SIZE))
    for sx, sy in samples:
        x = (cols + sx - SIZE / 2) / PPU - CENTER[0]   # world, relative to the box's centre
        y = (SIZE / 2 - (rows + sy)) / PPU - CENTER[1]
        u = x * math.cos(turn) + y * math.sin(turn)      # in the box's own axes
        v = -x * math.sin(turn) + y * math.cos(turn)
        inside += (np.abs(u) <= HALF[0]) & (np.abs(v) <= HALF[1])
    return inside / len(samples)


def render(text: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(linear red channel of the HDR image, NDC-to-linear depth, the frame's passes)."""
    engine = Engine(loads_scene(text), size=(SIZE, SIZE))
    try:
        hdr = engine.render_hdr()[..., 0].astype(np.float64)
        return hdr, engine.render_depth(), engine.passes()
    finally:
        engine.close()


def face_value(image: np.ndarray, covered: np.ndarray) -> float:
    """The linear value of the fully covered pixels (one value: the face is evenly lit)."""
    face = image[covered == 1.0]
    assert face.size > 100 and np.ptp(face) < 1e-3, "the face is not evenly lit"
    return float(face.mean())


def test_edge_pixels_hold_the_coverage_of_the_standard_4x_sample_positions(gpu):
    image, _, passes = render(scene_text(4))
    expected = coverage(SAMPLE_POSITIONS)
    value = face_value(image, expected)
    assert value > 0.1
    edge = (expected > 0.0) & (expected < 1.0)
    # a 30-degree edge across 64 pixels crosses ~75 of them, and all four partial shares occur
    assert edge.sum() > 50
    assert {0.25, 0.5, 0.75} <= set(np.unique(expected[edge]))
    error = np.abs(image / value - expected)
    worst = np.unravel_index(np.argmax(error), error.shape)
    assert error.max() <= TOLERANCE, (f"pixel {worst}: {image[worst] / value:.3f} of the face, "
                                      f"coverage {expected[worst]:.3f}")
    assert passes.index("crate:collider:draw") < passes.index("scene:frame:depth_resolve")


@pytest.mark.parametrize("msaa", [1, None])
def test_default_is_4x_and_msaa_1_leaves_no_intermediate_values(gpu, msaa):
    image, _, passes = render(scene_text(msaa))
    centre = coverage([(0.5, 0.5)])
    value = face_value(image, centre if msaa == 1 else coverage(SAMPLE_POSITIONS))
    levels = image / value
    partial = (levels > TOLERANCE) & (levels < 1.0 - TOLERANCE)
    if msaa == 1:
        assert not partial.any(), f"{partial.sum()} pixels between background and face"
        # one sample per pixel, at its centre
        assert np.array_equal(levels > 0.5, centre == 1.0)
        assert "scene:frame:depth_resolve" not in passes
    else:   # no [render] table: anti-aliased
        assert partial.sum() > 50
        assert "scene:frame:depth_resolve" in passes


def test_resolved_depth_is_the_1x_depth_inside_and_the_nearest_sample_on_edges(gpu):
    _, depth_4x, _ = render(scene_text(4))
    _, depth_1x, _ = render(scene_text(1))
    shares = coverage(SAMPLE_POSITIONS)
    inside = shares == 1.0
    assert np.isfinite(depth_1x[inside]).all()
    # the face is at one depth; every interior pixel agrees with the one-sample render
    np.testing.assert_array_equal(depth_4x[inside], depth_1x[inside])
    face = depth_1x[inside][0]
    # nearest, not sample 0: a pixel with any covered sample takes the face's depth
    np.testing.assert_array_equal(depth_4x[shares > 0.0], face)
    assert np.isinf(depth_4x[shares == 0.0]).all()


def test_resolved_depth_on_a_curved_surface_is_within_the_samples_reach(gpu):
    """A sphere: inside its outline the depth slopes, and each standard sample position lies
    less than a pixel (0.4) from the pixel centre."""
    ball = ('[[entity]]\nname = "ball"\n[entity.collider]\nshape = "sphere"\n'
            'center = [0.0, 0.5, 2.0]\nradius = 1.2\ncolor = "#ffffff"\n')
    text = scene_text(4).split("[[entity]]")[0] + ball
    _, depth_4x, _ = render(text)
    _, depth_1x, _ = render(text.replace("msaa = 4", "msaa = 1"))
    finite = np.isfinite(depth_1x)
    interior = finite.copy()   # two pixels inside the outline
    nearest_around = np.where(finite, depth_1x, np.inf)
    for axis in (0, 1):
        for shift in (-2, -1, 1, 2):
            interior &= np.roll(finite, shift, axis)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            nearest_around = np.minimum(nearest_around,
                                        np.roll(np.roll(depth_1x, dy, 0), dx, 1))
    assert interior.sum() > 500
    # every sample lies within a pixel of the centre: the nearest one is no nearer than the
    # nearest centre around it (but for APEX near the sphere's front point, which may fall
    # between centres), and no farther than the pixel's own centre
    d4, d1, low = depth_4x[interior], depth_1x[interior], nearest_around[interior]
    assert (d4 >= low - APEX).all(), (low - d4).max()
    assert (d4 <= d1 + 1e-4).all(), (d4 - d1).max()
    # and it is not the centre's depth everywhere: the surface slopes
    assert (d4 < d1 - 1e-3).mean() > 0.5


def test_sprites_draw_after_the_resolve_tested_against_the_resolved_depth(gpu):
    """An additive emitter behind the box and one in front: after the resolve, the one behind
    is hidden where the box is, the one in front shows over it."""
    def emitter(name: str, z: float) -> str:
        return (f'[[entity]]\nname = "{name}"\n[entity.emitter]\ncapacity = 64\nrate = 0.0\n'
                f'bursts = [{{ count = 64 }}]\nlifetime = 100.0\nspeed = 0.0\nsize = 0.5\n'
                f'position = [0.0, 0.0, {z}]\nshape = {{ kind = "disk", radius = 1.5 }}\n'
                f'direction = [0.0, 0.0, 1.0]\ngravity = [0.0, 0.0, 0.0]\n'
                f'color = "#4080ff"\nblend = "additive"\n')
    engine = Engine(loads_scene(scene_text(4, emitter("behind", -3.0))), size=(SIZE, SIZE))
    try:
        engine.step(2)
        passes = engine.passes()
        behind = engine.render_hdr()[..., 2].astype(np.float64)
    finally:
        engine.close()
    order = [passes.index(n) for n in ("crate:collider:draw", "scene:frame:depth_resolve",
                                       "behind:emitter:draw")]
    assert order == sorted(order)
    shares = coverage(SAMPLE_POSITIONS)
    face_blue = behind[shares == 1.0]
    # the box's face is white and evenly lit: no sprite light is added where it covers
    assert np.ptp(face_blue) < 1e-3
    assert (behind[shares == 0.0] > 0.0).any()   # the sprites show beside it


def test_msaa_3_is_refused_with_one_line(tmp_path):
    path = tmp_path / "three.toml"
    path.write_text(scene_text(3))
    with pytest.raises(SceneError) as caught:
        load_scene(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: render.msaa: expected 1 (off) or 4")
    assert message.endswith("found 3")


@pytest.mark.parametrize("table, expected", [
    ("[render]\nmsa = 4\n", "did you mean 'msaa'"),
    ("[rendr]\nmsaa = 4\n", "did you mean 'render'"),
    ('[render]\nmsaa = "4"\n', "render.msaa: expected int, found '4'"),
    ("[render]\nmsaa = true\n", "render.msaa: expected int, found true"),
])
def test_render_table_mistakes_are_one_line_errors(table, expected):
    text = scene_text(None).replace("[camera]", table + "[camera]")
    with pytest.raises(SceneError) as caught:
        loads_scene(text)
    assert "\n" not in str(caught.value)
    assert expected in str(caught.value), str(caught.value)


def test_render_table_round_trips_and_the_default_is_left_out():
    assert loads_scene(scene_text(None)).render.msaa == 4
    one = loads_scene(scene_text(1))
    assert one.render.msaa == 1
    assert loads_scene(one.to_toml()).render.msaa == 1
    assert "[render]" not in loads_scene(scene_text(4)).to_toml()


def test_reload_with_another_sample_count_restarts_with_it(gpu):
    engine = Engine(loads_scene(scene_text(4)), size=(SIZE, SIZE))
    try:
        plan = engine.reload(loads_scene(scene_text(1)))
        assert plan.restart
        levels = engine.render_hdr()[..., 0].astype(np.float64)
        assert "scene:frame:depth_resolve" not in engine.passes()
        value = levels.max()
        assert not ((levels > TOLERANCE * value) & (levels < (1 - TOLERANCE) * value)).any()
        engine.reload(loads_scene(scene_text(4)))
        assert "scene:frame:depth_resolve" in engine.passes()
    finally:
        engine.close()


def test_the_frame_graph_sees_the_resolve_read_what_the_geometry_wrote(gpu):
    """The geometry draw declares the multisampled target and the scene colour it resolves
    into; the depth resolve reads the multisampled depth and writes the scene's; without a
    geometry draw before it the graph refuses the resolve (the samples are frame resources)."""
    from emberfx.core.errors import FrameGraphError
    from emberfx.core.frame_graph import FrameGraph

    engine = Engine(loads_scene(scene_text(4)), size=(SIZE, SIZE))
    try:
        passes = {p.name: p for p in engine.frame_passes()}
        draw, resolve = passes["crate:collider:draw"], passes["scene:frame:depth_resolve"]
        assert {"geometry/color", "geometry/depth", "scene/color"} <= set(draw.writes)
        assert "geometry/depth" in resolve.reads
        assert {"scene/depth", "scene/color"} <= set(resolve.writes)
        uploaded = {"frame", "scene/color", "scene/depth"} | engine.resources.persistent()
        assert "geometry/depth" not in uploaded
        FrameGraph([draw, resolve], uploaded)   # in order: accepted
        with pytest.raises(FrameGraphError, match="geometry/depth"):
            FrameGraph([resolve], uploaded)
    finally:
        engine.close()


def test_depth_file_holds_the_resolved_depth(gpu, tmp_path):
    """``--depth`` (render_to_file's ``depth``) writes the resolved depth: the box's depth on
    every pixel where any of its samples lies, nothing elsewhere."""
    from emberfx.app.output import render_to_file

    engine = Engine(loads_scene(scene_text(4)), size=(SIZE, SIZE))
    try:
        render_to_file(engine, 1, tmp_path / "a.png", progress=False, depth=tmp_path / "d.npy")
    finally:
        engine.close()
    depth = np.load(tmp_path / "d.npy")
    shares = coverage(SAMPLE_POSITIONS)
    face = depth[shares == 1.0]
    assert np.isfinite(face).all() and np.ptp(face) == 0.0
    np.testing.assert_array_equal(depth[shares > 0.0], face[0])
    assert np.isinf(depth[shares == 0.0]).all()
