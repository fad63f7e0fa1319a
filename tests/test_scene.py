"""Scene loading, validation messages, round trips and describe(); no GPU needed."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from pathlib import Path
from typing import Annotated

import msgspec
import pytest

from emberfx.core.errors import SceneError
from emberfx.model import registry
from emberfx.model.camera import Camera
from emberfx.model.scene import EntitySpec, Scene, SceneSettings, describe, load_scene, loads_scene
from emberfx.systems.emitter.component import Emitter
from emberfx.systems.forces.forces import MAX_FORCES

SCENES = Path(__file__).resolve().parent.parent / "scenes"

HEADER = """\
[scene]
name = "Test"
"""

FOUNTAIN = HEADER + """
[[entity]]
name = "fountain"
[entity.emitter]
capacity = 1000
"""


def scene_error(tmp_path: Path, text: str, name: str = "bad.toml") -> str:
    """Load `text` from a file in tmp_path; return the SceneError's one-line message."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SceneError) as info:
        load_scene(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: "), message
    return message


def check(message: str, *pieces: str) -> None:
    for piece in pieces:
        assert piece in message, f"{piece!r} not in {message!r}"


# --------------------------------------------------------------------------- malformed scenes

MALFORMED = {
    "toml-syntax": (
        HEADER + "seed = \n",
        ["line 3, column 8", "invalid TOML", "invalid value"]),
    "string-capacity": (
        FOUNTAIN.replace("capacity = 1000", 'capacity = "lots"'),
        ["entity 'fountain'", "emitter.capacity", "expected int", "found 'lots'"]),
    "unknown-component": (
        FOUNTAIN.replace("[entity.emitter]", "[entity.emiter]"),
        ["entity 'fountain'", "emiter", "unknown component 'emiter'",
         "did you mean 'emitter'?"]),
    "unknown-field": (
        FOUNTAIN + "lifetme = 2.0\n",
        ["entity 'fountain'", "emitter.lifetme", "unknown key 'lifetme'",
         "did you mean 'lifetime'?"]),
    "unknown-field-no-match": (
        FOUNTAIN + "zzzzzz = 2.0\n",
        ["emitter.zzzzzz", "unknown key 'zzzzzz'", "expected one of:", "capacity", "lifetime"]),
    "negative-capacity": (
        FOUNTAIN.replace("capacity = 1000", "capacity = -5"),
        ["entity 'fountain'", "emitter.capacity", "expected int >= 1", "found -5"]),
    "absurd-capacity": (
        FOUNTAIN.replace("capacity = 1000", f"capacity = {10**12}"),
        ["entity 'fountain'", "emitter.capacity", "expected int <= 268435456",
         f"found {10**12}"]),
    "duplicate-names": (
        FOUNTAIN + '\n[[entity]]\nname = "other"\n\n[[entity]]\nname = "fountain"\n',
        ["entity[2].name", "expected a unique name", "found 'fountain'", "entity[0]",
         "entity[2]"]),
    "missing-name": (
        FOUNTAIN + "\n[[entity]]\n[entity.emitter]\n",
        ["entity[1].name", "expected a non-empty string", "found nothing"]),
    "empty-name": (
        FOUNTAIN + '\n[[entity]]\nname = ""\n',
        ["entity[1].name", "expected a non-empty string", "found ''"]),
    "bad-background": (
        HEADER + 'background = "red"\n',
        ["scene.background", "expected a colour '#rrggbb'", "found 'red'"]),
    "lifetime-min-above-max": (
        FOUNTAIN + "lifetime = [3.0, 1.0]\n",
        ["entity 'fountain'", "emitter.lifetime", "expected [min, max] with min <= max",
         "found [3.0, 1.0]"]),
    "lifetime-item-type": (
        FOUNTAIN + 'lifetime = [1.0, "x"]\n',
        ["entity 'fountain'", "emitter.lifetime[1]", "expected float", "found 'x'"]),
    "bad-blend": (
        FOUNTAIN + 'blend = "glow"\n',
        ["emitter.blend", "expected one of 'additive', 'alpha', 'opaque'", "found 'glow'"]),
    "bad-camera-kind": (
        HEADER + '[camera]\nkind = "fisheye"\n',
        ["camera.kind", "expected one of 'perspective', 'orthographic'", "found 'fisheye'"]),
    "camera-fov": (
        HEADER + "[camera]\nfov_deg = 200\n",
        ["camera.fov_deg", "expected float < 180.0", "found 200"]),
    "camera-unknown-key": (
        HEADER + "[camera]\nfov = 40.0\n",
        ["camera.fov", "unknown key 'fov'", "did you mean 'fov_deg'?"]),
    "camera-post-init": (
        HEADER + "[camera]\nnear = 10.0\nfar = 1.0\n",
        ["camera", "expected far > near", "found near=10.0 far=1.0"]),
    "fixed-dt-zero": (
        HEADER + "fixed_dt = 0\n",
        ["scene.fixed_dt", "expected float >= 1e-06", "found 0"]),
    "fixed-dt-too-long": (
        HEADER + "fixed_dt = 2.5\n",
        ["scene.fixed_dt", "expected float <= 1.0", "found 2.5"]),
    "size-three-numbers": (
        HEADER + "size = [640, 480, 3]\n",
        ["scene.size", "expected array of length 2", "found [640, 480, 3]"]),
    "size-too-big": (
        HEADER + "size = [640, 100000]\n",
        ["scene.size[1]", "expected int <= 16384", "found 100000"]),
    "seed-negative": (
        HEADER + "seed = -1\n",
        ["scene.seed", "expected int >= 0", "found -1"]),
    "scene-unknown-key": (
        HEADER + 'nmae = "x"\n',
        ["scene.nmae", "unknown key 'nmae'", "did you mean 'name'?"]),
    "unknown-top-level": (
        HEADER + '[scenes]\nname = "x"\n',
        ["scenes", "unknown table 'scenes'", "did you mean 'scene'?"]),
    "entity-not-array": (
        HEADER + '[entity]\nname = "x"\n',
        ["entity", "expected an array of tables [[entity]]", "found a single table"]),
    "component-not-table": (
        HEADER + '[[entity]]\nname = "x"\nemitter = 5\n',
        ["entity 'x'", "emitter", "expected a table [entity.emitter]", "found 5"]),
    "unknown-entity-key": (
        HEADER + '[[entity]]\nname = "x"\nscirpt = "a.py"\n',
        ["entity 'x'", "scirpt", "unknown key 'scirpt'", "did you mean 'script'?"]),
    "scene-not-table": (
        'scene = 5\n',
        ["scene", "expected a table [scene]", "found 5"]),
    "unknown-top-level-key": (
        'sed = 4\n' + HEADER,
        ["sed", "unknown key 'sed'",
         "expected one of: scene, camera, light, render, bindings, entity"]),
    "binding-unknown-key": (
        HEADER + '[bindings]\nspcae = "jump"\n',
        ["bindings.spcae", "unknown key name 'spcae'", "did you mean 'space'?"]),
    "binding-reserved-key": (
        HEADER + '[bindings]\nF1 = "jump"\n',
        ["bindings.F1", "reserved by the frame loop", "inspector"]),
    "binding-not-an-event-name": (
        HEADER + '[bindings]\nb = 3\n',
        ["bindings.b", "expected an event name", "found 3"]),
    "bool-for-int": (
        FOUNTAIN.replace("capacity = 1000", "capacity = true"),
        ["emitter.capacity", "expected int", "found true"]),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_scene(tmp_path, case):
    text, pieces = MALFORMED[case]
    check(scene_error(tmp_path, text), *pieces)


def test_missing_script(tmp_path):
    text = HEADER + '[[entity]]\nname = "fountain"\nscript = "scripts/missing.py"\n'
    message = scene_error(tmp_path, text)
    check(message, "entity 'fountain'", "script", "expected an existing file",
          "found 'scripts/missing.py'", str(tmp_path / "scripts" / "missing.py"))


def test_script_found_relative_to_scene_file(tmp_path, monkeypatch):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "sway.py").write_text("")
    path = tmp_path / "s.toml"
    path.write_text(HEADER + '[[entity]]\nname = "a"\nscript = "scripts/sway.py"\n')
    monkeypatch.chdir(Path("/"))  # the working directory must not matter
    scene = load_scene(path)
    assert scene.entity("a").script == "scripts/sway.py"  # kept as written
    assert scene.resolve("scripts/sway.py") == tmp_path / "scripts" / "sway.py"


def test_missing_file(tmp_path):
    path = tmp_path / "nope.toml"
    with pytest.raises(SceneError) as info:
        load_scene(path)
    check(str(info.value), str(path), "expected an existing scene file")


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[scene]\nname = "caf\xe9"\n')
    with pytest.raises(SceneError) as info:
        load_scene(path)
    check(str(info.value), str(path), "line 2", "expected UTF-8 text", "found byte 0xe9")


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(SceneError) as info:
        load_scene(tmp_path)
    check(str(info.value), str(tmp_path), "found a directory")


def test_loads_scene_without_path_names_a_placeholder():
    with pytest.raises(SceneError) as info:
        loads_scene(HEADER + "seed = -1\n")
    assert str(info.value).startswith("<scene>: scene.seed: ")


# --------------------------------------------------------- components found through the registry

@dataclasses.dataclass(slots=True)
class Sprite:
    """A test-only component with a file-path field."""

    image: str | None = None
    scale: Annotated[float, msgspec.Meta(gt=0.0)] = 1.0

    PATH_FIELDS = ("image",)


@pytest.fixture
def sprite_component(monkeypatch):
    registry.load_builtin_systems()
    monkeypatch.setitem(registry._TYPES, "sprite", registry.ComponentType("sprite", Sprite, None))


def test_registered_component_is_loaded(tmp_path, sprite_component):
    (tmp_path / "img.png").write_bytes(b"")
    text = HEADER + '[[entity]]\nname = "s"\n[entity.sprite]\nimage = "img.png"\nscale = 2.0\n'
    scene = loads_scene(text, path=tmp_path / "s.toml")
    assert scene.entity("s").components == {"sprite": Sprite(image="img.png", scale=2.0)}
    assert loads_scene(scene.to_toml(), path=scene.path) == scene


def test_path_field_must_exist(tmp_path, sprite_component):
    text = HEADER + '[[entity]]\nname = "s"\n[entity.sprite]\nimage = "patterns/x.rle"\n'
    message = scene_error(tmp_path, text)
    check(message, "entity 's'", "sprite.image", "expected an existing file",
          "found 'patterns/x.rle'", str(tmp_path / "patterns" / "x.rle"))


def test_unknown_component_suggests_from_registry(tmp_path, sprite_component):
    text = HEADER + '[[entity]]\nname = "s"\n[entity.sprit]\n'
    check(scene_error(tmp_path, text), "unknown component 'sprit'", "did you mean 'sprite'?")


def test_missing_required_field(tmp_path, monkeypatch):
    @dataclasses.dataclass(slots=True)
    class Label:
        text: str

    registry.load_builtin_systems()
    monkeypatch.setitem(registry._TYPES, "label", registry.ComponentType("label", Label, None))
    message = scene_error(tmp_path, HEADER + '[[entity]]\nname = "l"\n[entity.label]\n')
    check(message, "entity 'l'", "label.text", "expected a value (required), found nothing")


def test_component_that_would_crash_msgspec_is_refused(tmp_path, monkeypatch):
    """msgspec corrupts memory on Annotated[float, Meta(...)] | tuple[...]; refuse it clearly."""
    @dataclasses.dataclass(slots=True)
    class Poisoned:
        span: Annotated[float, msgspec.Meta(ge=0.0)] | tuple[float, float] = 1.0

    registry.load_builtin_systems()
    monkeypatch.setitem(registry._TYPES, "poisoned",
                        registry.ComponentType("poisoned", Poisoned, None))
    text = HEADER + '[[entity]]\nname = "p"\n[entity.poisoned]\nspan = 2.0\n'
    with pytest.raises(TypeError, match="Poisoned.span"):
        loads_scene(text)


# ------------------------------------------------------------------------------------ round trips

SCENE_FILES = sorted(SCENES.glob("*.toml"))


@pytest.mark.parametrize("path", SCENE_FILES, ids=[p.name for p in SCENE_FILES])
def test_example_scene_round_trip(path):
    scene = load_scene(path)
    again = loads_scene(scene.to_toml(), path=scene.path)
    assert again == scene
    assert again.to_toml() == scene.to_toml()


def changed_scene(path: Path | None = None) -> Scene:
    return Scene(
        settings=SceneSettings(name="Changed", seed=2**32 - 1, fixed_dt=0.01, size=(641, 479),
                               background="#20304080"),
        camera=Camera(kind="orthographic", center=(1.5, -2.0), height=3.0, near=0.5, far=20.0),
        entities=[
            EntitySpec("sparks", {"emitter": Emitter(
                capacity=4097, rate=12.5, lifetime=2.0, speed=(0.5, 3.0), position=(1.0, 2.0, 3.0),
                direction=(0.0, 0.0, -1.0), spread_deg=90.0, gravity=(0.0, 0.0, 0.0), drag=1.25,
                size=0.5, color="#ffffff", blend="alpha", allocation="ticket")}),
            EntitySpec("quiet", {"emitter": Emitter()}),
            EntitySpec("empty", {}),
        ],
        path=path,
    )


def test_changed_scene_round_trip(tmp_path):
    scene = changed_scene(tmp_path / "changed.toml")
    again = loads_scene(scene.to_toml(), path=scene.path)
    assert again == scene
    sparks = again.entity("sparks").components["emitter"]
    assert sparks.speed == (0.5, 3.0) and isinstance(sparks.speed, tuple)
    assert sparks.position == (1.0, 2.0, 3.0) and isinstance(sparks.position, tuple)
    assert again.settings.size == (641, 479) and isinstance(again.settings.size, tuple)
    assert list(again.entity("sparks").components) == ["emitter"]
    assert [e.name for e in again.entities] == ["sparks", "quiet", "empty"]


def test_save_writes_atomically_and_reloads(tmp_path):
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "sway.py").write_text("")
    scene = changed_scene()
    scene.entities[0].script = "scripts/sway.py"
    path = tmp_path / "saved.toml"
    path.write_text("old contents")
    scene.save(path)
    again = load_scene(path)
    assert again == scene
    assert again.entity("sparks").script == "scripts/sway.py"
    assert again.path == path
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["saved.toml"]  # no temp left


