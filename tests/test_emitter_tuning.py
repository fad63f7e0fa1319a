"""The emitter and cloth families keep no tuning in module state: no ``global`` statement and
no ``globals()`` in systems/emitter or systems/cloth, so the only way to choose a path of their
step (or the size of an emitter's prewarm submissions) is the Engine's ``emitter_tuning`` /
``cloth_tuning`` value (systems/emitter/tuning.py, systems/cloth/tuning.py), which the system
reads once."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from emberfx.core.step_batches import StepBatching
from emberfx.systems.cloth.tuning import DEFAULT as CLOTH_DEFAULT
from emberfx.systems.cloth.tuning import RESIDENT_ON_HARDWARE, ClothTuning

SYSTEMS = Path(__file__).resolve().parent.parent / "systems"
EMITTER = SYSTEMS / "emitter"


def module_state_writes(source: str) -> list[int]:
    """Lines of ``global`` statements and ``globals()`` calls in ``source``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Global):
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "globals"):
            lines.append(node.lineno)
    return lines


def test_the_check_finds_module_state_writes():
    assert module_state_writes("X = 1\ndef f():\n    global X\n    X = 2\n") == [3]
    assert module_state_writes("globals().update(X=2)\n") == [1]
    assert module_state_writes("X = (1, 2)\ndef f(x=X):\n    return x\n") == []


@pytest.mark.parametrize("family, at_least", [("emitter", 10), ("cloth", 3)])
def test_no_module_of_the_family_writes_module_state(family, at_least):
    folder = SYSTEMS / family
    files = sorted(folder.glob("*.py"))
    assert len(files) > at_least and folder.joinpath("tuning.py") in files
    found = {f.name: lines for f in files
             if (lines := module_state_writes(f.read_text(encoding="utf-8")))}
    assert found == {}


@pytest.mark.parametrize("field", ["work", "steps", "notice_work"])
def test_the_prewarm_limits_are_checked(field):
    one: dict[str, Any] = {field: 1}
    assert getattr(StepBatching(**one), field) == 1
    bad: Any
    for bad in (0, -3, 1.5, True):
        with pytest.raises(ValueError, match=rf"^StepBatching\.{field}: expected an integer of "
                                             rf"1 or more, found {bad!r}$"):
            StepBatching(**{field: bad})


def test_the_cloth_resident_limit_is_the_tuning_or_the_adapter_s():
    software, hardware = SimpleNamespace(is_software=True), SimpleNamespace(is_software=False)
    assert CLOTH_DEFAULT.resident_limit(software) == 0
    assert CLOTH_DEFAULT.resident_limit(hardware) == RESIDENT_ON_HARDWARE
    assert ClothTuning(resident_up_to_vertices=77).resident_limit(software) == 77
    assert ClothTuning(resident_up_to_vertices=0).resident_limit(hardware) == 0
    bad: Any
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match=r"^ClothTuning\.resident_up_to_vertices: "):
            ClothTuning(resident_up_to_vertices=bad)


def test_the_engine_refuses_a_step_batching_of_another_type(gpu):
    """Every family reads the one StepBatching through SharedResources.tuning_value, which
    names the Engine's keyword and the expected type."""
    from emberfx.engine.engine import Engine
    from emberfx.model.scene import loads_scene

    text = """
[[entity]]
name = "warm"
[entity.emitter]
capacity = 300
prewarm = 0.5
"""
    with pytest.raises(TypeError, match=r"^Engine\(step_batching=\.\.\.\): expected a "
                                        r"StepBatching \(emberfx\.core\.step_batches\), "
                                        r"found dict$"):
        Engine(loads_scene(text), step_batching={"work": 10})   # type: ignore[arg-type]
