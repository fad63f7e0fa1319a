"""`[scene] preview`: the moment a scene's picture shows. `emberfx render` without --frames renders
up to it (preview / fixed_dt steps), and the value is checked like every scene field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from emberfx.core.errors import SceneError
from emberfx.model.scene import load_scene, loads_scene

ROOT = Path(__file__).resolve().parent.parent

TINY = """
[scene]
fixed_dt = 0.02
size = [64, 36]
preview = {preview}

[[entity]]
name = "jet"
[entity.emitter]
capacity = 256
rate = 500.0
"""


def test_preview_default_and_steps():
    settings = loads_scene("[scene]\nfixed_dt = 0.02\n").settings
    assert settings.preview == 2.0
    assert settings.preview_steps() == 100
    assert loads_scene(TINY.format(preview=0.1)).settings.preview_steps() == 5
    assert loads_scene(TINY.format(preview=0.0)).settings.preview_steps() == 1


@pytest.mark.parametrize("value, needle", [
    ("-0.5", "expected float >= 0.0, found -0.5"),
    ('"soon"', "expected float, found 'soon'"),
    ("1e9", "at most an hour"),
    ("inf", "expected a finite number"),
])
def test_preview_refused(value, needle):
    with pytest.raises(SceneError) as info:
        loads_scene(TINY.format(preview=value), path="x.toml")
    text = str(info.value)
    assert "scene.preview" in text and needle in text and "\n" not in text


def test_every_bundled_scene_names_its_preview():
    for path in sorted((ROOT / "scenes").glob("*.toml")):
        assert "preview" in path.read_text().split("[[entity]]")[0], path.name
        assert load_scene(path).settings.preview > 0.0, path.name


def test_render_without_frames_stops_at_the_preview(gpu, tmp_path):
    scene = tmp_path / "tiny.toml"
    scene.write_text(TINY.format(preview=0.1))
    out = tmp_path / "tiny.png"
    done = subprocess.run([sys.executable, "-m", "emberfx", "render", str(scene), "--out",
                           str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "(5 frames" in done.stdout, done.stdout
    assert Image.open(out).size == (64, 36)