def test_to_toml_is_readable():
    text = load_scene(SCENES / "fountain.toml").to_toml()
    assert text.index("[scene]") < text.index("[camera]") < text.index("[[entity]]")
    assert "[entity.emitter]" in text
    scene = load_scene(SCENES / "fountain.toml")
    x, y, z = scene.camera.position
    assert f"position = [{x!r}, {y!r}, {z!r}]" in text  # vectors stay on one line


# ---------------------------------------------------------------------------------- scene methods

def test_describe_lists_entities_and_components():
    scene = changed_scene()
    text = describe(scene)
    check(text, "Changed", "641x479", "seed 4294967295", "orthographic", "center=[1.5, -2.0]",
          "sparks", "quiet", "empty", "emitter: capacity=4097", "blend='alpha'",
          "emitter: all defaults")
    assert "fov_deg" not in text  # a perspective-only field, not shown for orthographic


def test_describe_shows_only_non_default_fields():
    scene = load_scene(SCENES / "fountain.toml")
    emitter = scene.entity("fountain").components["emitter"]
    text = describe(scene)
    check(text, "Fountain", "seed 42", "perspective", "fountain", "emitter",
          f"capacity={emitter.capacity}", f"lifetime={list(emitter.lifetime)}")
    assert "allocation" not in text and "blend" not in text


