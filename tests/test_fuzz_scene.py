"""Fuzzing the scene loader and the Python scene builder (Scene.add) with hypothesis.

Each example takes one of the shipped scenes, changes one field (of [scene], [camera] or a
component table, nested ones included) to a hostile value -- nan, inf, huge, tiny, negative, the
wrong type, the wrong length, deep nesting, strings -- and loads the result from TOML text and,
for component fields, through Scene.add. Either it loads, and then every float in the scene is
finite and fits a 32-bit float, or it raises SceneError whose field path is the mutated field's
(or, for a rule between two fields, whose message names the mutated one). Any other exception
fails the test. Below the fuzzing: the numbers that used to reach the GPU (each refused with its
field path), the per-step birth budget and the animated zoom kept in 32-bit range, and the
pattern placement validate checks against the placement the engine uploads. No GPU; a few
hundred examples in all."""

from __future__ import annotations

import copy
import dataclasses
import math
import tomllib
from pathlib import Path
from types import SimpleNamespace

import msgspec
import numpy as np
import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emberfx.core.errors import SceneError
from emberfx.model.camera import Camera
from emberfx.model.numbers import F32_MAX, U32_MAX
from emberfx.model.registry import component_types
from emberfx.model.scene import Scene, SceneSettings, loads_scene
from emberfx.systems.emitter.component import MAX_CAPACITY, MIN_BURST_REPEAT, Burst, Emitter
from emberfx.systems.emitter.params import Births
from emberfx.systems.fractal.component import MAX_ZOOM, MIN_ZOOM, Fractal
from emberfx.systems.fractal.system import FractalSystem
from emberfx.systems.life.component import pattern_origin
from emberfx.systems.life.patterns import PatternError, place

SCENES = Path(__file__).resolve().parent.parent / "scenes"
SCENE_FILES = sorted(SCENES.glob("*.toml"))
DOCS = {path.name: tomllib.loads(path.read_text(encoding="utf-8")) for path in SCENE_FILES}

FUZZ = settings(max_examples=150, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])


def deep(depth: int):
    value: list = [1.0]
    for _ in range(depth):
        value = [value]
    return value


# values TOML can hold (64-bit ints); the builder also gets what only Python can write
HOSTILE = [math.nan, math.inf, -math.inf, 1e308, -1e308, 3.5e38, 1e39, 5e-324, 1e-300, 1e-39,
           0, 0.0, -0.0, -1, -1.0, -1e-9, 1, 2, 3, 0.5, 1e-3, 1e20, 1e35, 1e-30, 2**31, 2**32,
           2**63 - 1, -2**63,
           1e12, "", "text",
           "#zzzzzz", "nan", True, False, [], [1.0], [1.0, 2.0, 3.0, 4.0], [math.nan, 1.0],
           [[1.0, 2.0]], {}, {"x": 1.0}, deep(40)]
PYTHON_ONLY = [2**64, -2**80, 10**400, 10**5000, (1.0, 2.0), {1: 2.0}]
values = st.one_of(st.sampled_from(HOSTILE), st.floats(), st.integers(-2**63, 2**63 - 1),
                   st.text(max_size=8))


def record_fields(cls) -> list[str]:
    """The scene-file fields of a component class (what a table may set)."""
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]
    return [f.name for f in msgspec.structs.fields(cls)]


def table_class(top: str, key: str | None):
    if top == "scene":
        return SceneSettings
    if top == "camera":
        return Camera
    assert key is not None   # a component table has its key
    return component_types()[key].cls


def targets(doc: dict) -> list[tuple]:
    """Paths a mutation may change: ("scene"|"camera", field, ...) or ("entity", index,
    component, field, ...), for every field of the class (present or not) and, inside present
    values, every nested table key and array item."""
    out = []

    def inside(path, value):
        if isinstance(value, dict):
            for key, item in value.items():
                out.append(path + (key,))
                inside(path + (key,), item)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                out.append(path + (index,))
                inside(path + (index,), item)

    for top in ("scene", "camera"):
        table = doc.get(top, {})
        for name in record_fields(table_class(top, None)):
            if name != "script":
                out.append((top, name))
                inside((top, name), table.get(name))
    for index, entity in enumerate(doc.get("entity", [])):
        for key, table in entity.items():
            if isinstance(table, dict):
                out.append(("entity", index, key))   # the whole table
                for name in record_fields(table_class("entity", key)):
                    out.append(("entity", index, key, name))
                    inside(("entity", index, key, name), table.get(name))
    return out


