"""Files a scene names that are not what they claim: a FIFO or a device as a texture or a mesh,
an OBJ too large to draw, .npy headers claiming more samples than the file (or any device)
holds, and an SDF whose corner bricks exceed the device's storage binding. Each ends in one
line naming the file, entity and field, through `emberfx validate` in a subprocess (a hang or a
crash there is what a user would see) and through the Engine's own path."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
from numpy.lib import format as npy_format

from emberfx.core.errors import EmberError, SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.forces.volumes import (
    GPU_BYTES_BOUND,
    corner_bricks,
    load_volume,
    pack_volumes,
)
from emberfx.systems.meshes.obj import MAX_MESH_BYTES, MAX_MESH_RECORDS

TIMEOUT = 60   # seconds: each case answers in about one; a hang would run until killed


def validate(scene_path, timeout=TIMEOUT):
    """`python -m emberfx validate SCENE`: (exit code, stderr); a hang fails the test."""
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(scene_path)],
                          capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stderr


def assert_one_line(code: int, err: str, *needles: str) -> None:
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err   # no traceback
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


def emitter_scene(tmp_path, field: str):
    path = tmp_path / "scene.toml"
    path.write_text(f'[[entity]]\nname = "jet"\n[entity.emitter]\ncapacity = 64\n{field}\n')
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("field,name", [("texture", "pipe.png"), ("mesh", "pipe.obj")])
def test_a_fifo_as_texture_or_mesh_is_refused_unopened(tmp_path, field, name):
    os.mkfifo(tmp_path / name)   # opening it would block until a writer comes: none will
    code, err = validate(emitter_scene(tmp_path, f'{field} = "{name}"'))
    assert_one_line(code, err, "scene.toml", "entity 'jet'", f"emitter.{field}",
                    "expected a regular", "found a FIFO (named pipe)", name)


def test_a_device_as_a_mesh_is_refused_unread(tmp_path):
    (tmp_path / "zero.obj").symlink_to("/dev/zero")   # read_bytes would never end
    code, err = validate(emitter_scene(tmp_path, 'mesh = "zero.obj"'))
    assert_one_line(code, err, "entity 'jet'", "emitter.mesh",
                    "found a character device")


def test_an_obj_beyond_the_bounds_is_refused_before_parsing(tmp_path):
    big = tmp_path / "big.obj"
    with open(big, "wb") as handle:   # a sparse file over the byte bound
        handle.truncate(MAX_MESH_BYTES + 1)
    code, err = validate(emitter_scene(tmp_path, 'mesh = "big.obj"'))
    assert_one_line(code, err, "emitter.mesh", f"at most {MAX_MESH_BYTES >> 20} MiB")
    many = tmp_path / "many.obj"
    many.write_bytes(b"v 0 0 0\n" * (MAX_MESH_RECORDS + 1) + b"f 1 2 3\n")
    code, err = validate(emitter_scene(tmp_path, 'mesh = "many.obj"'))
    assert_one_line(code, err, "emitter.mesh", f"at most {MAX_MESH_RECORDS:,} vertex ('v') lines",
                    f"found {MAX_MESH_RECORDS + 1:,}")


def write_header(path, shape, data_bytes=0):
    """A .npy file with the header of a float32 array of ``shape`` and ``data_bytes`` bytes of
    zeros after it (a sparse file: nothing is written)."""
    with open(path, "wb") as handle:
        npy_format.write_array_header_1_0(handle, {"descr": "<f4", "fortran_order": False,
                                                   "shape": shape})
        handle.truncate(handle.tell() + data_bytes)


SDF = '[[entity]]\nname = "arch"\n[entity.collider]\nshape = "sdf"\nsdf = "{}"\n'
FIELD = '[[entity]]\nname = "wind"\n[entity.force_field]\nkind = "vector_field"\nfield = "{}"\n'


@pytest.mark.parametrize("entity,field,shape", [
    (SDF, "collider.sdf", (4096, 4096, 4096)),
    (FIELD, "force_field.field", (1024, 1024, 1024, 3))], ids=["sdf", "vector-field"])
def test_npy_headers_claiming_more_than_the_file_holds(tmp_path, entity, field, shape):
    """A truncated file: the header's shape needs 256 GiB (12 GiB) the file does not hold."""
    write_header(tmp_path / "v.npy", shape)
    (tmp_path / "scene.toml").write_text(entity.format("v.npy"))
    code, err = validate(tmp_path / "scene.toml")
    needed = int(np.prod(shape)) * 4
    assert_one_line(code, err, field, f"expected {needed:,} bytes of samples",
                    "found 0 (a truncated file)")