def test_entity_lookup_suggests_a_name():
    scene = changed_scene()
    assert scene.entity("quiet").name == "quiet"
    with pytest.raises(KeyError, match="did you mean 'sparks'"):
        scene.entity("spark")


def test_resolve_without_path_uses_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert changed_scene().resolve("a/b.rle") == tmp_path / "a" / "b.rle"


def test_defaults_when_tables_are_absent():
    scene = loads_scene("")
    assert scene.settings == SceneSettings() and scene.camera == Camera()
    assert scene.entities == []
    assert loads_scene(scene.to_toml()) == scene


def test_no_gpu_is_touched(monkeypatch):
    """Validation must work without an adapter: loading never asks wgpu for one."""
    import wgpu

    def refuse(*args, **kwargs):
        raise AssertionError("scene loading asked wgpu for an adapter")

    for name in ("request_adapter_sync", "request_adapter_async", "enumerate_adapters_sync",
                 "enumerate_adapters_async"):
        if hasattr(wgpu.gpu, name):
            monkeypatch.setattr(wgpu.gpu, name, refuse)
    for path in SCENE_FILES:
        describe(load_scene(path))


def test_public_names_importable():
    from emberfx.model.scene import Scene as S  # noqa: F401
    from emberfx.model.scene import load_scene as load  # noqa: F401