TARGETS = [(name, path) for name, doc in DOCS.items() for path in targets(doc)]


def mutated(doc: dict, path: tuple, value, data) -> dict:
    doc = copy.deepcopy(doc)
    parent = doc
    for step in path[:-1]:
        parent = parent.setdefault(step, {}) if isinstance(step, str) else parent[step]
    last = path[-1]
    old = parent.get(last) if isinstance(parent, dict) else parent[last]
    if isinstance(old, list) and old and data.draw(st.booleans()):   # a wrong length instead
        value = old[:-1] if data.draw(st.booleans()) else old + [old[-1]]
    parent[last] = value
    return doc


def field_path(path: tuple) -> str:
    """The path as SceneError spells it: 'emitter.bursts[0].count', 'camera.position[1]'."""
    steps = path[2:] if path[0] == "entity" else path
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def check_error(exc: SceneError, doc: dict, path: tuple) -> None:
    message = str(exc)
    assert "\n" not in message, message
    leaf = next(str(step) for step in reversed(path) if isinstance(step, str))
    if path[0] != "entity" and exc.entity is not None:
        # a rule between a scene-wide field and an entity's (fixed_dt mutated: "entity 'rockets':
        # emitter.on_age.every: expected at least fixed_dt (0.5 s) ...") names the entity's
        # field, and the mutated one in what it expected
        assert leaf in exc.detail, message
        return
    entity = doc["entity"][path[1]]["name"] if path[0] == "entity" else None
    assert exc.entity == entity, message
    wanted, found = field_path(path), exc.field or ""
    # the field itself, a part of it (one item of a vector), or the whole it belongs to (a rule
    # on the vector, "min <= max"); at least the table and the field ("emitter.rate")
    shorter = min(wanted, found, key=len)
    related = (wanted.startswith(found) or found.startswith(wanted)) and (
        shorter.count(".") + shorter.count("[") >= 1 or shorter == wanted)
    # a rule between two fields names the other one (capacity mutated: "bursts[0].count:
    # expected at most capacity (1)")
    table = field_path(path[:3]) if entity else path[0]
    assert related or (found.startswith(table) and leaf in exc.detail), (wanted, message)


