"""Families extend scripts and the mouse through runtime/model/registry.py: a toy family defined
here (nothing in runtime/ names it) adds a script action and pointer tools; unknown actions get a
did-you-mean line; and every system's passes() makes no GPU object."""

from __future__ import annotations

import contextlib
import inspect
import textwrap

import pytest

from emberfx.app.interaction import LEFT, Pointer
from emberfx.engine.engine import Engine
from emberfx.engine.script_watchdog import watchdog
from emberfx.model import registry
from emberfx.model.scene import load_scene

TOY_SCENE = """
[scene]
name = "toy"
{script}
[camera]
kind = "orthographic"
[[entity]]
name = "well"
[entity.attractor]
position = [0.0, 0.0, 0.0]
"""


def toy_engine(tmp_path, script: str | None = None) -> Engine:
    line = ""
    if script is not None:
        (tmp_path / "toy.py").write_text(textwrap.dedent(script))
        line = 'script = "toy.py"'
    path = tmp_path / "scene.toml"
    path.write_text(TOY_SCENE.format(script=line))
    return Engine(load_scene(path), size=(32, 32))


@pytest.fixture
def nudge_action():
    """The toy family's action: ``ctx.nudge(name, dx)`` moves an attractor along x."""
    calls = []

    def nudge(engine, name: str, dx: float) -> None:
        calls.append(name)
        attractor = engine.entity(name).attractor
        attractor.position = (attractor.position[0] + dx, *attractor.position[1:])

    registry.script_action("nudge")(nudge)
    yield calls
    registry.remove_script_action("nudge")


def test_a_registered_action_runs_from_a_script_shielded(gpu, tmp_path, nudge_action,
                                                         monkeypatch):
    shielded = []
    real = watchdog.shielded

    @contextlib.contextmanager
    def counting():
        shielded.append(len(nudge_action))   # calls made before this block
        with real():
            yield

    monkeypatch.setattr(watchdog, "shielded", counting)
    engine = toy_engine(tmp_path, """
        def on_update(ctx, dt):
            ctx.nudge("well", 0.25)
        """)
    try:
        engine.step(4)
        assert engine.entity("well").attractor.position == (1.0, 0.0, 0.0)
        assert nudge_action == ["well"] * 4
        assert shielded == [0, 1, 2, 3]   # each call entered a shielded block first
        ctx = engine.scripts.scripts[0].context
        assert list(inspect.signature(ctx.nudge).parameters) == ["name", "dx"]
    finally:
        engine.close()


def test_an_unknown_action_is_one_line_with_did_you_mean(gpu, tmp_path, nudge_action, capsys):
    engine = toy_engine(tmp_path, """
        def on_update(ctx, dt):
            ctx.nudgee("well", 1.0)
        """)
    try:
        engine.step(1)
        ctx = engine.scripts.scripts[0].context
        assert not hasattr(ctx, "nudgee")
        assert hasattr(ctx, "nudge") and hasattr(ctx, "burst") and hasattr(ctx, "paint")
    finally:
        engine.close()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "ctx.nudgee: no such action; did you mean ctx.nudge?" in lines[0]
    assert "at line 3" in lines[0] and "Traceback" not in err
    assert nudge_action == []


class ToyPad:
    """The toy family's pointer tool: takes left drags that start on the left half."""

    def __init__(self):
        self.strokes: list[list[tuple]] = []   # (x, y, shift) at the press, then (x, y)
        self.hovered: list[tuple[float, float]] = []

    def press(self, engine, x, y, viewport, modifiers=()):
        if x >= viewport[0] / 2:
            return None
        stroke: list[tuple] = [(x, y, "Shift" in modifiers)]
        self.strokes.append(stroke)

        class Stroke:
            def drag(self, x, y, viewport):
                stroke.append((x, y))

        return Stroke()

    def hover(self, engine, x, y, viewport):
        self.hovered.append((x, y))


@pytest.fixture
def pad():
    tool = registry.pointer_tool(ToyPad())
    yield tool
    registry.remove_pointer_tool(tool)