def test_bindings_are_kept_lower_case_and_round_trip(tmp_path):
    scene = loads_scene(HEADER + '[bindings]\nB = "burst"\nf5 = "wind"\n')
    assert scene.bindings == {"b": "burst", "f5": "wind"}
    path = tmp_path / "again.toml"
    scene.save(path)
    assert load_scene(path) == scene


def test_a_scene_built_in_python_is_validated_like_a_file():
    scene = Scene()
    scene.add("jet", emitter={"rate": 10.0})
    scene.add("well", attractor={"strength": 2.0})
    assert [e.name for e in scene.entities] == ["jet", "well"]
    assert scene.entity("jet").components["emitter"].rate == 10.0
    with pytest.raises(SceneError, match=r"entity 'bad': emitter.rate: expected float >= 0.0"):
        scene.add("bad", emitter={"rate": -1.0})
    with pytest.raises(SceneError, match="expected a unique name"):
        scene.add("jet", emitter={})
    with pytest.raises(SceneError, match="unknown component 'emiter'.*did you mean 'emitter'"):
        scene.add("typo", emiter={})
    assert loads_scene(scene.to_toml()) == scene


# ------------------------------------------------------- what validate checks as the engine will

LIFE_SCENE = HEADER + """
[[entity]]
name = "life"
[entity.life]
size = [{w}, {h}]
pattern = "{pattern}"
"""


