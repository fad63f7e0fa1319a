"""The generated pages of the documentation site, written in one go from what they document:

    python -m emberfx.app.docs_pages docs/

writes docs/reference/scene.md (from the component classes, app/reference.py),
docs/reference/cli.md (from the argument parser, app/cli_reference.py), the generated regions of
docs/performance.md (from the committed ``emberfx bench --json`` files, app/performance_page.py)
and docs/gallery.md (the page; its pictures and clips are rendered on the GPU by ``emberfx
gallery docs/``, app/gallery_media.py). tests/test_docs_reference.py fails when a committed one
is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from emberfx.app import cli_reference, reference
from emberfx.app.gallery import write_gallery_page
from emberfx.app.performance_page import write_performance_page

COMMAND = "python -m emberfx.app.docs_pages docs/"
"""what the generated pages and the staleness test tell a reader to run"""


def write_page(docs: Path, page: Path, text: str) -> Path:
    """Write ``text`` as ``page`` under ``docs``; returns its path."""
    target = Path(docs) / page
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8", newline="\n")
    return target


def write_pages(docs: Path) -> list[Path]:
    """Write every generated page under ``docs`` (a docs folder); their paths."""
    return [write_page(docs, reference.PAGE, reference.scene_reference()),
            write_page(docs, cli_reference.PAGE, cli_reference.cli_reference()),
            write_performance_page(docs), write_gallery_page(docs)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for path in write_pages(Path(argv[0]) if argv else Path("docs")):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
