"""Volumes sampled from arrays: vector fields (force and velocity modes, tiling, set_field) and
SDF colliders, against numpy trilinear samples and analytic shapes; their bad input."""

from __future__ import annotations

import numpy as np
import pytest

from emberfx.core.errors import DeviceLimitError, EmberError, SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.model.transforms import rotation_matrix
from emberfx.systems.forces.volumes import trilinear

DT = 1.0 / 60.0
HEAD = f"""
[scene]
name = "volumes"
seed = 3
fixed_dt = {DT!r}
size = [32, 32]
[camera]
kind = "orthographic"
height = 8.0
"""

CENTER, SIZE, ROTATION = (0.3, -0.2, 0.1), (2.0, 1.5, 2.5), (0.0, 30.0, 10.0)


def still_cloud(capacity=3000, extent=(3.0, 2.4, 3.4), extra=""):
    """Particles born at rest over a box larger than the field's, no gravity."""
    return f"""
[[entity]]
name = "dust"
[entity.emitter]
capacity = {capacity}
rate = 0.0
bursts = [{{ time = 0.0, count = {capacity} }}]
lifetime = 100.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
position = [0.3, -0.2, 0.1]
shape = {{ kind = "box", size = {list(extent)} }}
{extra}
"""


def field_entity(path, *, mode="force", tile=False, strength=2.0):
    return f"""
[[entity]]
name = "wind"
[entity.force_field]
kind = "vector_field"
field = "{path}"
center = {list(CENTER)}
size = {list(SIZE)}
rotation_deg = {list(ROTATION)}
strength = {strength}
mode = "{mode}"
tightness = 3.0
tile = {str(tile).lower()}
"""


def expected_field(samples, x, tile):
    """The world-space field vector at world points x: rotate into the box, sample, rotate back;
    zero outside a box that does not tile."""
    rotation = rotation_matrix(ROTATION)
    local = (x - np.asarray(CENTER)) @ rotation
    value = trilinear(samples, SIZE, local, tile=tile) @ rotation.T
    if not tile:
        inside = np.all(np.abs(local) <= 0.5 * np.asarray(SIZE), axis=1)
        value = value * inside[:, None]
    return value


@pytest.mark.parametrize("tile", [False, True])
def test_vector_field_force_matches_numpy_trilinear(gpu, tmp_path, tile):
    rng = np.random.default_rng(7)
    samples = rng.normal(size=(5, 4, 6, 3)).astype(np.float32)   # ragged D, H, W
    np.save(tmp_path / "wind.npy", samples)
    scene = loads_scene(HEAD + still_cloud() + field_entity("wind.npy", tile=tile),
                        path=tmp_path / "scene.toml")
    with Engine(scene) as engine:
        engine.step()   # births at rest
        x0 = engine.state("dust")["position"].astype(np.float64)
        engine.step()   # v = a h with a = strength x field(x0)
        v1 = engine.state("dust")["velocity"].astype(np.float64)
    expected = 2.0 * expected_field(samples, x0, tile) * DT
    # The tolerance follows from what WGSL allows an adapter. The GPU finds the cell coordinate
    # u = (R^T (x - c) / size + 0.5) grid - 0.5 with dot products (|x - c| <= ~2, possibly
    # contracted to fused multiply-adds: ~2 ULP, 2.4e-7) and a division (2.5 ULP), so u
    # (<= ~10 cells) is off by <= ~3e-6 cells. That moves a trilinear sample by 3e-6 x the
    # largest step between neighbouring samples (~6 for these normal samples): 2e-5 of a field
    # unit, or 6e-7 after the factor strength x DT = 0.033; the seven mixes add ~8 ULP of the
    # largest term (~1e-8). atol = 1e-5 of the largest expected vector (~0.1) = 1e-6 bounds that
    # on every adapter (lavapipe and an H100 both came within 4e-8), while a wrong cell or weight
    # is off by ~1e-2.
    np.testing.assert_allclose(v1, expected, atol=1e-5 * np.abs(expected).max(), rtol=1e-5)
    outside = np.all(expected == 0.0, axis=1)
    assert tile or 100 < outside.sum() < len(x0) - 100   # both sides of the box were sampled