def life_scene(pattern: str, w=64, h=48, extra="") -> str:
    return LIFE_SCENE.format(w=w, h=h, pattern=pattern) + extra


def test_validate_refuses_a_pattern_offset_out_of_range(tmp_path):
    (tmp_path / "glider.rle").write_text("x = 3, y = 3\nbo$2bo$3o!\n")
    message = scene_error(tmp_path, life_scene("glider.rle", extra="offset = [62, 0]\n"))
    check(message, "entity 'life'", "life.offset", "3x3 pattern inside the 64x48 grid",
          "0 <= x <= 61", "found [62, 0]")
    load_scene_text = life_scene("glider.rle", extra="offset = [61, 45]\n")
    (tmp_path / "fits.toml").write_text(load_scene_text)
    assert load_scene(tmp_path / "fits.toml").entity("life").components["life"].offset == (61, 45)


def test_validate_refuses_a_pattern_larger_than_the_layer(tmp_path):
    (tmp_path / "wide.cells").write_text("O" * 70 + "\n")
    message = scene_error(tmp_path, life_scene("wide.cells"))
    check(message, "entity 'life'", "life.pattern", "fits the 64x48 grid", "found 70x1")


def test_validate_reads_the_pattern_and_names_its_line(tmp_path):
    (tmp_path / "broken.rle").write_text("x = 3, y = 3\nbo$2bq$3o!\n")
    message = scene_error(tmp_path, life_scene("broken.rle"))
    check(message, "entity 'life'", "life.pattern", "broken.rle:2:", "found 'q'")


def forces_scene(count: int, affected_by: str = "") -> str:
    wells = "".join(f'[[entity]]\nname = "well{i}"\n[entity.attractor]\nstrength = 1.0\n'
                    for i in range(count))
    return FOUNTAIN + affected_by + wells


