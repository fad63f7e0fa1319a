"""Mesh particles and the scene light, on a real GPU (lavapipe in CI).

The views are orthographic, looking down -z: HEIGHT world units over SIZE pixels, clamped to
[0, 1] and sRGB-encoded by the present pass (turned back into linear light here). Surfaces are
white and the light is white with intensity 1, so a flat face shows ambient + max(n . l, 0).

The oracles do not use the shaders' formulas for orientation: with the light along the view
(l = +z), a face of a cube turned any way covers |n_z| x edge^2 of the picture and is lit
ambient + n_z, and the three visible faces' n_z are the z components of three orthonormal
vectors, so their squares sum to 1.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.core.readback import read_buffer
from emberfx.engine.engine import Engine
from emberfx.model.camera import Camera
from emberfx.model.light import Light
from emberfx.model.render import RenderSettings
from emberfx.model.scene import Scene, SceneSettings, load_scene, loads_scene
from emberfx.systems.meshes.obj import read_obj
from emberfx.systems.meshes.shapes import BUILT_IN, built_in_mesh

SIZE = 128           # pixels, square
HEIGHT = 4.0         # world units, bottom to top
PPU = SIZE / HEIGHT  # pixels per world unit
AMBIENT = 0.1
LEVEL = 1.5 / 255    # linear tolerance around 8-bit quantisation near mid-grey and above


def linear(image: np.ndarray) -> np.ndarray:
    c = image[..., :3].astype(np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def scene(light: Light | None = None) -> Scene:
    """One sample per pixel: the face regions are counted in whole pixels (anti-aliased edges
    are tested in test_msaa.py)."""
    return Scene(SceneSettings(name="meshes", size=(SIZE, SIZE), background="#000000"),
                 Camera(kind="orthographic", center=(0.0, 0.0), height=HEIGHT),
                 light=light or Light(direction=(0.0, 0.0, 1.0), intensity=1.0,
                                      ambient=AMBIENT),
                 render=RenderSettings(msaa=1))


def still_particle(**fields) -> dict:
    """One white particle at the origin that never moves and lives long."""
    return {"capacity": 1, "rate": 1000.0, "lifetime": 1000.0, "speed": 0.0,
            "gravity": [0.0, 0.0, 0.0], "color": ["#ffffff"], **fields}


def picture(s: Scene, steps: int = 1) -> np.ndarray:
    engine = Engine(s, size=(SIZE, SIZE))
    try:
        engine.step(steps)
        return engine.render()
    finally:
        engine.close()


# ------------------------------------------------------------------------- meshes (numpy only)

@pytest.mark.parametrize("name", BUILT_IN)
def test_built_in_meshes_fit_the_unit_cube_and_wind_outwards(name):
    mesh = built_in_mesh(name)
    p = mesh.positions.astype(np.float64).reshape(-1, 3, 3)
    assert np.abs(p).max() == pytest.approx(0.5, abs=1e-6)
    face = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    normals = mesh.normals.reshape(-1, 3, 3)
    assert np.allclose(np.linalg.norm(normals, axis=2), 1.0, atol=1e-5)
    # counter-clockwise seen from outside: the winding's normal agrees with the stored ones
    assert (np.einsum("ij,ikj->ik", face, normals) > 0).all()
    # closed and outward: the divergence theorem gives the solid's volume
    volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0
    if name == "sphere":   # inscribed in the ball of diameter 1, with few (168) triangles
        assert 0.85 * math.pi / 6.0 < volume < math.pi / 6.0
    else:
        assert volume == pytest.approx({"cube": 1.0, "tetra": 1.0 / 3.0}[name], rel=1e-6)


def test_an_obj_file_is_centred_scaled_and_triangulated(tmp_path):
    """Quads are split by the reader; any units: the longest side becomes 1."""
    path = tmp_path / "slab.obj"
    corners = [(x, y, z) for z in (0, 1) for y in (0, 2) for x in (0, 8)]
    quads = [(1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6)]
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in corners)
                    + "".join(f"f {a} {b} {c} {d}\n" for a, b, c, d in quads))
    mesh = read_obj(path)
    assert mesh.vertex_count == 36
    assert np.allclose(mesh.positions.min(0), [-0.5, -0.125, -0.0625])
    assert np.allclose(mesh.positions.max(0), [0.5, 0.125, 0.0625])
    p = mesh.positions.astype(np.float64).reshape(-1, 3, 3)
    volume = np.einsum("ij,ij->i", p[:, 0], np.cross(p[:, 1], p[:, 2])).sum() / 6.0
    assert volume == pytest.approx(1.0 * 0.25 * 0.125)


# ------------------------------------------------------------------------------ on the GPU

def test_the_instance_count_is_the_alive_count(gpu):
    """Particles are born and die (capacity not a multiple of 32); the mesh draw's indirect
    arguments hold the tetrahedron's 12 vertices and one instance per alive slot."""
    s = scene()
    s.add("rocks", emitter={"capacity": 301, "rate": 900.0, "lifetime": [0.1, 0.4],
                            "speed": [0.5, 2.0], "size": 0.1, "mesh": "tetra"})
    engine = Engine(s, size=(SIZE, SIZE))
    try:
        for steps in (1, 7, 20):
            engine.step(steps)
            engine.render()
            alive = int(engine.state("rocks")["alive"].sum())
            args = np.frombuffer(read_buffer(engine.device,
                                             engine.resources.get("rocks/mesh_args"), 16),
                                 np.uint32)
            assert 0 < alive < 301
            assert args.tolist() == [12, alive, 0, 0]
        assert "rocks:emitter:draw" not in engine.passes()   # no sprites under the meshes
        assert {"rocks:mesh:prepare", "rocks:mesh:draw"} <= set(engine.passes())
    finally:
        engine.close()