def test_a_registered_pointer_tool_takes_drags_over_it_and_sees_every_move(gpu, tmp_path, pad):
    engine = toy_engine(tmp_path)
    try:
        pointer, viewport = Pointer(engine), (100, 50)
        camera_before = (engine.camera.center, engine.camera.height)
        pointer.down(10, 20, LEFT, viewport, modifiers=("Shift",))
        pointer.move(15, 22, viewport)
        pointer.move(30, 40, viewport)
        pointer.up()
        assert pad.strokes == [[(10, 20, True), (15, 22), (30, 40)]]
        assert (engine.camera.center, engine.camera.height) == camera_before   # no pan
        pointer.down(80, 20, LEFT, viewport)   # off the pad: the camera pans
        pointer.move(90, 20, viewport)
        pointer.up()
        assert len(pad.strokes) == 1
        assert engine.camera.center != camera_before[0]
        assert pad.hovered == [(15, 22), (30, 40), (90, 20)]
    finally:
        engine.close()


def test_runtime_names_no_family():
    """No runtime module imports a family module (the registry's discovery imports the package)
    or uses a family's component key as a value; benchmarks (runtime/bench/) may."""
    import ast
    from pathlib import Path

    import emberfx

    keys = set(registry.component_types())
    offenders = []
    for path in sorted(Path(emberfx.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "emberfx.systems."):
                offenders.append(f"{path.name}:{node.lineno}: from {node.module}")
            elif isinstance(node, ast.Import):
                offenders += [f"{path.name}:{node.lineno}: import {a.name}" for a in node.names
                              if a.name.startswith("emberfx.systems.")]
            elif (isinstance(node, ast.Constant) and node.value in keys
                  and id(node) not in docstrings):
                offenders.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert offenders == []


ALL_FAMILIES = """
[scene]
name = "all"
[camera]
kind = "orthographic"
[[entity]]
name = "jet"
[entity.emitter]
capacity = 64
rate = 60.0
[entity.trail]
source = "jet"
[[entity]]
name = "well"
[entity.attractor]
[[entity]]
name = "calm"
[entity.force_field]
kind = "drag"
[[entity]]
name = "floor"
[entity.collider]
shape = "plane"
[[entity]]
name = "flag"
[entity.cloth]
resolution = [4, 4]
[[entity]]
name = "board"
[entity.life]
size = [64, 64]
density = 0.3
[[entity]]
name = "swarm"
[entity.particle_life]
count = 64
species = 2
[[entity]]
name = "set"
[entity.fractal]
resolution = [32, 32]
[[entity]]
name = "water"
[entity.fluid]
particle_radius = 0.05
fill = [{ center = [0, 0, 0], half_size = [0.2, 0.2, 0.2] }]
[[entity]]
name = "smoke"
[entity.gas]
resolution = [8, 8, 8]
cell = 0.1
sources = [{ position = [0, 1, 0] }]
[[entity]]
name = "lamp"
[entity.point_light]
position = [0, 1, 0]
[[entity]]
name = "caption"
[entity.label]
text = "all"
[[entity]]
name = "fx"
[entity.edge_detect]
[entity.bloom]
[entity.tonemap]
"""


def test_passes_makes_no_gpu_object_for_any_system(gpu, tmp_path, monkeypatch):
    path = tmp_path / "all.toml"
    path.write_text(ALL_FAMILIES)
    engine = Engine(load_scene(path), size=(48, 32))
    try:
        engine.step(2)
        engine.render()
        systems = engine._system_objects()
        with_system = {ct.system for ct in registry.component_types().values() if ct.system}
        assert {type(s) for s in systems} == with_system   # the scene covers every family
        made: list[str] = []
        device = engine.device
        for name in [n for n in dir(device) if n.startswith("create_")]:
            real = getattr(device, name)

            def counted(*args, _real=real, _name=name, **kwargs):
                made.append(_name)
                return _real(*args, **kwargs)

            monkeypatch.setattr(device, name, counted)
        for system in systems:
            first, second = system.passes(), system.passes()
            assert made == [], f"{type(system).__name__}.passes() made {made}"
            assert [p.name for p in first] == [p.name for p in second]
        assert any(p.name.startswith("fx:post:") for s in systems for p in s.passes())
    finally:
        monkeypatch.undo()
        engine.close()
