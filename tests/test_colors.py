"""Colours: the long ('#rrggbb', '#rrggbbaa') and short ('#rgb', '#rgba') hex forms, wherever a
scene or the Python API takes a colour; bad ones are a one-line error listing the forms.

Oracle: a short form is the long form with each digit doubled, as in CSS ("#f80" == "#ff8800").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from emberfx.core.errors import SceneError
from emberfx.model.colors import linear_color, parse_color
from emberfx.model.scene import load_scene
from emberfx.systems.emitter.component import Emitter

SHORT_AND_LONG = [("#f80", "#ff8800"), ("#F80", "#ff8800"), ("#f80c", "#ff8800cc"),
                  ("#000", "#000000"), ("#fff0", "#ffffff00"), ("#1a2b", "#11aa22bb")]
BAD = ["#ff", "#fffff", "#fffffff", "#ggg", "f80", "#f80 ", "#f80\n", "#", "red"]


@pytest.mark.parametrize("short, long", SHORT_AND_LONG)
def test_short_form_is_the_long_form_with_each_digit_doubled(short, long):
    assert parse_color(short) == parse_color(long)
    assert linear_color(short) == linear_color(long)


def test_values_of_the_forms():
    assert parse_color("#f80") == (1.0, 0x88 / 255, 0.0, 1.0)
    assert parse_color("#f80c") == (1.0, 0x88 / 255, 0.0, 0xcc / 255)


@pytest.mark.parametrize("bad", BAD)
def test_a_bad_colour_lists_the_expected_forms(bad):
    with pytest.raises(ValueError) as info:
        parse_color(bad)
    message = str(info.value)
    for form in ("'#rrggbb'", "'#rrggbbaa'", "'#rgb'", "'#rgba'"):
        assert form in message
    assert repr(bad) in message


SCENE = """\
[scene]
name = "Colours"
background = "{bg}"
size = [32, 32]

[[entity]]
name = "jet"
[entity.emitter]
capacity = 64
color = ["{a}", "{b}"]

[[entity]]
name = "stops"
[entity.emitter]
capacity = 64
color = [{{ t = 0.0, color = "{a}" }}, {{ t = 1.0, color = "{b}" }}]
"""


def write_scene(folder: Path, name: str, bg: str, a: str, b: str) -> Path:
    path = folder / name
    path.write_text(SCENE.format(bg=bg, a=a, b=b), encoding="utf-8")
    return path


def test_scene_colours_take_the_short_forms(tmp_path):
    short = load_scene(write_scene(tmp_path, "short.toml", "#123", "#f80", "#f80c"))
    long = load_scene(write_scene(tmp_path, "long.toml", "#112233", "#ff8800", "#ff8800cc"))
    assert linear_color(short.settings.background) == linear_color(long.settings.background)
    for name in ("jet", "stops"):
        emitters = [spec.components["emitter"] for scene in (short, long)
                    for spec in scene.entities if spec.name == name]
        assert all(isinstance(e, Emitter) for e in emitters) and len(emitters) == 2
        stops = [[(t, parse_color(c)) for t, c in e.color_stops()] for e in emitters
                 if isinstance(e, Emitter)]
        assert stops[0] == stops[1]


def test_python_api_takes_the_short_forms():
    assert [parse_color(c) for _, c in Emitter(color="#f80").color_stops()] == \
        [parse_color("#ff8800")]
    assert [parse_color(c) for _, c in Emitter(color=["#f80", "#0f0c"]).color_stops()] == \
        [parse_color("#ff8800"), parse_color("#00ff00cc")]


def test_a_bad_scene_colour_is_one_line_naming_field_and_forms(tmp_path):
    path = write_scene(tmp_path, "bad.toml", "#101014", "#f8", "#fff")
    with pytest.raises(SceneError) as info:
        load_scene(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message and "emitter.color" in message
    assert "'#rgb'" in message and "'#f8'" in message
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "'#rgba'" in done.stderr


def test_a_short_background_renders_as_its_long_form(tmp_path, gpu):
    from emberfx.engine.engine import Engine

    pictures = []
    for name, bg in (("short.toml", "#f80"), ("long.toml", "#ff8800")):
        scene = load_scene(write_scene(tmp_path, name, bg, "#fff", "#fff"))
        scene.entities.clear()   # the background alone
        engine = Engine(scene, size=(16, 16), scripts=False)
        try:
            pictures.append(engine.render())
        finally:
            engine.close()
    assert np.array_equal(pictures[0], pictures[1])
    assert tuple(pictures[0][8, 8, :3]) == (255, 0x88, 0)
