"""The mkdocs hook (mkdocs.yml ``hooks:``) that records the gallery's live players into the
site: each page of app/gallery_players.py joins the site's files as ``gallery/play/<scene>.html``,
so mkdocs writes it to the site and checks the gallery's links to it.

Recording needs a GPU (CI has lavapipe). ``EMBERFX_GALLERY_PLAYERS=off mkdocs build`` writes
placeholder players instead; a build that cannot record stops with one line that says so.
"""

from __future__ import annotations

import logging
import time

from emberfx.app.gallery import PLAYERS, player_uri
from emberfx.app.gallery_players import ENVIRONMENT, player_html

log = logging.getLogger("mkdocs.hooks.gallery")


def on_files(files, config):
    """Add every player page to ``files`` (mkdocs' Files of the build)."""
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import File

    started = time.perf_counter()
    for name in sorted(PLAYERS):
        try:
            text = player_html(name)
        except Exception as exc:   # no GPU adapter, most often: one line, not a traceback
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise PluginError(f"gallery player {name}: cannot record it ({reason}); "
                              f"{ENVIRONMENT}=off builds the site without players") from None
        files.append(File.generated(config, player_uri(name), content=text))
    log.info("gallery: %d live players in %.1f s", len(PLAYERS), time.perf_counter() - started)
    return files