def test_an_emitter_takes_at_most_max_forces(tmp_path):
    loads_scene(forces_scene(MAX_FORCES))
    message = scene_error(tmp_path, forces_scene(MAX_FORCES + 1))
    check(message, "entity 'fountain'", "emitter.affected_by",
          f"expected at most {MAX_FORCES} attractor / force_field / kill_zone components",
          f"found {MAX_FORCES + 1}", "every one in the scene acts while it is unset")
    # naming the ones that act lifts the limit on the scene, not on the emitter
    loads_scene(forces_scene(MAX_FORCES + 1, 'affected_by = ["well0", "well1"]\n'))
    scene = Scene()
    for i in range(MAX_FORCES):
        scene.add(f"well{i}", attractor={})
    scene.add("jet", emitter={})
    with pytest.raises(SceneError, match=r"entity 'jet': emitter.affected_by: expected at most"):
        scene.add("one_too_many", attractor={})


def test_scene_add_validates_an_edited_component_object():
    emitter = Emitter()
    emitter.rate = math.inf
    with pytest.raises(SceneError, match=r"entity 'jet': emitter.rate: expected a finite number, "
                                         r"found inf"):
        Scene().add("jet", emitter=emitter)


def test_describe_is_readable():
    text = describe(load_scene(SCENES / "fireworks.toml"))
    check(text, "shape={kind = 'sphere', radius = 0.1, surface = true}",
          "bursts=[{time = 0.35, count = 1, repeat = 0.9, cycles = 0}]")
    assert "Shape(" not in text and "Burst(" not in text
    for path in SCENE_FILES:
        for line in describe(load_scene(path)).splitlines():
            assert len(line) <= 100 or "," not in line, line   # wrapped between fields


def test_describe_cuts_long_values_after_whole_items():
    scene = Scene()
    scene.add("flag", cloth={"resolution": [64, 8], "pins": [[i, 7] for i in range(40)]})
    line = next(ln for ln in describe(scene).splitlines() if "pins=" in ln)
    pins = line[line.index("pins="):]
    assert re.search(r"pins=\[\[0, 7\], \[1, 7\], .*\[\d+, 7\], \.\.\. \d+ more\]", pins), pins


def test_load_scene_finds_bundled_scenes_by_name_from_any_folder(tmp_path, monkeypatch):
    """The Python API resolves names as the CLI does; a folder path is never a bundled name."""
    monkeypatch.chdir(tmp_path)
    assert load_scene("fountain").settings.name == load_scene("fountain.toml").settings.name
    assert load_scene("fountain").path.name == "fountain.toml"
    with pytest.raises(SceneError, match="did you mean 'fountain'"):
        load_scene("fountian")
    with pytest.raises(SceneError, match="found nothing at"):
        load_scene("sub/fountain.toml")


def test_load_scene_refuses_a_fifo_instead_of_blocking(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    with pytest.raises(SceneError, match="found a special file"):
        load_scene(fifo)


@pytest.mark.parametrize("name", ["~batch0", "a/b", "x:y"])
def test_an_entity_name_that_would_clash_with_resource_or_pass_names_is_refused(name, gpu):
    """Entity names also name GPU resources (<entity>/<key>) and passes (<entity>:<system>:...),
    and '~' starts the engine's own batch names: refused in a file, in Scene.add and in spawn,
    each in one line naming the field."""
    text = f'[[entity]]\nname = "{name}"\n[entity.emitter]\ncapacity = 10\n'
    with pytest.raises(SceneError) as loaded:
        loads_scene(text, path="clash.toml")
    assert str(loaded.value).startswith("clash.toml: entity[0].name: expected a name without")
    assert "\n" not in str(loaded.value) and f"found '{name}'" in str(loaded.value)
    scene = loads_scene("[[entity]]\nname = 'fine'\n[entity.emitter]\ncapacity = 10\n",
                        path="ok.toml")
    with pytest.raises(SceneError, match="name: expected a name without"):
        scene.add(name, emitter={"capacity": 10})
    from emberfx.engine.engine import Engine
    from emberfx.engine.engine_guard import EngineUsageError

    with Engine(scene) as engine:
        with pytest.raises(EngineUsageError, match="expected a name without"):
            engine.spawn(name, {"emitter": {"capacity": 10}})
        assert engine.entity_names() == ["fine"]