def face_regions(image: np.ndarray) -> list[tuple[float, int]]:
    """(linear intensity, pixel count) of each flat-lit region larger than 40 pixels."""
    covered = image[..., :3].max(axis=2) > 0
    values, counts = np.unique(image[..., 0][covered], return_counts=True)
    out = []
    for value, count in zip(values, counts):
        if count > 40:
            out.append((float(linear(np.array([[[value, 0, 0]]], np.uint8))[0, 0, 0]), int(count)))
    return out


@pytest.mark.parametrize("angle", [40.0, 75.0, 130.0])
def test_a_lit_cube_shows_lambert_intensities(gpu, angle):
    """A cube turned by ``angle`` about its particle's random axis, lit along the view: each
    visible face is lit ambient + n_z and covers n_z x edge^2 pixels, and the n_z of the three
    faces square-sum to 1, whatever the axis."""
    edge = 2.0
    s = scene()
    s.add("cube", emitter=still_particle(size=edge, mesh="cube", rotation_deg=[angle, angle]))
    regions = face_regions(picture(s))
    assert len(regions) == 3, regions
    n_z = np.array([intensity - AMBIENT for intensity, _ in regions])
    assert (n_z > 0).all()
    assert float((n_z ** 2).sum()) == pytest.approx(1.0, abs=0.03)
    for (_, count), nz in zip(regions, n_z):
        # the rasterised area is exact up to the edge pixels: 4 edges x edge x PPU / 2 at most
        expected = nz * (edge * PPU) ** 2
        assert abs(count - expected) <= 2.0 * edge * PPU + 2, (count, expected)


def test_a_face_turned_from_the_light_gets_the_ambient_only(gpu):
    """An unturned cube seen from +z, the light along +x at 60 degrees from the view: the
    front face shows ambient + cos 60 deg, and with the light behind it, ambient alone."""
    for light, expected in (((math.sqrt(3.0), 0.0, 1.0), AMBIENT + 0.5),
                            ((0.0, 1.0, -1.0), AMBIENT)):
        s = scene(Light(direction=light, intensity=1.0, ambient=AMBIENT))
        s.add("cube", emitter=still_particle(size=2.0, mesh="cube"))
        middle = linear(picture(s))[SIZE // 2 - 8:SIZE // 2 + 8, SIZE // 2 - 8:SIZE // 2 + 8, 0]
        assert np.allclose(middle, expected, atol=LEVEL), (light, middle.mean(), expected)


def test_meshes_follow_the_velocity(gpu, tmp_path):
    """A needle (an OBJ box 0.2 x 1 x 0.2, longest along local +y) moving slowly along +x
    lies horizontal: 2 world units long (size 2), 0.4 across."""
    (tmp_path / "needle.obj").write_text(box_obj(0.2, 1.0, 0.2))
    s = scene()
    s.path = tmp_path / "scene.toml"
    s.add("dart", emitter=still_particle(size=2.0, speed=0.001, direction=[1.0, 0.0, 0.0],
                                         spread_deg=0.0, mesh="needle.obj", align="velocity"))
    covered = picture(s)[..., :3].max(axis=2) > 0
    rows, columns = np.nonzero(covered)
    assert np.ptp(columns) + 1 == pytest.approx(2.0 * PPU, abs=2)
    assert np.ptp(rows) + 1 == pytest.approx(0.4 * PPU, abs=2)


def box_obj(x: float, y: float, z: float) -> str:
    corners = [(sx * x / 2, sy * y / 2, sz * z / 2)
               for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)]
    quads = [(1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6)]
    return ("".join(f"v {a} {b} {c}\n" for a, b, c in corners)
            + "".join(f"f {a} {b} {c} {d}\n" for a, b, c, d in quads))


