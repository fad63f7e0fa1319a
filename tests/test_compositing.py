"""Renders for compositing: transparent PNG/MOV, EXR before tonemapping, the depth pass, and the
host-side timeout on blocking readbacks.

Oracles: the transparent image composited over the background (in linear light, by hand) against
the normal render; the EXR against the scene target read here with wgpu's own queue.read_texture
after encoding the RENDER phase; the depth against the known distance of a cloth plane; the
timeout with a fake map wait that never completes (a real endless WGSL loop would hang lavapipe
for the rest of the test run).
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from emberfx.core.errors import EmberError

BACKGROUND = "#336699"
PLANE_Z = -2.0
CAMERA_Z = 4.0
SCENE = f"""
[scene]
name = "Layers"
seed = 3
size = [96, 64]
background = "{{background}}"

[camera]
kind = "{{camera}}"
position = [0.0, 0.0, {CAMERA_Z}]
target = [0.0, 0.0, 0.0]
center = [0.0, 0.0]
height = 3.0

[[entity]]
name = "soft"
[entity.emitter]
capacity = 3000
rate = 6000.0
lifetime = [0.3, 0.6]
speed = [1.5, 3.0]
spread_deg = 70.0
gravity = [0.0, 0.0, 0.0]
size = 0.2
color = ["#ffcc66", "#ff3300"]
blend = "{{blend}}"

[[entity]]
name = "flag"
[entity.cloth]
resolution = [8, 8]
size = [2.0, 1.5]
position = [-2.4, -1.8, {PLANE_Z}]
pins = "none"
gravity = [0.0, 0.0, 0.0]
"""
# Tolerance of the composite against the normal render, in linear light: straight colour, alpha
# and the normal render are each rounded to 8 bits (sRGB steps are up to 1/80 linear near white).
COMPOSITE_TOLERANCE = 3.0 / 255.0


def _scene(background=BACKGROUND, blend="alpha", camera="perspective"):
    from emberfx.model.scene import loads_scene

    return loads_scene(SCENE.format(background=background, blend=blend, camera=camera),
                       path="<layers>")


def _engine(**kw):
    from emberfx.engine.engine import Engine

    return Engine(_scene(**kw))


def srgb_to_linear(c):
    c = np.asarray(c, np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def composite(transparent: np.ndarray, background: str) -> np.ndarray:
    """``transparent`` (straight sRGB, alpha) over the opaque background: linear light."""
    rgb = srgb_to_linear(transparent[..., :3] / 255.0)
    alpha = transparent[..., 3:] / 255.0
    back = srgb_to_linear(np.array([int(background[i:i + 2], 16) for i in (1, 3, 5)]) / 255.0)
    return rgb * alpha + back * (1.0 - alpha)


@pytest.mark.parametrize("blend,background", [("alpha", BACKGROUND), ("additive", "#000000")])
def test_transparent_png_composites_back_to_the_normal_render(gpu, blend, background):
    engine = _engine(blend=blend, background=background)
    try:
        engine.step(20)
        normal = engine.render()
        transparent = engine.render(transparent=True)
    finally:
        engine.close()
    alpha = transparent[..., 3]
    empty = alpha == 0
    assert 0.2 < empty.mean() < 0.95, "the scene should cover part of the image"
    # nothing drawn: the normal render shows the background there, but for additive light too
    # faint for one 8-bit alpha step (sRGB encoding lifts it to one colour step)
    back = np.array([int(background[i:i + 2], 16) for i in (1, 3, 5)])
    assert np.abs(normal[empty][:, :3].astype(int) - back).max() <= 1
    assert (alpha == 255).any() and ((alpha > 0) & (alpha < 255)).any()
    drawn = ~empty
    normal_linear = srgb_to_linear(normal[drawn][:, :3] / 255.0)
    difference = np.abs(composite(transparent, background)[drawn] - normal_linear)
    assert difference.max() <= COMPOSITE_TOLERANCE


def test_additive_light_over_a_background_differs_by_at_most_the_background(gpu):
    """Additive light has no coverage: C over B gives C + B (1 - alpha), the normal render
    C + B. The difference is bounded by the background's own value (documented)."""
    engine = _engine(blend="additive")
    try:
        engine.step(20)
        normal = engine.render()
        transparent = engine.render(transparent=True)
    finally:
        engine.close()
    drawn = transparent[..., 3] > 0
    back = srgb_to_linear(np.array([0x33, 0x66, 0x99]) / 255.0)
    lower = composite(transparent, BACKGROUND)[drawn]
    normal_linear = srgb_to_linear(normal[drawn][:, :3] / 255.0)
    # in linear light: composite <= normal <= composite + background (+ 8-bit rounding)
    assert (normal_linear - lower).min() >= -COMPOSITE_TOLERANCE
    assert (normal_linear - lower - back).max() <= COMPOSITE_TOLERANCE
    assert (normal_linear - lower).max() > 0.5 * back.max(), "additive light shows the gap"


