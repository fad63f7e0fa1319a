"""A scene as a web page: the engine's device calls recorded in a browser's profile
(record.py, trace.py) and replayed by the page's WebGPU (page.py, player.js).

    emberfx web scenes/life.toml --out life.html --frames 300
    engine.web("life.html")          # the same for an Engine's scene
    engine.web()                     # in a notebook: the player in the cell
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import wgpu

from emberfx.app.atomic_files import check_target, write_atomically
from emberfx.core.errors import DeviceLimitError
from emberfx.web.page import page
from emberfx.web.record import record as record_trace
from emberfx.web.trace import TraceError

DEFAULT_FRAMES = 300   # steps recorded when none are asked for: 5 s at 60 steps a second


def web_page(scene, frames: int = DEFAULT_FRAMES, size: tuple[int, int] | None = None, *,
             scripts=True) -> str:
    """The HTML of ``scene`` recorded for ``frames`` steps (see web/record.py). A scene the
    page cannot replay raises TraceError, one line."""
    where = scene.path or scene.settings.name
    try:
        recorded = record_trace(scene, frames, size, scripts=scripts)
    except wgpu.GPUValidationError as exc:
        reason = next((line.strip() for line in str(exc).splitlines()
                       if "limit" in line.lower() or "Too many" in line),
                      str(exc).strip().splitlines()[-1])
        raise TraceError(f"{where}: cannot run in a browser's WebGPU: {reason}") from None
    except DeviceLimitError as exc:   # beyond WebGPU's default limits, which pages get
        raise TraceError(f"{where}: cannot run with a browser's WebGPU limits: {exc}") from None
    except TraceError as exc:
        raise TraceError(f"{where}: {exc}") from None
    return page(recorded)


def write_web(scene, path: str | os.PathLike, frames: int = DEFAULT_FRAMES,
              size: tuple[int, int] | None = None, *, scripts=True) -> Path:
    """Write ``scene``'s page to ``path`` (whole or not at all); returns the path."""
    check_target(Path(path))   # before the recording, which takes a while
    text = web_page(scene, frames, size, scripts=scripts)
    return write_atomically(path, lambda tmp: Path(tmp).write_text(text, "utf-8"))


def player_frame(size: tuple[int, int]) -> tuple[int, int]:
    """The (width, height) of an iframe that shows a page of canvas ``size`` whole: the canvas,
    the page's margin and its control bars."""
    w, h = size
    return w + 24, h + 140


def embedded(page_html: str, size: tuple[int, int]) -> str:
    """``page_html`` inside an iframe (its own document: the player's ids and script stay out of
    the host page), for a notebook cell or another page."""
    w, h = player_frame(size)
    return (f'<div class="emberfx-player"><iframe srcdoc="{html.escape(page_html, quote=True)}" '
            f'title="emberfx player" style="width: {w}px; height: {h}px; border: 0">'
            f'</iframe></div>')


def notebook_player(scene, frames: int | None = None, size: tuple[int, int] | None = None, *,
                    scripts=True):
    """An IPython HTML display of ``scene``'s page: it plays in the cell on the viewer's GPU
    with no kernel round trips, and again when a trusted notebook is reopened without one."""
    from IPython.display import HTML

    text = web_page(scene, DEFAULT_FRAMES if frames is None else frames, size, scripts=scripts)
    return HTML(embedded(text, size or tuple(scene.settings.size)))


__all__ = ["DEFAULT_FRAMES", "TraceError", "embedded", "notebook_player", "player_frame",
           "web_page", "write_web"]
