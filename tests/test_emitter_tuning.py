"""The emitter family keeps no tuning in module state: no ``global`` statement and no
``globals()`` in systems/emitter, so the only way to choose a path of the step is the Engine's
``emitter_tuning`` value (systems/emitter/tuning.py), which the system reads once."""

from __future__ import annotations

import ast
from pathlib import Path

EMITTER = Path(__file__).resolve().parent.parent / "systems" / "emitter"


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


def test_no_emitter_module_writes_module_state():
    files = sorted(EMITTER.glob("*.py"))
    assert len(files) > 10 and EMITTER.joinpath("tuning.py") in files
    found = {f.name: lines for f in files
             if (lines := module_state_writes(f.read_text(encoding="utf-8")))}
    assert found == {}