def test_velocity_mode_pulls_towards_the_field_and_set_field_replaces_it(gpu, tmp_path):
    samples = np.zeros((3, 3, 3, 3), np.float32)
    samples[..., 0] = 1.5
    np.save(tmp_path / "wind.npy", samples)
    scene = loads_scene(HEAD + still_cloud(extent=(1.0, 1.0, 1.0))
                        + field_entity("wind.npy", mode="velocity", strength=1.0),
                        path=tmp_path / "scene.toml")
    with Engine(scene) as engine:
        engine.step()
        engine.step()
        v = engine.state("dust")["velocity"]
        # a = tightness (field - v) from rest: v1 = 3 x field x h, the field along the box's x
        np.testing.assert_allclose(v, np.tile(3.0 * 1.5 * DT * rotation_matrix(ROTATION)[:, 0],
                                              (len(v), 1)), rtol=1e-5, atol=1e-7)
        # a new grid of another size, live
        rng = np.random.default_rng(1)
        replaced = rng.normal(size=(4, 7, 5, 3)).astype(np.float32)
        engine.set_field("wind", replaced)
        x1 = engine.state("dust")["position"].astype(np.float64)
        v1 = v.astype(np.float64)
        engine.step()
        v2 = engine.state("dust")["velocity"].astype(np.float64)
    field = expected_field(replaced, x1, tile=False)
    np.testing.assert_allclose(v2, v1 + 3.0 * (field - v1) * DT, rtol=1e-4, atol=1e-6)


