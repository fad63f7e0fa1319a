"""Post passes against numpy: Sobel edges (tiled and naive), tone mapping, and the chain order."""

from __future__ import annotations

import numpy as np
import pytest
import wgpu

from emberfx.core.errors import SceneError
from emberfx.engine.engine import Engine
from emberfx.model.scene import loads_scene
from emberfx.systems.post.component import EdgeDetect
from emberfx.systems.post.system import TONEMAP, edge_settings


def run_shader(gpu, shader: str, settings: bytes, image: np.ndarray) -> np.ndarray:
    """Run one post shader on an (h, w, 4) float image; returns its float16 output as float32."""
    device = gpu.device
    h, w, _ = image.shape
    usage = wgpu.TextureUsage
    source = device.create_texture(size=(w, h, 1), format="rgba16float",
                                   usage=usage.TEXTURE_BINDING | usage.COPY_DST)
    target = device.create_texture(size=(w, h, 1), format="rgba16float",
                                   usage=usage.STORAGE_BINDING | usage.COPY_SRC)
    device.queue.write_texture({"texture": source}, image.astype(np.float16).tobytes(),
                               {"bytes_per_row": w * 8, "rows_per_image": h}, (w, h, 1))
    uniform = device.create_buffer_with_data(data=settings + bytes(64 - len(settings)),
                                             usage=wgpu.BufferUsage.UNIFORM)
    pipeline = gpu.compute_pipeline(shader)
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": uniform}},
        {"binding": 1, "resource": source.create_view()},
        {"binding": 2, "resource": target.create_view()}])
    encoder = device.create_command_encoder()
    cp = encoder.begin_compute_pass()
    cp.set_pipeline(pipeline)
    cp.set_bind_group(0, group)
    cp.dispatch_workgroups(-(-w // 16), -(-h // 16), 1)
    cp.end()
    device.queue.submit([encoder.finish()])
    data = device.queue.read_texture({"texture": target},
                                     {"bytes_per_row": w * 8, "rows_per_image": h}, (w, h, 1))
    return np.frombuffer(data, np.float16).reshape(h, w, 4).astype(np.float32)


def numpy_sobel(image: np.ndarray) -> np.ndarray:
    lum = image[..., :3].astype(np.float64) @ [0.2126, 0.7152, 0.0722]
    p = np.pad(lum, 1, mode="edge")                      # borders repeat the edge pixel
    h, w = lum.shape
    at = lambda dy, dx: p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]  # noqa: E731
    gx = (at(-1, 1) + 2 * at(0, 1) + at(1, 1)) - (at(-1, -1) + 2 * at(0, -1) + at(1, -1))
    gy = (at(1, -1) + 2 * at(1, 0) + at(1, 1)) - (at(-1, -1) + 2 * at(-1, 0) + at(-1, 1))
    return np.sqrt(gx * gx + gy * gy)


@pytest.mark.parametrize("size", [(37, 23), (16, 16), (1, 1), (64, 33)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_tiled_sobel_equals_numpy_and_the_naive_version(gpu, size):
    """float16 image in and out: edges within 2e-3 of numpy (float16 rounding of the output)."""
    w, h = size
    rng = np.random.default_rng(w * h)
    image = rng.random((h, w, 4)).astype(np.float16).astype(np.float32)
    settings = edge_settings(EdgeDetect(strength=0.25, color="#ffffff", mode="edges"))
    tiled = run_shader(gpu, "post/edge_detect.wgsl", settings, image)
    naive = run_shader(gpu, "post/edge_detect_naive.wgsl", settings, image)
    np.testing.assert_array_equal(tiled, naive)
    expected = np.clip(0.25 * numpy_sobel(image), 0, 1)
    np.testing.assert_allclose(tiled[..., 0], expected, atol=2e-3)
    np.testing.assert_allclose(tiled[..., 3], image[..., 3], atol=1e-3)


@pytest.mark.parametrize("operator", ["aces", "reinhard"])
def test_tonemap_equals_its_formula(gpu, operator):
    rng = np.random.default_rng(1)
    image = (rng.random((19, 27, 4)) * 8).astype(np.float16).astype(np.float32)
    rec = np.zeros((), TONEMAP)
    rec["exposure"], rec["inverse_gamma"], rec["aces"] = 1.5, 1.0 / 1.2, int(operator == "aces")
    out = run_shader(gpu, "post/tonemap.wgsl", rec.tobytes(), image)
    c = image[..., :3].astype(np.float64) * 1.5
    mapped = (np.clip((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14), 0, 1)
              if operator == "aces" else c / (1 + c))
    np.testing.assert_allclose(out[..., :3], mapped ** (1 / 1.2), atol=2e-3)


POST_SCENE = """
[camera]
kind = "orthographic"
[[entity]]
name = "spark"
[entity.emitter]
capacity = 100
rate = 600.0
speed = 0.0
gravity = [0.0, 0.0, 0.0]
size = 0.5
color = "#ffffff"
[[entity]]
name = "look"
{first}
{second}
"""


def test_the_chain_runs_in_declared_order_and_changes_the_image(gpu):
    bloom = "[entity.bloom]\nthreshold = 0.2\nintensity = 2.0"
    tone = "[entity.tonemap]\nexposure = 0.5"
    orders = {}
    images = {}
    for first, second in ((bloom, tone), (tone, bloom)):
        engine = Engine(loads_scene(POST_SCENE.format(first=first, second=second)), size=(40, 30))
        engine.step(3)
        names = [p for p in engine.passes() if ":post:" in p]
        orders[first] = names
        images[first] = engine.render()
        # the present comes last, but for the readback's gather (none with one region)
        drawn = [p for p in engine.passes() if not p.startswith("scene:frame:readback")]
        assert drawn[-1] == "scene:frame:present"
    assert orders[bloom] == ["look:post:bloom_extract", "look:post:bloom_blur_x",
                             "look:post:bloom_blur_y", "look:post:bloom_combine",
                             "look:post:tonemap"]
    assert orders[tone][0] == "look:post:tonemap" and orders[tone][-1] == "look:post:bloom_combine"
    assert not np.array_equal(images[bloom], images[tone])


@pytest.mark.parametrize("text,pieces", [
    ("[entity.tonemap]\noperator = \"filmic\"", ["tonemap.operator", "aces"]),
    ("[entity.bloom]\nradius = 0", ["bloom.radius", ">= 1"]),
    ("[entity.blur]\nradius = 2", ["unknown component 'blur'"]),
    ("[entity.edge_detect]\ncolor = \"white\"", ["edge_detect.color", "#rrggbb"]),
])
def test_bad_post_fields_are_one_line_errors(text, pieces):
    with pytest.raises(SceneError) as info:
        loads_scene(f'[[entity]]\nname = "look"\n{text}\n', path="post.toml")
    message = str(info.value)
    assert "\n" not in message
    for piece in pieces:
        assert piece in message, (piece, message)


def test_an_odd_number_of_effects_is_presented_from_the_scratch_image(gpu):
    text = POST_SCENE.format(first="[entity.bloom]\n[entity.edge_detect]",
                             second="[entity.tonemap]")
    engine = Engine(loads_scene(text), size=(40, 30))
    names = engine.passes()
    assert not [n for n in names if n.endswith(":copy")]
    present = next(p for p in engine.frame_passes() if p.name == "scene:frame:present")
    assert present.reads == ("post/scratch",)
    assert names.index("look:post:tonemap") < names.index("scene:frame:present")
    engine.step(2)
    assert engine.render()[..., :3].std() > 0


# ------------------------------------------------------------------------------ bloom vs numpy
def bloom_sigma_rule() -> tuple[float, float]:
    """(factor, floor) of the blur's sigma = max(radius * factor, floor), read from the WGSL so the
    oracle follows the shader's weights without retyping them; fails if the kernel is not the
    normalised Gaussian the numpy chain below computes."""
    import re

    from emberfx.core import wgsl

    text = wgsl.read_text("post/bloom_blur.wgsl")
    match = re.search(r"let sigma = max\(f32\(r\) \* ([0-9.]+), ([0-9.]+)\);", text)
    assert match, "bloom_blur.wgsl: sigma is no longer max(f32(r) * a, b)"
    assert "exp(-f32(k * k) / (2.0 * sigma * sigma))" in text and "sum / weight" in text
    return float(match[1]), float(match[2])


def numpy_bloom(image: np.ndarray, threshold: float, intensity: float, radius: int) -> np.ndarray:
    """The bloom chain in float64: 2x2-average extract at half size minus the threshold, the
    separable Gaussian (clamped edges, weights normalised), then bilinear upsampling (clamped,
    texel centres) added back with the intensity."""
    h, w, _ = image.shape
    hh, hw = max(1, h // 2), max(1, w // 2)
    rgb = image[..., :3].astype(np.float64)
    ys, xs = np.minimum(np.arange(hh)[:, None] * 2 + [0, 1], h - 1), np.minimum(
        np.arange(hw)[:, None] * 2 + [0, 1], w - 1)
    block = sum(rgb[ys[:, a]][:, xs[:, b]] for a in (0, 1) for b in (0, 1)) * 0.25
    bright = np.maximum(block - threshold, 0.0)
    factor, floor = bloom_sigma_rule()
    sigma = max(radius * factor, floor)
    taps = np.arange(-radius, radius + 1)
    weights = np.exp(-taps ** 2 / (2 * sigma * sigma))
    weights /= weights.sum()
    for axis, n in ((1, hw), (0, hh)):
        index = np.clip(np.arange(n)[:, None] + taps, 0, n - 1)          # (n, taps)
        gathered = np.take(bright, index, axis=axis)                      # axis grows a taps dim
        bright = np.tensordot(gathered, weights, axes=([axis + 1], [0]))

    def coords(n_out, n_in):
        t = (np.arange(n_out) + 0.5) / n_out * n_in - 0.5
        lo = np.floor(t).astype(int)
        return np.clip(lo, 0, n_in - 1), np.clip(lo + 1, 0, n_in - 1), t - lo
    y0, y1, fy = coords(h, hh)
    x0, x1, fx = coords(w, hw)
    fy, fx = fy[:, None, None], fx[None, :, None]
    glow = ((1 - fy) * ((1 - fx) * bright[y0][:, x0] + fx * bright[y0][:, x1])
            + fy * ((1 - fx) * bright[y1][:, x0] + fx * bright[y1][:, x1]))
    out = image.astype(np.float64).copy()
    out[..., :3] = rgb + intensity * glow
    return out


def run_bloom_chain(gpu, image: np.ndarray, component) -> np.ndarray:
    """The four bloom shaders, bound as their WGSL headers say, with settings packed through the
    WGSL-derived BloomSettings dtype from a Bloom component; returns the float16 result."""
    from emberfx.systems.post.system import BLOOM, HDR

    device = gpu.device
    h, w, _ = image.shape
    half = (max(1, w // 2), max(1, h // 2))
    usage = wgpu.TextureUsage
    texture = lambda size: device.create_texture(  # noqa: E731
        size=(*size, 1), format=HDR,
        usage=usage.STORAGE_BINDING | usage.TEXTURE_BINDING | usage.COPY_SRC | usage.COPY_DST)
    source, target, a, b = texture((w, h)), texture((w, h)), texture(half), texture(half)
    device.queue.write_texture({"texture": source}, image.astype(np.float16).tobytes(),
                               {"bytes_per_row": w * 8, "rows_per_image": h}, (w, h, 1))
    settings = []
    for horizontal in (1, 0):
        rec = np.zeros((), BLOOM)
        rec["threshold"], rec["intensity"] = component.threshold, component.intensity
        rec["radius"], rec["horizontal"] = component.radius, horizontal
        settings.append(device.create_buffer_with_data(data=rec.tobytes(),
                                                       usage=wgpu.BufferUsage.UNIFORM))
    sampler = device.create_sampler(mag_filter="linear", min_filter="linear")
    encoder = device.create_command_encoder()
    cp = encoder.begin_compute_pass()
    for shader, resources, size in [
            ("post/bloom_extract.wgsl", [settings[0], source, a], half),
            ("post/bloom_blur.wgsl", [settings[0], a, b], half),
            ("post/bloom_blur.wgsl", [settings[1], b, a], half),
            ("post/bloom_combine.wgsl", [settings[0], source, a, sampler, target], (w, h))]:
        pipeline = gpu.compute_pipeline(shader)
        entries = [{"binding": i, "resource": {"buffer": r} if isinstance(r, wgpu.GPUBuffer)
                    else r.create_view() if isinstance(r, wgpu.GPUTexture) else r}
                   for i, r in enumerate(resources)]
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, device.create_bind_group(layout=pipeline.get_bind_group_layout(0),
                                                      entries=entries))
        cp.dispatch_workgroups(-(-size[0] // 16), -(-size[1] // 16), 1)
    cp.end()
    device.queue.submit([encoder.finish()])
    data = device.queue.read_texture({"texture": target},
                                     {"bytes_per_row": w * 8, "rows_per_image": h}, (w, h, 1))
    return np.frombuffer(data, np.float16).reshape(h, w, 4).astype(np.float32)


@pytest.mark.parametrize("size", [(48, 32), (37, 21)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_bloom_chain_equals_numpy(gpu, size):
    """A dark image with a few bright (HDR) spots and a bright bar: the GPU chain within 6e-3 of
    the float64 oracle (float16 textures at each of the four stages with values up to ~6, and the
    sampler's bilinear weights; 3.3e-3 measured on lavapipe). Radius 2 or 4 instead of 3, a
    threshold 0.1 higher or an intensity 0.1 lower each miss by more than 2e-2."""
    from emberfx.systems.post.component import Bloom

    w, h = size
    rng = np.random.default_rng(w)
    image = np.zeros((h, w, 4), np.float32)
    image[..., :3] = rng.random((h, w, 3)) * 0.3
    image[..., 3] = rng.random((h, w))
    for x, y, value in [(5, 4, 6.0), (w - 3, h // 2, 3.0), (w // 2, h - 2, 4.5)]:
        image[y, x, :3] = value * np.float32([1.0, 0.6, 0.3])
    image[h // 3, 10:w - 10, 2] = 2.5
    image = image.astype(np.float16).astype(np.float32)
    component = Bloom(threshold=0.4, intensity=1.5, radius=3)
    out = run_bloom_chain(gpu, image, component)
    expected = numpy_bloom(image, component.threshold, component.intensity, component.radius)
    np.testing.assert_allclose(out, expected, atol=6e-3)
    glow = expected[..., :3] - image[..., :3]
    assert glow.max() > 0.2 and (glow > 1e-3).mean() > 0.05   # the bloom is large and visible


# ------------------------------------------------------------------------- resources and resize
CHAIN_SCENE = POST_SCENE.format(first="[entity.bloom]\nthreshold = 0.2\nintensity = 2.0\n"
                                      "[entity.tonemap]\nexposure = 0.7",
                                second="[entity.edge_detect]\nstrength = 0.5")


def test_a_resize_renders_what_a_scene_made_at_that_size_renders(gpu):
    """Three effects (so the present pass reads the scratch image): an engine drawn at 40x30,
    then into a 56x44 output, gives the bytes of an engine made at 56x44; every post binding
    (the present pass's too) follows the new images, and the shared images are remade at the
    new size."""
    from emberfx.engine.engine import OUTPUT_FORMAT

    with Engine(loads_scene(CHAIN_SCENE), size=(40, 30)) as resized:
        resized.step(3)
        before = resized.render()
        output = gpu.device.create_texture(
            size=(56, 44, 1), format=OUTPUT_FORMAT,
            usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
        resized.draw_to(output)
        after = resized.render()
        scratch = resized.resources["post/scratch"].texture
        bloom = resized.resources["post/bloom_a"].texture
        assert (scratch.size[:2], bloom.size[:2]) == ((56, 44), (28, 22))
    with Engine(loads_scene(CHAIN_SCENE), size=(56, 44)) as fresh:
        fresh.step(3)
        expected = fresh.render()
    with Engine(loads_scene(POST_SCENE.format(first="", second="")), size=(56, 44)) as plain:
        plain.step(3)
        unprocessed = plain.render()
    assert before.shape == (30, 40, 4) and after.shape == (44, 56, 4)
    np.testing.assert_array_equal(after, expected)
    assert np.abs(expected.astype(int) - unprocessed).max() > 40   # the effects show


def test_post_resources_are_named_per_entity_and_the_shared_images_outlive_one_entity(gpu):
    """Settings are <entity>/<effect>:settings; the scratch images are shared, so deleting the
    entity named "post" (whose release takes its own settings) leaves the other entity's effect
    running, and deleting the last effect releases them."""
    text = POST_SCENE.format(first="", second="") + (
        '[[entity]]\nname = "post"\n[entity.bloom]\nthreshold = 0.2\n'
        '[[entity]]\nname = "grade"\n[entity.tonemap]\nexposure = 3.0\n')
    with Engine(loads_scene(text), size=(40, 30)) as engine:
        post_names = {n for n in engine.resources.names()
                      if n.startswith(("post/", "grade/"))}
        assert post_names == {"post/bloom:settings_x", "post/bloom:settings_y",
                              "grade/tonemap:settings",
                              "post/scratch", "post/bloom_a", "post/bloom_b"}
        engine.step(2)
        engine.delete("post")
        assert "post/bloom:settings_x" not in engine.resources
        assert "post/scratch" in engine.resources
        assert [n for n in engine.passes() if "post" in n] == ["grade:post:tonemap"]
        engine.step(1)
        image = engine.render()
        engine.delete("grade")
        assert not [n for n in engine.resources.names() if n.startswith(("post/", "grade/"))]
        assert not [n for n in engine.passes() if "post" in n]
        engine.step(1)
        assert not np.array_equal(engine.render(), image)   # exposure 3 no longer applies


def test_a_new_background_rebinds_the_chain_to_the_new_scene_image(gpu):
    """A reload that changes only the background makes new targets; the effects then read and
    write the new scene image: the bytes of an engine made with that background."""
    lit = '[scene]\nbackground = "#284060"\n' + CHAIN_SCENE
    with Engine(loads_scene(CHAIN_SCENE), size=(40, 30)) as engine:
        engine.step(3)
        dark = engine.render()
        engine.reload(loads_scene(lit))
        relit = engine.render()
    with Engine(loads_scene(lit), size=(40, 30)) as fresh:
        fresh.step(3)
        expected = fresh.render()
    np.testing.assert_array_equal(relit, expected)
    assert not np.array_equal(dark, expected)
