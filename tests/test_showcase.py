"""The two composed shots, ``scenes/showcase.toml`` (a campfire by water) and
``scenes/generative.toml``: each is run once at 1280x720, as a user on this adapter sees it (on a
CPU adapter with its [cpu] preset, the size kept), and its pictures at three times are compared
with golden images (tests/golden/<scene>_<seconds>s.png, the frame box-filtered to 160x90, under
tests/test_golden.py's limits); the showcase's preview frame must also be composed.

The composition of the showcase's preview frame, at 1280x720: a pixel is drawn when it differs
from `[scene] background` by more than DRAWN_LEVEL (8 %) in some channel; luminance is Rec. 709's
of the tone-mapped sRGB values, in [0, 1].
- at least 40 % of the pixels are drawn;
- each third of the frame (left, middle, right) holds at least 15 % of the drawn pixels;
- at least 5 % of the pixels have luminance above 0.8 (the fire);
- at least 20 % have luminance between 0.2 and 0.7 (what the fire lights).

Both shots hold a fluid or a flock, whose particles amplify rounding: on a hardware adapter each
picture is compared with a second run of its own (the steps give the same bytes twice), as
test_golden.py does for its CHAOTIC scenes.

Regenerate the goldens with ``EMBERFX_UPDATE_GOLDEN=1 pytest tests/test_showcase.py`` and look
at every one before committing it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from test_golden import CHANGED_LEVELS, GOLDEN, UPDATE, difference, limits, read_png

from emberfx.engine.engine import Engine
from emberfx.model.colors import parse_color
from emberfx.model.scene import load_scene

ROOT = Path(__file__).resolve().parent.parent
SIZE = (1280, 720)
GOLDEN_SIZE = (160, 90)
SHOTS = {"showcase": (2.0, None, 9.0), "generative": (2.0, None, 8.0)}
"""scene: the three times its goldens show, seconds (None: its [scene] preview)"""
DRAWN_LEVEL = 0.08 * 255


def golden_name(scene: str, seconds: float) -> str:
    return f"{scene}_{seconds:g}s"


def run_shot(gpu, name: str) -> tuple[dict[float, np.ndarray], float]:
    """The shot's frames at its three times, from one run at SIZE, and its preview time."""
    scene = load_scene(ROOT / "scenes" / f"{name}.toml")
    if gpu.is_software:
        scene = scene.cpu_variant()[0]
    preview = scene.settings.preview
    times = sorted(preview if t is None else t for t in SHOTS[name])
    frames, done = {}, 0
    with Engine(scene, size=SIZE) as engine:
        for seconds in times:
            steps = max(1, round(seconds / scene.settings.fixed_dt))
            engine.step(steps - done)
            done = steps
            frames[seconds] = engine.render()
    return frames, preview


@pytest.fixture(scope="module", params=sorted(SHOTS))
def shot(request, gpu):
    name = request.param
    if not (ROOT / "scenes" / f"{name}.toml").exists():
        pytest.fail(f"scenes/{name}.toml is missing")
    return name, run_shot(gpu, name)


def small(image: np.ndarray) -> np.ndarray:
    return np.asarray(Image.fromarray(image, "RGBA").resize(GOLDEN_SIZE, Image.Resampling.BOX))


def test_the_shot_matches_its_goldens_at_three_times(gpu, shot):
    name, (frames, _) = shot
    again = None
    for seconds, frame in frames.items():
        reference = GOLDEN / f"{golden_name(name, seconds)}.png"
        if UPDATE:
            from emberfx.app.output import write_png

            write_png(reference, small(frame))
            continue
        assert reference.exists(), f"no golden {reference.name}: run EMBERFX_UPDATE_GOLDEN=1"
        if not gpu.is_software:
            again = again or run_shot(gpu, name)[0]
            assert np.array_equal(frame, again[seconds]), f"{name}: two runs differ at {seconds} s"
            continue
        mean, changed = difference(small(frame), read_png(reference))
        mean_limit, changed_limit = limits(gpu)
        assert mean <= mean_limit and changed <= changed_limit, (
            f"{name} at {seconds} s on {gpu.label}: mean difference {mean:.2f} levels (limit "
            f"{mean_limit}), {changed:.2%} of pixels off by > {CHANGED_LEVELS}")
    if UPDATE:
        pytest.skip(f"wrote the goldens of {name}")


def composition(image: np.ndarray, background: str) -> dict[str, float]:
    rgb = image[..., :3].astype(np.float64)
    back = np.array(parse_color(background)[:3]) * 255.0
    drawn = np.asarray((np.abs(rgb - back) > DRAWN_LEVEL).any(axis=2))
    luminance = rgb / 255.0 @ np.array([0.2126, 0.7152, 0.0722])
    width = drawn.shape[1]
    thirds = [drawn[:, k * width // 3:(k + 1) * width // 3].sum() / max(drawn.sum(), 1)
              for k in range(3)]
    return {"drawn": drawn.mean(), "least third": min(thirds),
            "bright": (luminance > 0.8).mean(),
            "lit": ((luminance >= 0.2) & (luminance <= 0.7)).mean()}


def test_the_preview_is_composed(shot):
    name, (frames, preview) = shot
    background = load_scene(ROOT / "scenes" / f"{name}.toml").settings.background
    measured = composition(frames[preview], background)
    wanted = ({"drawn": 0.40, "least third": 0.15, "bright": 0.05, "lit": 0.20}
              if name == "showcase" else {"drawn": 0.10})   # every example: 10 % drawn
    short = {k: round(float(measured[k]), 3) for k in wanted if measured[k] < wanted[k]}
    assert not short, f"below the composition's minimums {wanted}: {short}"


def test_composition_measures_what_it_says():
    """The measure itself, on a picture built here: a background, a bright left block (10 %),
    a mid-grey right block (30 %)."""
    image = np.zeros((100, 300, 4), np.uint8)
    image[..., :3] = (6, 9, 17)
    image[:, :30, :3] = 250            # 10 % of the pixels, luminance ~0.98
    image[:, 210:, :3] = 100           # 30 %, luminance 0.39
    measured = composition(image, "#060911")
    assert measured["drawn"] == pytest.approx(0.4)
    assert measured["least third"] == 0.0   # nothing drawn in the middle third
    assert measured["bright"] == pytest.approx(0.1) and measured["lit"] == pytest.approx(0.3)