def test_set_field_refuses_bad_arrays(gpu, tmp_path):
    np.save(tmp_path / "wind.npy", np.zeros((2, 2, 2, 3), np.float32))
    scene = loads_scene(HEAD + still_cloud(capacity=16) + field_entity("wind.npy"),
                        path=tmp_path / "scene.toml")
    with Engine(scene) as engine:
        with pytest.raises(EmberError, match=r"set_field\('wind', \.\.\.\): expected dtype "
                                             r"float32, found float64"):
            engine.set_field("wind", np.zeros((2, 2, 2, 3)))
        with pytest.raises(EmberError, match=r"expected shape \(D, H, W, 3\), found \(2, 2, 2\)"):
            engine.set_field("wind", np.zeros((2, 2, 2), np.float32))
        bad = np.zeros((2, 2, 2, 3), np.float32)
        bad[1, 0, 1, 2] = np.nan
        with pytest.raises(EmberError, match=r"expected finite values, found nan at index "
                                             r"\[1, 0, 1, 2\]"):
            engine.set_field("wind", bad)
        with pytest.raises(EmberError,
                           match=r"kind \"vector_field\", found an entity with emitter"):
            engine.set_field("dust", bad)
        limit = engine.gpu.limits["max-storage-buffer-binding-size"]
        huge = np.zeros((limit // 12 // 64 + 1, 8, 8, 3), np.float32)
        with pytest.raises(DeviceLimitError, match=r"bytes"):
            engine.set_field("wind", huge)
        engine.step()   # the refusals left it running


def test_volume_file_errors_are_one_line_scene_errors(tmp_path):
    np.save(tmp_path / "f64.npy", np.zeros((2, 2, 2, 3)))
    np.save(tmp_path / "flat.npy", np.zeros((4, 3), np.float32))
    nan = np.zeros((3, 3, 3), np.float32)
    nan[2, 1, 0] = np.nan
    np.save(tmp_path / "nan.npy", nan)
    (tmp_path / "junk.npy").write_text("not numpy")
    path = tmp_path / "scene.toml"
    cases = [
        (field_entity("missing.npy"), r"force_field.field: expected an existing file"),
        (field_entity("f64.npy"), r"force_field.field: expected dtype float32, found float64"),
        (field_entity("flat.npy"), r"force_field.field: expected shape \(D, H, W, 3\)"),
        (field_entity("junk.npy"), r"force_field.field: expected a .npy array file"),
        ('[[entity]]\nname = "s"\n[entity.collider]\nshape = "sdf"\nsdf = "nan.npy"\n',
         r"entity 's'.*collider.sdf: expected finite values, found nan at index \[2, 1, 0\]"),
    ]
    for text, message in cases:
        with pytest.raises(SceneError, match=message) as caught:
            loads_scene(HEAD + text, path=path)
        assert "\n" not in str(caught.value)


def rain_on(collider: str, capacity=1500):
    return f"""
[[entity]]
name = "rain"
[entity.emitter]
capacity = {capacity}
rate = 3000.0
lifetime = 2.0
speed = [0.5, 2.0]
direction = [0.0, -1.0, 0.0]
spread_deg = 10.0
position = [0.0, 1.5, 0.0]
shape = {{ kind = "disk", radius = 0.7 }}
substeps = 2
collision = {{ restitution = 0.2, friction = 0.4 }}
[[entity]]
name = "solid"
[entity.collider]
{collider}
"""


def sphere_sdf(n=32, size=2.0, radius=0.6):
    cells = (np.arange(n) + 0.5) / n * size - size / 2
    z, y, x = np.meshgrid(cells, cells, cells, indexing="ij")
    return (np.sqrt(x * x + y * y + z * z) - radius).astype(np.float32)


@pytest.mark.parametrize("source", ["array", "analytic"])
def test_sdf_sphere_matches_the_analytic_sphere(gpu, tmp_path, source):
    np.save(tmp_path / "ball.npy", sphere_sdf())
    voxel = 2.0 / 32
    shape = ('sdf = "ball.npy"' if source == "array" else 'sdf_kind = "sphere"\nradius = 0.6')
    scene = loads_scene(HEAD + rain_on(f'shape = "sdf"\n{shape}\nsize = [2.0, 2.0, 2.0]\n'
                                       f'rotation_deg = [20.0, 0.0, 0.0]'),
                        path=tmp_path / "scene.toml")
    near = 0
    tolerance = voxel if source == "array" else 1e-4
    with Engine(scene) as engine:
        for _ in range(90):
            engine.step()
            s = engine.state("rain")
            r = np.linalg.norm(s["position"][s["alive"]], axis=1)
            assert r.min() >= 0.6 - tolerance
            near += int((r < 0.6 + voxel).sum())
    assert near > 500   # they landed on it


def test_sdf_outside_its_box_does_nothing(gpu, tmp_path):
    # a sphere SDF whose box ends at y = 0.2: the rain falls through the cap above the box
    np.save(tmp_path / "ball.npy", sphere_sdf())
    scene = loads_scene(HEAD + rain_on('shape = "sdf"\nsdf = "ball.npy"\ncenter = [0.0, -0.8, 0.0]'
                                       '\nsize = [2.0, 2.0, 2.0]'),
                        path=tmp_path / "scene.toml")
    with Engine(scene) as engine:
        for _ in range(60):
            engine.step()
        s = engine.state("rain")
    x = s["position"][s["alive"]]
    r = np.linalg.norm(x - np.array([0.0, -0.8, 0.0]), axis=1)
    inside_box = np.all(np.abs(x - np.array([0.0, -0.8, 0.0])) <= 1.0, axis=1)
    assert (r[inside_box] >= 0.6 - 2.0 / 32).all()
    assert (x[:, 1] < -1.85).any()   # some fell past the box's floor, outside its reach


def test_coarse_minimum_bounds_every_trilinear_sample_from_below():
    from emberfx.systems.forces.volumes import COARSE, coarse_counts, coarse_minimum

    rng = np.random.default_rng(4)
    volume = rng.normal(size=(11, 20, 9)).astype(np.float32)   # ragged, not multiples of 8
    bounds = coarse_minimum(volume)
    assert bounds.shape == coarse_counts(volume.shape) == (2, 3, 1)
    size = np.array([1.0, 2.0, 1.5])
    local = rng.uniform(-0.6, 0.6, size=(5000, 3)) * size   # beyond the box too: clamped
    grid = np.array([9, 20, 11])
    u = np.clip((local / size + 0.5) * grid - 0.5, 0, grid - 1)
    cell = np.minimum(np.floor(u / COARSE), np.array(bounds.shape[::-1]) - 1).astype(int)
    below = bounds[cell[:, 2], cell[:, 1], cell[:, 0]]
    assert (trilinear(volume, size, local) >= below - 1e-6).all()