def floats_in(value, where="scene"):
    if isinstance(value, float):
        yield where, value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from floats_in(getattr(value, f.name), f"{where}.{f.name}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from floats_in(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from floats_in(item, f"{where}[{index}]")


def check_loaded(scene: Scene) -> None:
    for where, number in floats_in([scene.settings, scene.camera,
                                    *[spec.components for spec in scene.entities]]):
        assert math.isfinite(number) and abs(number) <= F32_MAX, (where, number)


def built(doc: dict, scene_path: Path) -> Scene:
    """The scene built with Scene.add, referenced entities (forces, colliders, trail sources)
    first so that every reference names an entity already added (those that refer keep their
    order: a trail's source that has affected_by comes before the trail)."""
    scene = Scene(path=scene_path)
    entities = doc.get("entity", [])
    names = {e.get("name") for e in entities}

    def named(entity) -> set:
        """Entity names the entity's tables refer to (affected_by, source, sub-emitters)."""
        out: set = set()
        for table in entity.values():
            if not isinstance(table, dict):
                continue
            for key in ("affected_by", "source", "on_death", "on_collision", "on_age"):
                value = table.get(key)
                value = value.get("emitter") if isinstance(value, dict) else value
                items = value if isinstance(value, list) else [value]
                out |= {v for v in items if isinstance(v, str) and v in names}
        return out

    order: list = []
    added: set = set()
    waiting = list(entities)
    while waiting:   # an entity once what it refers to is in (a cycle: the rest as they are)
        ready = [e for e in waiting if named(e) - {e.get("name")} <= added] or waiting
        order += ready
        added |= {e.get("name") for e in ready}
        waiting = [e for e in waiting if e not in ready]
    for entity in order:
        components = {k: v for k, v in entity.items() if k not in ("name", "script")}
        scene.add(entity["name"], **components)
    return scene


@FUZZ
@given(st.data())
def test_a_mutated_scene_file_loads_or_names_the_field(data):
    name, path = data.draw(st.sampled_from(TARGETS))
    doc = mutated(DOCS[name], path, data.draw(values), data)
    text = tomli_w.dumps(doc)
    try:
        scene = loads_scene(text, path=SCENES / name)
    except SceneError as exc:
        check_error(exc, doc, path)
    else:
        check_loaded(scene)


ENTITY_TARGETS = [(name, path) for name, path in TARGETS if path[0] == "entity"]


@FUZZ
@given(st.data())
def test_a_mutated_component_given_to_scene_add_is_validated_the_same(data):
    name, path = data.draw(st.sampled_from(ENTITY_TARGETS))
    value = data.draw(st.one_of(values, st.sampled_from(PYTHON_ONLY)))
    doc = mutated(DOCS[name], path, value, data)
    try:
        scene = built(doc, SCENES / name)
    except SceneError as exc:
        check_error(exc, doc, path)
    else:
        check_loaded(scene)


@pytest.mark.parametrize("text", [
    "[scene]\nname = " + "[" * 600 + "]" * 600 + "\n",        # arrays
    "a = " + "{b = " * 500 + "1" + "}" * 500 + "\n",           # inline tables (1 KB)
], ids=["arrays", "inline-tables"])
def test_nesting_deeper_than_the_parser_is_a_scene_error(text):
    with pytest.raises(SceneError, match=r"^deep\.toml: invalid TOML: expected arrays and "
                                         r"inline tables nested at most .*found deeper nesting$"):
        loads_scene(text, path="deep.toml")


# ------------------------------------------- the numbers that reached the GPU before validation

EMITTER = "[[entity]]\nname = \"e\"\n[entity.emitter]\ncapacity = 1000\n"
ISSUE_NUMBERS = {   # scene text -> (field path, what the message says)
    EMITTER + "rate = 1e12": ("emitter.rate", "expected float <= 4294967295.0 (a step's births"),
    EMITTER + "rate = 1e308": ("emitter.rate", "within the 32-bit float range"),
    EMITTER + "bursts = [{count = 5, repeat = 1e-300}]": (
        "emitter.bursts[0].repeat", "expected 0 or a magnitude of at least 1.175e-38"),
    EMITTER + "bursts = [{count = 5, repeat = 1e-6}]": (
        "emitter.bursts[0].repeat", "expected 0 (fire once) or at least 0.001 s"),
    EMITTER + "rate_over_distance = inf": ("emitter.rate_over_distance", "finite"),
    EMITTER + "size_curve = [1.0, inf]": ("emitter.size_curve[1]", "finite"),
    EMITTER + 'shape = {kind = "sphere", radius = inf}': ("emitter.shape.radius", "finite"),
    "[scene]\nfixed_dt = 5e-324": ("scene.fixed_dt", "expected 0 or a magnitude"),
    "[scene]\nfixed_dt = 1e-9": ("scene.fixed_dt", "expected float >= 1e-06"),
    "[camera]\nposition = [nan, 0.0, 1.0]": ("camera.position[0]", "finite"),
    "[camera]\ntarget = [0.0, inf, 0.0]": ("camera.target[1]", "finite"),
    "[camera]\ncenter = [0.0, -inf]": ("camera.center[1]", "finite"),
    "[camera]\nheight = nan": ("camera.height", "finite"),
    "[camera]\nup = [0.0, 0.0, 0.0]": ("camera.up", "non-zero"),
    "[camera]\nposition = [3e38, 3e38, 3e38]\ntarget = [0.0, 0.0, 0.0]": (
        "camera", "expected a view matrix that fits 32-bit floats in any viewport"),
    "[[entity]]\nname = \"e\"\n[entity.cloth]\nstiffness = inf": ("cloth.stiffness", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.cloth]\nposition = [nan, 0.0, 0.0]": (
        "cloth.position[0]", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.cloth]\ngravity = [0.0, nan, 0.0]": (
        "cloth.gravity[1]", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.cloth]\npin_offset = [inf, 0.0, 0.0]": (
        "cloth.pin_offset[0]", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.particle_life]\nbox = [inf, inf]": (
        "particle_life.box[0]", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.particle_life]\nbox = [1e30, 1e30]": (
        "particle_life.box", "expected at most 4294967295 grid cells"),
    "[[entity]]\nname = \"e\"\n[entity.particle_life]\nforce = 1e300": (
        "particle_life.force", "within the 32-bit float range"),
    "[[entity]]\nname = \"e\"\n[entity.fractal]\nzoom = inf": ("fractal.zoom", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.fractal]\nzoom = 1e31": (
        "fractal.zoom", "expected float <= 1e+30 (the pixel spacing"),
    "[[entity]]\nname = \"e\"\n[entity.fractal]\nzoom_rate = nan": ("fractal.zoom_rate", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.tonemap]\nexposure = inf": ("tonemap.exposure", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.bloom]\nintensity = inf": ("bloom.intensity", "finite"),
    "[[entity]]\nname = \"e\"\n[entity.bloom]\nintensity = 1e5": (
        "bloom.intensity", "expected float <= 65504.0 (the scene image is 16-bit float"),
}


