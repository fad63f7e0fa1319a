"""A scene's [cpu] preset (emberfx.model.presets): merged into the scene's own tables on a CPU
adapter, checked at load as strictly as the scene, said on stderr when it applies; and
`[scene] duration`, the shot `emberfx run` renders headless."""

from __future__ import annotations

import pytest

from emberfx.app.headless import for_adapter
from emberfx.core.errors import SceneError
from emberfx.model.scene import loads_scene

SCENE = """
[scene]
name = "heavy"
size = [320, 180]
fixed_dt = 0.02
duration = {duration}

[[entity]]
name = "fire"
[entity.gas]
resolution = [16, 32, 16]
cell = 0.05
look = {{ fire_light = 2.0, absorption = 3.0 }}

[[entity]]
name = "jet"
[entity.emitter]
capacity = 4096
rate = 900.0

[cpu]
{preset}
"""
PRESET = """scene = { size = [160, 90] }
fire = { gas = { resolution = [8, 16, 8], cell = 0.1, look = { step = 0.1 } } }
jet.emitter = { capacity = 1024 }"""


def scene(preset: str = PRESET, duration: float | str = 5.0, path="x.toml"):
    return loads_scene(SCENE.format(preset=preset, duration=duration), path=path)


def test_preset_merges_into_the_scene_and_lists_each_change():
    heavy = scene()
    light, changes = heavy.cpu_variant()
    gas, emitter = light.entity("fire").components["gas"], light.entity("jet").components["emitter"]
    assert light.settings.size == (160, 90)
    assert gas.resolution == (8, 16, 8) and gas.cell == 0.1
    # a table merges: the look keeps the fields the preset does not name
    assert (gas.look.step, gas.look.fire_light, gas.look.absorption) == (0.1, 2.0, 3.0)
    assert emitter.capacity == 1024 and emitter.rate == 900.0
    assert changes == ["scene.size [320, 180] -> [160, 90]",
                       "fire.gas.resolution [16, 32, 16] -> [8, 16, 8]",
                       "fire.gas.cell 0.05 -> 0.1", "fire.gas.look.step default -> 0.1",
                       "jet.emitter.capacity 4096 -> 1024"]
    # the scene itself is untouched, and its TOML keeps the preset
    assert heavy.settings.size == (320, 180)
    again = loads_scene(heavy.to_toml())
    assert again.cpu == heavy.cpu and again.cpu_variant()[1] == changes


def test_no_preset_is_the_scene_itself():
    plain = loads_scene("[scene]\nsize = [64, 36]\n")
    assert plain.cpu == {} and plain.cpu_variant() == (plain, [])
    assert for_adapter(plain) is plain


@pytest.mark.parametrize("preset, needle", [
    ("fier = { gas = { cell = 0.1 } }",
     "x.toml: cpu.fier: expected one of scene, camera, light, render or an entity's name, "
     "found 'fier'; did you mean 'fire'?"),
    ("fire = { emitter = { rate = 1.0 } }",
     "x.toml: cpu.fire.emitter: entity 'fire' has no component 'emitter' to lower; its "
     "components: gas"),
    ("fire = { gas = { cell = -1.0 } }",
     "x.toml: cpu.fire.gas.cell: expected float > 0.0, found -1.0 (with the [cpu] preset "
     "applied)"),
    ("scene = { size = [0, 90] }", "x.toml: cpu.scene.size"),
    ("jet = 3", "x.toml: cpu.jet: expected a table of the fields to change, found 3"),
    ("fire = { gas = { resolutoin = [8, 8, 8] } }", "did you mean 'resolution'"),
])
def test_a_bad_preset_is_one_line_naming_its_entry(preset, needle):
    with pytest.raises(SceneError) as info:
        scene(preset)
    text = str(info.value)
    assert needle in text and "\n" not in text


def test_for_adapter_applies_the_preset_on_a_cpu_adapter_and_says_so(gpu, capsys):
    heavy = scene()
    here = for_adapter(heavy)
    err = capsys.readouterr().err
    if gpu.is_software:
        assert here.settings.size == (160, 90)
        assert "heavy: on a CPU adapter its [cpu] preset lowers scene.size [320, 180] -> " \
               "[160, 90];" in err and "--quality full" in err
    else:
        assert here is heavy and err == ""
    assert for_adapter(heavy, "full") is heavy


def test_duration_steps_and_refusals():
    assert scene(duration=5.0).settings.duration_steps() == 250
    assert scene(duration=0.001).settings.duration_steps() == 1
    assert loads_scene("[scene]\n").settings.duration == 5.0
    for value, needle in (("0.0", "expected float > 0.0"), ("1e9", "at most an hour")):
        with pytest.raises(SceneError) as info:
            scene(duration=value)
        assert "scene.duration" in str(info.value) and needle in str(info.value)


def test_run_headless_renders_the_duration_with_the_preset(gpu, tmp_path, monkeypatch, capsys):
    """`emberfx run` with no display renders the scene's whole shot ([scene] duration), at the
    preset's size on a CPU adapter and at the scene's own with --quality full."""
    import imageio_ffmpeg

    from emberfx.app.cli import main

    path = tmp_path / "shot.toml"
    path.write_text(SCENE.format(duration=0.1, preset='scene = { size = [96, 54] }')
                    .replace("[16, 32, 16]", "[8, 8, 8]"))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.chdir(tmp_path)
    for flags, size in (([], (96, 54) if gpu.is_software else (320, 180)),
                        (["--quality", "full"], (320, 180))):
        assert main(["run", str(path), *flags]) == 0
        out = capsys.readouterr().out
        assert f"wrote shot.mp4 (5 frames, {size[0]}x{size[1]})" in out
        assert imageio_ffmpeg.count_frames_and_secs("shot.mp4")[0] == 5
