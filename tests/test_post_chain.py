"""The post chain without a copy back: the present pass draws from whichever image holds the
chain's result (the scratch image after an odd number of effects, the scene image after an even
one), for 1, 2 and 3 effects.

Two oracles: the chain as it ran with a copy (the result copied into the scene image, then
presented from there) gives the same bytes; and numpy, applying the effects' formulas to the HDR
capture of the drawn scene (engine.render_hdr(): before any effect), gives the same picture
within a stated tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
import wgpu
from test_post import numpy_bloom, numpy_sobel

from emberfx.core.frame_graph import CopyTexture, FrameGraph, RenderTarget
from emberfx.core.resources import TextureResource
from emberfx.engine.engine import OUTPUT_FORMAT, Engine
from emberfx.model.colors import linear_color
from emberfx.model.scene import loads_scene

SCENE = """
[camera]
kind = "orthographic"
[[entity]]
name = "spark"
[entity.emitter]
capacity = 200
rate = 900.0
speed = 1.5
gravity = [0.0, 0.0, 0.0]
size = 0.4
color = ["#ffffff", "#ff5020"]
[[entity]]
name = "look"
"""
EFFECTS = {"bloom": "[entity.bloom]\nthreshold = 0.3\nintensity = 1.5\nradius = 3\n",
           "tonemap": "[entity.tonemap]\nexposure = 0.8\n",
           "edge_detect": "[entity.edge_detect]\nstrength = 0.5\ncolor = \"#40c0ff\"\n"}
CHAINS = [("tonemap",), ("edge_detect",), ("bloom",), ("bloom", "tonemap"),
          ("edge_detect", "tonemap"), ("bloom", "tonemap", "edge_detect"),
          ("edge_detect", "bloom", "tonemap")]
SIZE = (37, 23)   # not a multiple of the 16 x 16 workgroups
TOLERANCE = 1     # levels of 255


def engine_with(chain: tuple[str, ...]) -> Engine:
    engine = Engine(loads_scene(SCENE + "".join(EFFECTS[e] for e in chain)), size=SIZE)
    engine.step(4)
    return engine


@pytest.mark.parametrize("chain", CHAINS, ids="+".join)
def test_the_present_pass_reads_the_chains_result_and_nothing_copies(gpu, chain):
    with engine_with(chain) as engine:
        passes = engine.frame_passes()
        assert not [p.name for p in passes if isinstance(p.op, CopyTexture)]
        assert not [p.name for p in passes if p.name.endswith(":copy")]
        present = next(p for p in passes if p.name == "scene:frame:present")
        expected = "post/scratch" if len(chain) % 2 else "scene/color"
        assert present.reads == (expected,)
        last_effect = max(i for i, p in enumerate(passes) if ":post:" in p.name)
        assert passes.index(present) > last_effect


def presented_the_old_way(engine: Engine, chain: tuple[str, ...], transparent: bool):
    """After a render: the chain's result copied into the scene image (what a copy pass did
    after an odd number of effects), then presented from the scene image into a new output."""
    device = engine.device
    w, h = engine.size
    encoder = device.create_command_encoder()
    scene = engine.resources["scene/color"]
    assert isinstance(scene, TextureResource)
    if len(chain) % 2:
        scratch = engine.resources["post/scratch"]
        assert isinstance(scratch, TextureResource)
        encoder.copy_texture_to_texture({"texture": scratch.texture}, {"texture": scene.texture},
                                        (w, h, 1))
    output = device.create_texture(
        size=(w, h, 1), format=OUTPUT_FORMAT,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    present = engine._renderer._present_pass(OUTPUT_FORMAT, transparent, "scene/color")
    FrameGraph([present], {"scene/color"}).encode(
        encoder, {"output": RenderTarget(output.create_view(), (0.0, 0.0, 0.0, 1.0))})
    device.queue.submit([encoder.finish()])
    data = device.queue.read_texture({"texture": output},
                                     {"bytes_per_row": w * 4, "rows_per_image": h}, (w, h, 1))
    output.destroy()
    return np.frombuffer(data, np.uint8).reshape(h, w, 4)


@pytest.mark.parametrize("transparent", [False, True], ids=["opaque", "transparent"])
@pytest.mark.parametrize("chain", CHAINS, ids="+".join)
def test_the_image_is_byte_identical_to_presenting_a_copied_result(gpu, chain, transparent):
    with engine_with(chain) as engine:
        image = engine.render(transparent=transparent)
        np.testing.assert_array_equal(image, presented_the_old_way(engine, chain, transparent))
        assert image[..., :3].std() > 5   # particles on the background


def numpy_chain(hdr: np.ndarray, chain: tuple[str, ...]) -> np.ndarray:
    """The effects' formulas on the drawn HDR image in float64, each result stored as float16
    as the chain's rgba16float images store it; returns the sRGB-encoded 8-bit picture that the
    present pass writes into an sRGB output (clamped to [0, 1], alpha 1)."""
    image = hdr.astype(np.float64)
    for effect in chain:
        out = image.copy()
        if effect == "tonemap":
            c = np.maximum(image[..., :3], 0.0) * 0.8
            out[..., :3] = np.clip((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14), 0, 1)
        elif effect == "edge_detect":
            edge = np.clip(0.5 * numpy_sobel(image), 0.0, 1.0)[..., None]
            color = np.asarray(linear_color("#40c0ff")[:3], np.float64)
            out[..., :3] = image[..., :3] * (1 - edge) + color * edge
        else:
            out = numpy_bloom(image, 0.3, 1.5, 3)
        image = out.astype(np.float16).astype(np.float64)
    rgb = np.clip(image[..., :3], 0.0, 1.0)
    srgb = np.where(rgb <= 0.0031308, rgb * 12.92, 1.055 * rgb ** (1 / 2.4) - 0.055)
    return np.round(srgb * 255).astype(np.int16)


@pytest.mark.parametrize("chain", CHAINS, ids="+".join)
def test_the_image_equals_the_numpy_chain_on_the_drawn_scene(gpu, chain):
    """Within TOLERANCE levels of 255 per channel (float16 rounding of each stage and of the
    bloom's bilinear weights, the sRGB encoding of the 8-bit output; 1 measured on lavapipe).
    Presenting the image one effect before the end misses by more than 20 levels."""
    with engine_with(chain) as engine:
        image = engine.render().astype(np.int16)
        hdr = engine.render_hdr()
    expected = numpy_chain(hdr.astype(np.float32), chain)
    delta = np.abs(image[..., :3] - expected)
    assert delta.max() <= TOLERANCE, (delta.max(), np.argwhere(delta > TOLERANCE)[:5])
    unprocessed = numpy_chain(hdr.astype(np.float32), ())
    assert np.abs(expected - unprocessed).max() > 20   # the effects show