def run_module(*argv, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "emberfx", *map(str, argv)], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=600)


def _scene_file(tmp_path, **kw):
    path = tmp_path / "layers.toml"
    path.write_text(SCENE.format(**{"background": BACKGROUND, "blend": "additive",
                                    "camera": "perspective", **kw}))
    return path


def test_transparent_mov_keeps_alpha_frame_for_frame(gpu, tmp_path):
    from PIL import Image

    from emberfx.app.video import ffmpeg_exe

    scene = _scene_file(tmp_path, blend="alpha")
    for out in ("clip.mov", "last.png"):
        r = run_module("render", scene, "--frames", 4, "--out", tmp_path / out, "--transparent")
        assert r.returncode == 0, r.stderr
    decoded = subprocess.run([ffmpeg_exe(), "-v", "error", "-i", str(tmp_path / "clip.mov"),
                              "-f", "rawvideo", "-pix_fmt", "rgba", "-"],
                             capture_output=True, check=True).stdout
    frames = np.frombuffer(decoded, np.uint8).reshape(-1, 64, 96, 4)
    assert len(frames) == 4
    last = np.asarray(Image.open(tmp_path / "last.png"))
    np.testing.assert_array_equal(frames[-1], last)   # PNG frames: lossless, alpha kept
    assert (last[..., 3] == 0).any() and (last[..., 3] == 255).any()


