"""What `pip install .` puts in the wheel: pyproject.toml names every package folder of
runtime/ and systems/ (a family missing there is unknown to an installed emberfx, though an
editable install finds it), and its package data covers every shader and every file the
bundled scenes read."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUP = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
ROOTS = {folder: package for package, folder in SETUP["package-dir"].items()}


def package_of(folder: Path) -> str:
    """The import name setuptools gives ``folder`` through package-dir."""
    relative = folder.relative_to(ROOT)
    top = relative.parts[0]
    return ".".join([ROOTS[top], *relative.parts[1:]])


def test_every_package_folder_is_listed():
    listed = set(SETUP["packages"])
    folders = [p.parent for top in ("runtime", "systems")
               for p in (ROOT / top).rglob("__init__.py") if "__pycache__" not in p.parts]
    missing = sorted(package_of(f) for f in folders if package_of(f) not in listed)
    assert not missing, f"pyproject.toml [tool.setuptools] packages lacks {missing}"


def covered(package: str, relative: str) -> bool:
    return any(fnmatch.fnmatch(relative, pattern)
               for pattern in SETUP["package-data"].get(package, []))


def test_package_data_covers_every_shader_and_scene_file():
    left_out = []
    for top, package in (("shaders", "emberfx.shaders"), ("scenes", "emberfx.scenes")):
        for path in sorted((ROOT / top).rglob("*")):
            code = path.suffix in (".py", ".pyc") and path.parent.name != "scripts"
            if not path.is_file() or code or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(ROOT / top).as_posix()
            if not covered(package, relative):
                left_out.append(f"{top}/{relative}")
    assert not left_out, f"pyproject.toml package-data leaves out {left_out}"
