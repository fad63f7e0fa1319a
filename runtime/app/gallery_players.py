"""The gallery's live players: each example scene in app/gallery.py's ``PLAYERS`` recorded as a
web page (emberfx.web), for the built site.

The pages are not committed: they are recorded when the site is built, by the mkdocs hook
app/gallery_hook.py, into ``gallery/play/<scene>.html`` of the site (mkdocs copies them like
any file of the docs folder, so links to them are checked). They can also be written by hand:

    python -m emberfx.app.gallery_players site/               # every player
    python -m emberfx.app.gallery_players site/ fountain life  # only these

A player is recorded in the portable profile at the gallery's picture size and loops its
``PLAYERS`` steps from the scene's start. The gallery page links each one under its picture.

With ``EMBERFX_GALLERY_PLAYERS=off`` in the environment (a docs build on a machine without a
GPU), each player is a short page that says it was not recorded, so links still resolve.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import os
import sys
from functools import lru_cache
from pathlib import Path

from emberfx.app.atomic_files import write_atomically
from emberfx.app.gallery import PLAYERS, PLAYERS_DIR, gallery_size, player_uri
from emberfx.core.errors import EmberError
from emberfx.model.scene import bundled_scenes, load_scene
from emberfx.web import web_page

__all__ = ["ENVIRONMENT", "player_html", "write_players"]

ENVIRONMENT = "EMBERFX_GALLERY_PLAYERS"
"""set to "off" to write placeholder pages instead of recording (no GPU needed)"""

PLACEHOLDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} · emberfx</title></head>
<body style="background:#16161a;color:#ddd;font:13px system-ui,sans-serif">
<p>This build of the documentation did not record the players ({env}=off).
<code>emberfx web {name} --out {name}.html</code> writes this one.</p></body></html>
"""


@lru_cache(maxsize=64)
def _recorded(path: str, digest: str, frames: int) -> str:
    """The page of the scene file at ``path`` (``digest``: its text's hash, so an edited scene
    records again, e.g. under `mkdocs serve`)."""
    scene = load_scene(Path(path))
    return web_page(scene, frames, gallery_size(scene))


def player_html(name: str, record: bool | None = None) -> str:
    """The player page of bundled scene ``name``: recorded (``record`` True), or the placeholder
    (False); None follows the environment (``ENVIRONMENT``)."""
    if name not in PLAYERS:
        raise EmberError(f"gallery: no player for scene {name!r}; players: "
                         f"{', '.join(sorted(PLAYERS))}")
    if record is None:
        record = os.environ.get(ENVIRONMENT, "on").strip().lower() != "off"
    if not record:
        return PLACEHOLDER.format(title=html.escape(name), env=ENVIRONMENT, name=name)
    path = bundled_scenes()[name]
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return _recorded(str(path), digest, PLAYERS[name])


def write_players(site: Path, names: list[str] | None = None,
                  record: bool | None = None) -> list[Path]:
    """Write the players of ``names`` (all of ``PLAYERS`` when None) under ``site``; their
    paths."""
    unknown = sorted(set(names or []) - set(PLAYERS))
    if unknown:
        raise EmberError(f"gallery: no player for scene {', '.join(map(repr, unknown))}; "
                         f"players: {', '.join(sorted(PLAYERS))}")
    written = []
    for name in sorted(names or PLAYERS):
        text = player_html(name, record)
        target = Path(site) / player_uri(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        written.append(write_atomically(
            target, lambda tmp, text=text: Path(tmp).write_text(text, "utf-8")))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emberfx.app.gallery_players",
        description=f"Record the gallery's live players into SITE/{PLAYERS_DIR}/.")
    parser.add_argument("site", type=Path, help="the built site (or any folder)")
    parser.add_argument("scenes", nargs="*", metavar="SCENE",
                        help="scenes to record (default: every player)")
    args = parser.parse_args(argv)
    try:
        for path in write_players(args.site, args.scenes or None):
            print(f"wrote {path} ({path.stat().st_size / 1e3:.0f} KB)", flush=True)
    except EmberError as exc:
        print(f"emberfx: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
