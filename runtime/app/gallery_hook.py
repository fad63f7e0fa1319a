"""The mkdocs hook (mkdocs.yml ``hooks:``) that records the gallery's live players into the
site: each page of app/gallery_players.py joins the site's files as ``gallery/play/<scene>.html``,
so mkdocs writes it to the site and checks the gallery's links to it. It also makes the
addresses of the gallery's clips (``<video src=... poster=...>``, raw HTML, which mkdocs leaves
as written) relative to the built page, as mkdocs does for Markdown links and images.

Recording needs a GPU (CI has lavapipe). ``EMBERFX_GALLERY_PLAYERS=off mkdocs build`` writes
placeholder players instead; a build that cannot record stops with one line that says so.
"""

from __future__ import annotations

import logging
import posixpath
import re
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


def site_media(html: str, page_src: str, page_url: str) -> str:
    """``html`` of the page built from ``page_src`` (its path in the docs folder) to
    ``page_url``, each ``<video>``'s relative src and poster made relative to ``page_url``."""
    from mkdocs.utils import get_relative_url

    def relative(address: str) -> str:
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:|/|#", address):
            return address   # a URL, an absolute path or an anchor: as written
        in_docs = posixpath.normpath(posixpath.join(posixpath.dirname(page_src), address))
        return get_relative_url(in_docs, page_url)

    def tag(match: re.Match) -> str:
        return re.sub(r'\b(src|poster)="([^"]*)"', lambda m: f'{m[1]}="{relative(m[2])}"',
                      match[0])

    return re.sub(r"<video\b[^>]*>", tag, html)


def on_page_content(html, page, config, files):
    """The page's HTML with its videos' addresses relative to where the page is built."""
    return site_media(html, page.file.src_uri, page.url)
