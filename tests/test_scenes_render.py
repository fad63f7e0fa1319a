"""Every scene shipped in scenes/ loads, simulates and renders a non-blank picture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from emberfx.core.frame_graph import Phase
from emberfx.engine.engine import Engine
from emberfx.model.scene import load_scene

SCENES = sorted((Path(__file__).resolve().parent.parent / "scenes").glob("*.toml"))


def test_there_are_scenes():
    assert any(p.name == "fountain.toml" for p in SCENES)


@pytest.mark.parametrize("path", SCENES, ids=[p.stem for p in SCENES])
def test_scene_renders_a_few_frames(gpu, path):
    engine = Engine(load_scene(path), size=(96, 54))
    before = engine.render()
    # fireworks shows only sub-pixel rockets at this size until the first burst (~1.1 s)
    engine.step(90 if path.stem == "fireworks" else 20)
    image = engine.render()
    assert image.shape == (54, 96, 4) and image.dtype == np.uint8
    assert image[..., :3].std() > 1.0                   # something was drawn over the background
    static = all(set(e.components) <= {"fractal"} for e in engine.scene.entities)
    assert static or not np.array_equal(image, before)  # the simulation moved it
    passes = engine.passes()
    present = passes.index("scene:frame:present")          # a ValueError if the frame is not shown
    # after it only the READBACK phase: the gather for the staging ring, and what only it reads
    after = engine.frame_passes()[present + 1:]
    assert [p.name for p in engine.frame_passes()] == passes
    assert all(p.phase is Phase.READBACK for p in after)
    engine.close()