@pytest.mark.parametrize("text", ISSUE_NUMBERS, ids=[v[0] for v in ISSUE_NUMBERS.values()])
def test_numbers_the_gpu_cannot_hold_are_scene_errors(text):
    field, words = ISSUE_NUMBERS[text]
    with pytest.raises(SceneError) as info:
        loads_scene(text, path="n.toml")
    assert info.value.field == field and words in info.value.detail, str(info.value)
    assert "\n" not in str(info.value)


def test_a_step_budget_never_exceeds_32_bits():
    """Bursts that coincide and a jumping emitter ask for more births than a u32 holds; the
    budget the GPU gets is capped (it could not fill more slots anyway)."""
    emitter = Emitter(capacity=MAX_CAPACITY, rate=float(U32_MAX),
                      rate_over_distance=float(U32_MAX),
                      bursts=[Burst(count=MAX_CAPACITY, repeat=MIN_BURST_REPEAT, cycles=0)])
    births = Births()
    births.step(emitter, 0.0, 1.0)
    emitter.position = (1e6, 0.0, 0.0)
    budget, _ = births.step(emitter, 1.0, 1.0)
    assert budget == U32_MAX
    assert np.array([budget], np.uint32)[0] == U32_MAX


@pytest.mark.parametrize("rate", [1.0, -1.0])
def test_an_animated_zoom_holds_at_its_bounds(rate):
    layer = SimpleNamespace(component=Fractal(zoom=1.0, zoom_rate=rate), time=1e6)
    expected = MAX_ZOOM if rate > 0 else MIN_ZOOM
    assert FractalSystem.zoom_at(layer) == expected
    layer.time = 2.0
    assert FractalSystem.zoom_at(layer) == pytest.approx(math.exp(2.0 * rate), rel=1e-12)


@given(w=st.integers(1, 12), h=st.integers(1, 12), pw=st.integers(1, 14), ph=st.integers(1, 14),
       offset=st.none() | st.tuples(st.integers(-3, 14), st.integers(-3, 14)))
@settings(max_examples=120, deadline=None, derandomize=True)
def test_pattern_origin_agrees_with_the_placement_the_engine_uploads(w, h, pw, ph, offset):
    """The oracle is life_patterns.place, which the Life system uses to build the first grid."""
    grid = np.zeros((h, w), bool)
    cells = np.ones((ph, pw), bool)
    try:
        place(grid, cells, offset)
        placed = True
    except PatternError:
        placed = False
    try:
        x, y = pattern_origin((w, h), (pw, ph), offset)
    except ValueError as exc:
        assert not placed, exc
        assert str(exc).startswith(("pattern: ", "offset: "))
        return
    assert placed
    expected = np.zeros((h, w), bool)
    expected[y:y + ph, x:x + pw] = True
    assert np.array_equal(grid, expected)