def test_an_obj_cube_draws_as_the_built_in_cube(gpu, tmp_path):
    (tmp_path / "box.obj").write_text(box_obj(3.0, 3.0, 3.0))
    images = []
    for mesh in ("cube", "box.obj"):
        s = scene(Light(direction=(1.0, 2.0, 3.0), intensity=1.0, ambient=AMBIENT))
        s.path = tmp_path / "scene.toml"
        s.add("cube", emitter=still_particle(size=1.5, mesh=mesh, align="axis",
                                             axis=[1.0, 1.0, 1.0]))
        images.append(picture(s).astype(int))
    assert np.abs(images[0] - images[1]).max() <= 1
    assert (images[0][..., :3].max(axis=2) > 0).sum() > 1000


def test_the_cloth_is_lit_by_the_scene_light(gpu):
    """A flat white cloth facing the camera: ambient + intensity x cos(angle to the light)."""
    for direction, cosine in (((0.0, 0.0, 1.0), 1.0), ((1.0, 0.0, 1.0), math.sqrt(0.5)),
                              ((0.0, -1.0, 0.0), 0.0)):
        s = scene(Light(direction=direction, color="#ffffff", intensity=0.6, ambient=0.2))
        s.add("sheet", cloth={"resolution": [9, 7], "size": [3.0, 2.0],
                              "position": [-1.5, -1.0, 0.0], "pins": "none",
                              "gravity": [0.0, 0.0, 0.0], "color": "#ffffff",
                              "checker": "#ffffff"})
        middle = linear(picture(s, steps=1))[SIZE // 2 - 10:SIZE // 2 + 10,
                                             SIZE // 2 - 10:SIZE // 2 + 10]
        assert np.allclose(middle, 0.2 + 0.6 * cosine, atol=LEVEL), (direction, middle.mean())


# ------------------------------------------------------------------------------ the scene file

def test_the_light_table_round_trips_and_defaults():
    text = ('[scene]\nname = "lit"\n[light]\ndirection = [0.0, 2.0, 0.0]\ncolor = "#ffeedd"\n'
            'intensity = 2.0\nambient = 0.1\n')
    loaded = loads_scene(text)
    assert loaded.light == Light(direction=(0.0, 2.0, 0.0), color="#ffeedd", intensity=2.0,
                                 ambient=0.1)
    assert loaded.light.unit_direction() == (0.0, 1.0, 0.0)
    assert loads_scene(loaded.to_toml()).light == loaded.light
    plain = loads_scene('[scene]\nname = "plain"\n')
    assert plain.light == Light() and "[light]" not in plain.to_toml()


def write_scene(folder: Path, emitter_lines: str, extra: str = "") -> Path:
    path = folder / "scene.toml"
    path.write_text(f'[scene]\nname = "bad"\n{extra}\n[[entity]]\nname = "rocks"\n'
                    f'[entity.emitter]\n{emitter_lines}\n')
    return path


@pytest.mark.parametrize("lines, extra, pieces", [
    ('mesh = "cubes"', "", ["entity 'rocks'", "emitter.mesh", '"cube", "sphere", "tetra"',
                            "'cubes'"]),
    ('mesh = "rock.obj"', "", ["entity 'rocks'", "emitter.mesh", "rock.obj",
                               "No such file"]),
    ('mesh = "binary.obj"', "", ["emitter.mesh", "binary data", "binary.obj"]),
    ('mesh = "empty.obj"', "", ["emitter.mesh", "at least one face", "empty.obj"]),
    ('mesh = "broken.obj"', "", ["emitter.mesh", "broken.obj", "trimesh refuses"]),
    ('mesh = "cube"\nsize_unit = "pixels"', "", ["emitter.size_unit", '"world"', "pixels"]),
    ('mesh = "cube"', "[light]\ndirection = [0.0, 0.0, 0.0]",
     ["light.direction", "non-zero", "[0, 0, 0]"]),
    ('mesh = "cube"', '[light]\ncolour = "#ffffff"', ["light.colour", "unknown key"]),
    ('mesh = "cube"', "[light]\nambient = -0.5", ["light.ambient", ">= 0.0"]),
])
def test_bad_mesh_and_light_input_is_a_one_line_scene_error(tmp_path, lines, extra, pieces):
    (tmp_path / "binary.obj").write_bytes(b"\x00\xff\xfe\x80 not text")
    (tmp_path / "empty.obj").write_text("# nothing here\nv 0 0 0\n")
    (tmp_path / "broken.obj").write_text("v 0 0 0\nv 1 0 0\nf 1 2 9\n")
    path = write_scene(tmp_path, lines, extra)
    with pytest.raises(SceneError) as caught:
        load_scene(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    for piece in pieces:
        assert piece in message, f"{piece!r} not in {message!r}"


def test_an_obj_that_vanishes_after_loading_is_a_scene_error(gpu, tmp_path):
    (tmp_path / "rock.obj").write_text(box_obj(1.0, 1.0, 1.0))
    loaded = load_scene(write_scene(tmp_path, 'mesh = "rock.obj"\ncapacity = 4'))
    (tmp_path / "rock.obj").unlink()
    with pytest.raises(SceneError, match=r"entity 'rocks': emitter\.mesh: .*rock\.obj"):
        Engine(loaded, size=(32, 32)).close()


def test_a_reload_that_changes_only_the_light_relights_the_next_frame(gpu):
    """A cube face lit ambient + intensity x cos: 0.1 + 0.8 with the light along the view,
    then 0.1 + 0.5 at 60 degrees; the particle and its pool are kept (no rebuild)."""
    s = scene(Light(direction=(0.0, 0.0, 1.0), intensity=0.8, ambient=AMBIENT))
    s.add("cube", emitter=still_particle(size=2.0, mesh="cube"))
    engine = Engine(s, size=(SIZE, SIZE))
    try:
        engine.step(1)
        centre = (SIZE // 2, SIZE // 2)
        before = linear(engine.render())[centre][0]
        edited = dataclasses.replace(s, light=Light(direction=(math.sqrt(3.0), 0.0, 1.0),
                                                    intensity=1.0, ambient=AMBIENT))
        plan = engine.reload(edited)
        assert not plan.restart and not plan.updated
        after = linear(engine.render())[centre][0]
        assert before == pytest.approx(AMBIENT + 0.8, abs=LEVEL)
        assert after == pytest.approx(AMBIENT + 0.5, abs=LEVEL)
    finally:
        engine.close()


def test_a_live_align_edit_turns_the_meshes_on_the_next_step(gpu, tmp_path):
    """The needle stands (local +y up, no rotation) until align becomes "velocity"; then it
    lies along its motion (+x)."""
    (tmp_path / "needle.obj").write_text(box_obj(0.2, 1.0, 0.2))
    s = scene()
    s.path = tmp_path / "scene.toml"
    s.add("dart", emitter=still_particle(size=2.0, speed=0.001, direction=[1.0, 0.0, 0.0],
                                         spread_deg=0.0, mesh="needle.obj"))
    engine = Engine(s, size=(SIZE, SIZE))
    try:
        shapes = []
        for align in ("camera", "velocity"):
            engine.entity("dart").emitter.align = align
            engine.step(1)
            rows, columns = np.nonzero(engine.render()[..., :3].max(axis=2) > 0)
            shapes.append((int(np.ptp(columns)) + 1, int(np.ptp(rows)) + 1))
        (w0, h0), (w1, h1) = shapes
        assert h0 == pytest.approx(2.0 * PPU, abs=2) and w0 == pytest.approx(0.4 * PPU, abs=2)
        assert w1 == pytest.approx(2.0 * PPU, abs=2) and h1 == pytest.approx(0.4 * PPU, abs=2)
    finally:
        engine.close()