def test_exr_holds_the_scene_target_before_tonemapping(gpu, tmp_path):
    OpenEXR = pytest.importorskip("OpenEXR")
    import wgpu

    from emberfx.core.frame_graph import Phase
    from emberfx.core.resources import TextureResource
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import load_scene

    scene = _scene_file(tmp_path)
    scene.write_text(scene.read_text() + '\n[[entity]]\nname = "grade"\n[entity.tonemap]\n')
    r = run_module("render", scene, "--frames", 6, "--out", tmp_path / "hdr.exr")
    assert r.returncode == 0, r.stderr
    with OpenEXR.File(str(tmp_path / "hdr.exr")) as exr:
        channels = exr.channels()
        assert list(channels) == ["RGBA"]
        found = channels["RGBA"].pixels
    assert found.dtype == np.float16 and found.shape == (64, 96, 4)

    engine = Engine(load_scene(scene))
    try:
        engine.step(6)
        tonemapped = engine.render()   # also writes this frame's camera and clock uniform
        w, h = engine.size
        texture = engine.device.create_texture(
            size=(w, h, 1), format="rgba8unorm-srgb",
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        encoder = engine.device.create_command_encoder()
        engine.encode(encoder, texture, phases={Phase.RENDER})
        engine.device.queue.submit([encoder.finish()])
        scene_target = engine.resources["scene/color"]
        assert isinstance(scene_target, TextureResource)
        scene_texture = scene_target.texture
        data = engine.device.queue.read_texture(
            {"texture": scene_texture, "origin": (0, 0, 0), "mip_level": 0},
            {"offset": 0, "bytes_per_row": w * 8, "rows_per_image": h}, (w, h, 1))
        want = np.frombuffer(data, np.float16).reshape(h, w, 4)
    finally:
        engine.close()
    np.testing.assert_array_equal(found, want)
    # tonemapping maps into [0, 1] in place: values above 1 are only there before it
    assert found[..., :3].max() > 1.0, "additive light should exceed 1 before tonemapping"
    assert tonemapped.shape == (64, 96, 4)


@pytest.mark.parametrize("camera,distance", [("perspective", CAMERA_Z - PLANE_Z),
                                             ("orthographic", 250.0 - PLANE_Z)])
def test_depth_is_the_plane_distance(gpu, tmp_path, camera, distance):
    """The cloth lies in z = PLANE_Z facing the camera: its view depth is the same everywhere.
    An orthographic camera sits at z = far / 2 (far 500: the camera's default)."""
    engine = _engine(camera=camera)
    try:
        engine.step(2)
        depth = engine.render_depth()
    finally:
        engine.close()
    covered = np.isfinite(depth)
    assert 0.02 < covered.mean() < 0.6
    np.testing.assert_allclose(depth[covered], distance, rtol=1e-4)
    assert np.isinf(depth[~covered]).all() and (depth[~covered] > 0).all()


def test_cli_depth_files_npy_and_exr_match_the_engine(gpu, tmp_path):
    OpenEXR = pytest.importorskip("OpenEXR")
    scene = _scene_file(tmp_path)
    r = run_module("render", scene, "--frames", 3, "--out", tmp_path / "a.png", "--depth",
                   tmp_path / "z.npy")
    assert r.returncode == 0, r.stderr
    r = run_module("render", scene, "--frames", 3, "--out", tmp_path / "b.png", "--depth",
                   tmp_path / "z.exr")
    assert r.returncode == 0, r.stderr
    npy = np.load(tmp_path / "z.npy")
    with OpenEXR.File(str(tmp_path / "z.exr")) as exr:
        z = exr.channels()["Z"].pixels
    assert npy.dtype == np.float32 and npy.shape == (64, 96)
    np.testing.assert_array_equal(z, npy)
    np.testing.assert_allclose(npy[np.isfinite(npy)], CAMERA_Z - PLANE_Z, rtol=1e-4)


def test_bad_compositing_arguments_are_one_line(gpu, tmp_path):
    scene = _scene_file(tmp_path)
    for argv, needle in [
        (("--out", tmp_path / "a.mp4", "--transparent"), "H.264 MP4 has no alpha channel"),
        (("--out", tmp_path / "a.gif", "--transparent"), "GIF has no alpha channel"),
        (("--out", tmp_path / "a.png", "--depth", tmp_path / "z.tif"),
         "the file must end in .npy or .exr"),
    ]:
        r = run_module("render", scene, "--frames", 1, *argv)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert needle in r.stderr.strip().splitlines()[-1]
    assert not [p for p in tmp_path.iterdir() if p.suffix != ".toml"]


def test_a_readback_that_never_completes_times_out_naming_the_entity(gpu, monkeypatch):
    from emberfx.core import readback

    engine = _engine()
    try:
        engine.step(2)
        waited = []

        def never(promise, timeout):   # a GPU queue hung by an endless loop
            waited.append(timeout)
            return False

        monkeypatch.setenv("EMBERFX_READBACK_TIMEOUT", "7.5")
        monkeypatch.setattr(readback, "_wait_for_map", never)
        with pytest.raises(readback.ReadbackTimeoutError) as err:
            engine.state("soft")
        message = str(err.value)
        assert "\n" not in message and isinstance(err.value, EmberError)
        assert message.startswith("reading entity 'soft': the GPU gave no result within 7.5 s "
                                  "(EMBERFX_READBACK_TIMEOUT)")
        assert "loops forever" in message
        assert waited == [7.5]
        with pytest.raises(readback.ReadbackTimeoutError, match="entities: soft, flag"):
            engine.render()
        monkeypatch.undo()   # the queue recovers: the engine goes on
        assert engine.state("soft")["alive"].any()
        assert engine.render().shape == (64, 96, 4)
    finally:
        engine.close()


def test_readback_timeout_setting(monkeypatch):
    from emberfx.core import readback

    monkeypatch.delenv("EMBERFX_READBACK_TIMEOUT", raising=False)
    assert readback.readback_timeout(software=False) == 10.0
    assert readback.readback_timeout(software=True) == 300.0
    monkeypatch.setenv("EMBERFX_READBACK_TIMEOUT", "0")
    assert readback.readback_timeout(software=False) is None
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv("EMBERFX_READBACK_TIMEOUT", bad)
        with pytest.raises(EmberError, match=r"^EMBERFX_READBACK_TIMEOUT=.*: expected a number "
                                             r"of seconds >= 0 \(0: no limit\)$"):
            readback.readback_timeout(software=False)
