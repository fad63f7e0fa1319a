"""Unknown keys inside nested tables (an emitter's ``shape``, ``on_death``, ``bursts[0]``, a
colour stop) are refused like those at component level: one line with the file, the entity, the
full field path and the closest field name, instead of being dropped so the typo becomes the
default."""

from __future__ import annotations

import subprocess
import sys
import typing
from typing import Any

import pytest
import tomli_w

from emberfx.core.errors import SceneError
from emberfx.model.camera import Camera
from emberfx.model.light import Light
from emberfx.model.registry import component_types
from emberfx.model.scene import Scene, SceneSettings, loads_scene
from emberfx.model.scene_fields import field_names, is_record_class, members, type_hints

TARGET = '[[entity]]\nname = "b"\n[entity.emitter]\nrate = 10.0\n'


def scene_error(text: str) -> SceneError:
    with pytest.raises(SceneError) as info:
        loads_scene(text, path="scene.toml")
    return info.value


@pytest.mark.parametrize("table, path, typo, meant", [
    ('on_death = { emitter = "b", cuont = 5 }', "emitter.on_death.cuont", "cuont", "count"),
    ('collision = { frction = 0.2 }', "emitter.collision.frction", "frction", "friction"),
    ('shape = { kind = "sphere", raduis = 2.0 }', "emitter.shape.raduis", "raduis", "radius"),
    ('flipbook = { fsp = 5 }', "emitter.flipbook.fsp", "fsp", "fps"),
    ('bursts = [{ cuont = 5 }]', "emitter.bursts[0].cuont", "cuont", "count"),
    ('bursts = [{ count = 5 }, { time = 1.0, cuont = 5 }]', "emitter.bursts[1].cuont", "cuont",
     "count"),
    ('color = [{ t = 0.0, color = "#ffffff" }, { t = 1.0, color = "#000000", alpah = 0.5 }]',
     "emitter.color[1].alpah", "alpah", "alpha"),
])
def test_a_typo_in_a_nested_table_is_one_line_with_its_path(table, path, typo, meant):
    error = scene_error(f'[[entity]]\nname = "jet"\n[entity.emitter]\n{table}\n{TARGET}')
    text = str(error)
    assert "\n" not in text
    assert error.entity == "jet" and error.field == path
    if meant == "alpha":   # a colour stop has no alpha: it lists what it has
        assert text == (f"scene.toml: entity 'jet': {path}: unknown key '{typo}', expected one "
                        f"of: t, color")
    else:
        assert text == (f"scene.toml: entity 'jet': {path}: unknown key '{typo}', did you mean "
                        f"'{meant}'?")


def _nested_paths(cls: type, path: str, seen: frozenset = frozenset()):
    """(path, class) for every table nested in ``cls``'s tables, found from the type hints;
    a path steps into an array by its first item (``bursts[0]``)."""
    for name in field_names(cls):
        pending = [(type_hints(cls)[name], f"{path}.{name}")]
        while pending:
            hint, where = pending.pop()
            for member in members(hint):
                if isinstance(member, type) and typing.get_origin(member) is None \
                        and is_record_class(member):
                    yield where, member
                    if member not in seen:
                        yield from _nested_paths(member, where, seen | {member})
                elif typing.get_origin(member) in (list, tuple, dict):
                    pending += [(a, f"{where}[0]") for a in typing.get_args(member)
                                if a is not Ellipsis]


def _table_at(path: str, leaf: dict) -> tuple[str, dict]:
    """A component key and its table holding ``leaf`` at ``path`` ('emitter.bursts[0]')."""
    key, *steps = path.split(".")
    value: object = leaf
    for step in reversed(steps):
        name, _, index = step.partition("[")
        value = {name: [value] if index else value}
    assert isinstance(value, dict)
    return key, value


NESTED = [(path, cls) for key, entry in component_types().items()
          for path, cls in _nested_paths(entry.cls, key)]
NESTED += [(path, cls) for key, cls in (("scene", SceneSettings), ("camera", Camera),
                                        ("light", Light)) for path, cls in _nested_paths(cls, key)]


def test_the_sweep_finds_the_nested_tables_of_the_families():
    found = {path for path, _ in NESTED}
    assert {"emitter.shape", "emitter.bursts[0]", "emitter.color[0]", "emitter.flipbook",
            "emitter.collision", "emitter.on_death", "emitter.on_collision",
            "emitter.on_age"} <= found


@pytest.mark.parametrize("path, cls", NESTED, ids=[p for p, _ in NESTED])
def test_every_nested_table_refuses_an_unknown_key(path, cls):
    field = field_names(cls)[-1]
    typo = field + "x"
    key, table = _table_at(path, {typo: 1})
    if key in ("scene", "camera", "light"):
        doc: dict = {key: table}
    else:
        doc = {"entity": [{"name": "e", key: table}]}
    error = scene_error(tomli_w.dumps(doc))
    assert error.field == f"{path}.{typo}"
    assert error.detail == f"unknown key '{typo}', did you mean '{field}'?"


def test_python_scenes_refuse_a_nested_typo_too():
    scene = Scene()
    with pytest.raises(SceneError) as info:
        scene.add("jet", emitter={"shape": {"kind": "sphere", "raduis": 2.0}})
    assert str(info.value) == ("<scene>: entity 'jet': emitter.shape.raduis: unknown key "
                               "'raduis', did you mean 'radius'?")


def test_known_nested_keys_still_load():
    scene = loads_scene('[[entity]]\nname = "jet"\n[entity.emitter]\n'
                        'on_death = { emitter = "b", count = 5 }\n'
                        'shape = { kind = "sphere", radius = 2.0 }\n'
                        'bursts = [{ count = 5 }]\n'
                        'color = [{ t = 0.0, color = "#ffffff" }, { t = 1.0, color = "#000000" }]\n'
                        'attributes = { heat = "f32" }\n' + TARGET)
    emitter: Any = scene.entity("jet").components["emitter"]
    assert emitter.on_death.count == 5 and emitter.shape.radius == 2.0
    assert emitter.bursts[0].count == 5 and emitter.attributes == {"heat": "f32"}


def test_validate_refuses_a_nested_typo_in_one_line(tmp_path):
    scene = tmp_path / "scene.toml"
    scene.write_text('[[entity]]\nname = "jet"\n[entity.emitter]\n'
                     'bursts = [{ cuont = 5 }]\n')
    done = subprocess.run([sys.executable, "-m", "emberfx", "validate", str(scene)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"emberfx: error: {scene}: entity 'jet': emitter.bursts[0].cuont: unknown key 'cuont', "
        f"did you mean 'count'?"]
    assert "Traceback" not in done.stderr and "ok" not in done.stdout


def test_a_live_edit_with_a_nested_typo_is_refused_and_undone(gpu):
    from emberfx.engine.engine import Engine

    scene = Scene()
    scene.add("jet", emitter={"capacity": 64, "shape": {"kind": "sphere", "radius": 1.0}})
    with Engine(scene, size=(32, 24)) as engine:
        engine.step()
        engine.entity("jet").emitter.shape = {"kind": "sphere", "raduis": 2.0}
        with pytest.raises(SceneError) as info:
            engine.step()
        assert str(info.value).startswith("live edit: entity 'jet': emitter.shape.raduis: "
                                          "unknown key 'raduis', did you mean 'radius'?")
        assert engine.entity("jet").emitter.shape.radius == 1.0
        engine.step()
