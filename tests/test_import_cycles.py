"""The import graph of runtime/ (``emberfx``) and systems/ (``emberfx.systems``) has no cycle.

Every import counts: at the top of a module and inside functions alike (a local import only
postpones a cycle to the first call). Imports under ``if TYPE_CHECKING:`` are left out: they
never run. Relative imports are resolved against the importing module's package, and
``from package import name`` is an edge to the module ``package.name`` where that is one. The
root package ``emberfx`` is no edge target: Python imports it before any of its modules, so
importing it from one of them runs nothing.

The graph's strongly connected components of more than one module are its cycles. The same
walk refuses ``globals().update``, which defines names no reader (or checker) can see.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (("runtime", "emberfx"), ("systems", "emberfx.systems"))
TOP = "emberfx"


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the mapped folders under ``root``."""
    found = {}
    for folder, package in PACKAGES:
        for path in sorted((root / folder).rglob("*.py")):
            parts = list(path.relative_to(root / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST):
    """Every node that can run: the bodies of ``if TYPE_CHECKING:`` are skipped (their else
    branches are not)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _known(name: str, known: dict[str, Path]) -> str | None:
    """``name``, or its nearest enclosing module that is one of ``known``."""
    while name and name not in known:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name or None


def imports_of(module: str, path: Path, known: dict[str, Path],
               type_only: bool = False) -> set[str]:
    """The modules of ``known`` that ``module`` imports at run time (``type_only``: and
    under ``if TYPE_CHECKING:``)."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    targets: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree) if type_only else _runtime_nodes(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                     for alias in node.names]
        for name in names:
            target = _known(name, known)
            if target is not None and target not in (module, TOP):
                targets.add(target)
    return targets


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm, with an
    explicit stack: the graph may be deeper than the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def globals_updates(root: Path) -> list[str]:
    """``file:line`` of every ``globals().update(...)`` call under the mapped folders."""
    found = []
    for path in modules(root).values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "update" and isinstance(node.func.value, ast.Call)
                    and isinstance(node.func.value.func, ast.Name)
                    and node.func.value.func.id == "globals"):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def _shown(component: list[str]) -> str:
    return " <-> ".join(component)


# ------------------------------------------------------------------------------- the project

def test_runtime_and_systems_have_no_import_cycle():
    found = cycles(import_graph(ROOT))
    assert not found, "import cycles:\n" + "\n".join(_shown(c) for c in found)


# a family's system module, which only the family's __init__ imports (type-only imports
# included): the family's other modules see the system through a protocol (emitter/host.py)
SYSTEMS_IMPORTED_ONLY_BY_INIT = ("emberfx.systems.emitter.system",)


def test_only_the_family_init_imports_its_system():
    known = modules(ROOT)
    for system in SYSTEMS_IMPORTED_ONLY_BY_INIT:
        family = system.rsplit(".", 1)[0]
        importers = sorted(m for m, path in known.items()
                           if m != family and system in imports_of(m, path, known, True))
        assert not importers, f"{system} is imported by {', '.join(importers)}"


def test_no_module_updates_its_globals():
    found = globals_updates(ROOT)
    assert not found, "globals().update in: " + ", ".join(found)


def test_the_graph_sees_the_project():
    """A walk that found nothing would pass the tests above: it finds the modules and the
    edges the project is known to have."""
    graph = import_graph(ROOT)
    assert "emberfx.engine.engine" in graph and "emberfx.systems.emitter.system" in graph
    assert "emberfx.model.loader" in graph["emberfx.model.scene"]
    assert "emberfx.core.system" in graph["emberfx.systems.emitter.system"]


# ------------------------------------------------------------------------------- the checker

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder, _ in PACKAGES:
        (tmp_path / folder).mkdir(exist_ok=True)
    return tmp_path


def test_a_cycle_through_a_local_import_is_found(tmp_path):
    root = _tree(tmp_path, {
        "runtime/__init__.py": "",
        "runtime/model/__init__.py": "",
        "runtime/model/loader.py": "from emberfx.model.scene import Scene\n",
        "runtime/model/scene.py": "def load():\n    from .loader import x\n",
        "runtime/model/alone.py": "import emberfx.model.scene\n",
    })
    assert cycles(import_graph(root)) == [["emberfx.model.loader", "emberfx.model.scene"]]


def test_a_cycle_across_runtime_and_systems_is_found(tmp_path):
    root = _tree(tmp_path, {
        "runtime/__init__.py": "",
        "runtime/engine/__init__.py": "",
        "runtime/engine/engine.py": "def export():\n    from emberfx.systems import a\n",
        "systems/__init__.py": "",
        "systems/a/__init__.py": "from . import sys\n",
        "systems/a/sys.py": "from emberfx.engine import engine\n",
    })
    assert cycles(import_graph(root)) == [
        ["emberfx.engine.engine", "emberfx.systems.a", "emberfx.systems.a.sys"]]


def test_type_checking_imports_and_the_root_package_make_no_cycle(tmp_path):
    root = _tree(tmp_path, {
        "runtime/__init__.py": "from emberfx.model import scene\n",
        "runtime/model/__init__.py": "",
        "runtime/model/loader.py": ("from typing import TYPE_CHECKING\n"
                                    "if TYPE_CHECKING:\n    from emberfx.model.scene import S\n"
                                    "else:\n    import json\n"),
        "runtime/model/scene.py": "from emberfx.model import loader\nimport emberfx\n",
    })
    graph = import_graph(root)
    assert graph["emberfx.model.scene"] == {"emberfx.model.loader"}
    assert graph["emberfx.model.loader"] == set()
    assert cycles(graph) == []


def test_globals_update_is_found(tmp_path):
    root = _tree(tmp_path, {"systems/__init__.py": "",
                            "systems/x.py": "def f():\n    globals().update(a=1)\n"})
    assert globals_updates(root) == ["systems/x.py:2"]
