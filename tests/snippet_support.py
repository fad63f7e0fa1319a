"""The fenced code blocks of README.md and docs/**/*.md, as tests/test_snippets.py and
tests/test_notebook.py run them, and the folder a snippet runs in.

Marker conventions (what a page's author writes):

- A ```python block with no marker is a program: it runs on its own as a script.
- ```python title="scripts/orbit_well.py"``` or ```wgsl title="modifiers/swirl.wgsl"```: the
  block is a file a scene uses, not a program. The title is the path the scene names, relative
  to the scene file; the page must also show a whole scene (a ```toml block with ``[scene]`` or
  ``[[entity]]``) that names that path, and the test runs that scene with the file.
- ``<!-- notebook -->`` on the line directly above a fence: the block is a notebook cell. The
  notebook blocks of one page run in order as the cells of one notebook (tests/test_notebook.py).
- ``<!-- excerpt: PATH -->`` directly above a fence: the block quotes the repository file PATH
  (lines may be elided with a line ``...``); the test checks each quoted run of lines is in
  that file, and does not run it.
- ```wgsl blocks need a title (an untitled WGSL listing is written as ```text).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)"
                   r"\s*(?P<attrs>.*)$")
ATTR = re.compile(r'(\w+)\s*=\s*"([^"]*)"')
MARKER = re.compile(r"^\s*<!--\s*(?P<name>[\w-]+)\s*(?::\s*(?P<value>.*?))?\s*-->\s*$")


@dataclasses.dataclass(frozen=True)
class Block:
    page: Path
    line: int                 # 1-based line of the opening fence
    lang: str
    attrs: dict[str, str]
    marker: str | None        # "notebook", "excerpt", ... (the comment line above the fence)
    marker_value: str | None
    text: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"

    @property
    def title(self) -> str | None:
        return self.attrs.get("title")

    @property
    def is_scene(self) -> bool:
        """A whole scene: a TOML block with a [scene] table or [[entity]] tables."""
        return self.lang == "toml" and re.search(r"^\s*(\[scene\]|\[\[entity\]\])", self.text,
                                                 re.MULTILINE) is not None


def blocks(page: Path) -> list[Block]:
    """Every fenced code block of ``page``, dedented by its fence's indentation."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence = match["indent"], match["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence)
                                      and lines[j].strip().strip(fence[0]) == ""):
            line = lines[j]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            j += 1
        above = MARKER.match(lines[i - 1]) if i > 0 else None
        found.append(Block(page, i + 1, match["lang"].lower(), dict(ATTR.findall(match["attrs"])),
                           above["name"] if above else None,
                           above["value"] if above else None, "\n".join(body) + "\n"))
        i = j + 1
    return found


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def python_programs() -> list[Block]:
    return [b for b in all_blocks() if b.lang in ("python", "py") and b.title is None
            and b.marker not in ("notebook", "excerpt")]


def file_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.title is not None and b.marker != "excerpt"]


def notebook_pages() -> dict[Path, list[Block]]:
    pages: dict[Path, list[Block]] = {}
    for b in all_blocks():
        if b.marker == "notebook":
            pages.setdefault(b.page, []).append(b)
    return pages


def scene_for(file_block: Block) -> Block | None:
    """The whole-scene TOML block of the same page, nearest to ``file_block``, that names it."""
    quoted = re.compile(rf"""["']{re.escape(file_block.title or '')}["']""")
    scenes = [b for b in blocks(file_block.page) if b.is_scene and quoted.search(b.text)]
    return min(scenes, key=lambda b: abs(b.line - file_block.line), default=None)


def files_named_by(scene: Block) -> list[Block]:
    """The titled blocks of the scene's page that the scene names (they go beside it)."""
    return [b for b in blocks(scene.page) if b.title is not None
            and re.search(rf"""["']{re.escape(b.title)}["']""", scene.text)]


def write_named_files(scene: Block, folder: Path) -> list[Block]:
    """Write the titled blocks the scene names into ``folder`` at their titles' paths."""
    written = files_named_by(scene)
    for file in written:
        path = folder / file.attrs["title"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(file.text, encoding="utf-8")
    return written


def scene_folder(folder: Path) -> Path:
    """``folder`` made into a copy of the repository's scenes/ folder, so the relative paths a
    snippet's scene names (patterns/, volumes/, modifiers/, scripts/) resolve as they would
    beside the bundled scenes. Returns ``folder``."""
    shutil.copytree(SCENES, folder, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
    return folder


def clone_folder(folder: Path) -> Path:
    """``folder`` made to look like the root of a clone for a snippet (a copy of scenes/, so
    ``"scenes/fountain.toml"`` resolves), while what the snippet writes stays out of the
    repository. Returns ``folder``."""
    scene_folder(folder / "scenes")
    return folder