def test_sparse_volumes_larger_than_any_device_are_refused_unread(tmp_path):
    """The file holds every byte (sparse): the bound on GPU bytes refuses it from the header,
    at validate, without a device. A 512^3 SDF takes 4 GiB as corner bricks."""
    for name, shape in (("sdf.npy", (512, 512, 512)), ("cube.npy", (1024, 1024, 1024))):
        write_header(tmp_path / name, shape, int(np.prod(shape)) * 4)
        (tmp_path / "scene.toml").write_text(SDF.format(name))
        code, err = validate(tmp_path / "scene.toml")
        assert_one_line(code, err, "entity 'arch'", "collider.sdf",
                        f"at most {GPU_BYTES_BOUND:,} bytes on the GPU", f"shape {shape}",
                        "as corner bricks")


def test_an_sdf_over_the_device_limit_is_refused_before_its_bricks_are_built(gpu, tmp_path,
                                                                             monkeypatch):
    """With the device's storage binding set to 64 MiB, a legal 130^3 SDF (8.8 MB of samples,
    70 MB of corner bricks) passes the scene check and is refused by the Engine, naming the
    device's limit, while the memory traced stays under twice the samples (the bricks would be
    8x)."""
    n = 130
    samples = np.linspace(-1.0, 1.0, n ** 3, dtype=np.float32).reshape(n, n, n)
    np.save(tmp_path / "big.npy", samples)
    scene = loads_scene(SDF.format("big.npy") + emitter_with_collision(),
                        path=tmp_path / "scene.toml")   # valid: under GPU_BYTES_BOUND
    monkeypatch.setitem(gpu.limits, "max-storage-buffer-binding-size", 64 << 20)
    load_volume(tmp_path / "big.npy", channels=1)   # cached, as after the scene check
    tracemalloc.start()
    try:
        with pytest.raises(EmberError, match=r"storage binding size") as caught:
            Engine(scene, size=(16, 16))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "\n" not in str(caught.value)
    assert "arch" in str(caught.value) and "67,108,864" in str(caught.value)
    assert peak < 2 * samples.nbytes, peak


def emitter_with_collision():
    return ('[[entity]]\nname = "rain"\n[entity.emitter]\ncapacity = 64\n'
            'collision = { restitution = 0.2 }\n')


def test_the_engine_refuses_a_vector_field_over_the_device_limit_from_its_header(
        gpu, tmp_path, monkeypatch):
    shape = (64, 64, 64, 3)   # 3 MiB of samples against a 1 MiB binding
    np.save(tmp_path / "wind.npy", np.zeros(shape, np.float32))
    scene = loads_scene(FIELD.format("wind.npy"), path=tmp_path / "scene.toml")
    monkeypatch.setitem(gpu.limits, "max-storage-buffer-binding-size", 1 << 20)
    with pytest.raises(SceneError, match=r"entity 'wind': force_field.field: expected a volume "
                                         r"of at most 1,048,576 bytes on the GPU \(this device"):
        Engine(scene, size=(16, 16))


def test_corner_bricks_written_in_place_match_the_indexed_oracle():
    """Each corner c = x + 2y + 4z is the sample one ahead along the chosen axes, clamped at the
    far edge: numpy fancy indexing, the plain statement of it, is the oracle."""
    rng = np.random.default_rng(5)
    volume = rng.random((5, 4, 3), dtype=np.float32)
    d, h, w = volume.shape
    z1, y1, x1 = (np.minimum(np.arange(n) + 1, n - 1) for n in (d, h, w))
    for c in range(8):
        expected = volume[np.ix_(z1 if c & 4 else np.arange(d), y1 if c & 2 else np.arange(h),
                                 x1 if c & 1 else np.arange(w))]
        np.testing.assert_array_equal(corner_bricks(volume)[..., c], expected)
    flat, slots = pack_volumes([np.ones((2, 2, 2, 3), np.float32), volume])
    start = slots[1].offset
    np.testing.assert_array_equal(flat[start:start + volume.size * 8].reshape(d, h, w, 8),
                                  corner_bricks(volume))
