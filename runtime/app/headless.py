"""Rendering to a file without a window, saying what happens while it happens.

Used by ``emberfx render``, and by ``emberfx run`` and ``emberfx.run()`` where no window can open.
On a CPU adapter a scene may take a long time before its first frame (pipelines are built, then
LLVM compiles the shaders at first use), so every phase is announced on stderr: the CPU adapter
(once per process), the entities being prepared, how long that took, then frame progress
(``output.Progress``: a bar on a terminal, plain lines elsewhere).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

QUALITIES = ("auto", "full")
"""--quality: auto applies a scene's [cpu] preset on a CPU adapter; full never does"""
LISTED_ENTITIES = 6     # entities named in the "preparing" line; the rest are counted


def say(message: str) -> None:
    print(f"emberfx: {message}", file=sys.stderr, flush=True)


def for_adapter(scene, quality: str = "auto"):
    """The scene as this machine runs it: with quality "auto" on a CPU adapter, its ``[cpu]``
    preset applied (emberfx.model.presets), every change said on stderr; else ``scene``."""
    if quality == "full" or not scene.cpu:
        return scene
    from emberfx.core.gpu import get_context

    if not get_context().is_software:
        return scene
    variant, changed = scene.cpu_variant()
    say(f"{scene.settings.name}: on a CPU adapter its [cpu] preset lowers "
        f"{'; '.join(changed)} (--quality full renders it as written)")
    return variant


def describe_entities(scene, limit: int = LISTED_ENTITIES) -> str:
    """'3 entities: fountain (emitter), well (attractor), flag (cloth)'."""
    specs = list(scene.entities)
    if not specs:
        return "an empty scene"
    shown = [f"{spec.name} ({', '.join(spec.components) or 'no components'})"
             for spec in specs[:limit]]
    more = f" and {len(specs) - limit} more" if len(specs) > limit else ""
    noun = "entity" if len(specs) == 1 else "entities"
    return f"{len(specs)} {noun}: {', '.join(shown)}{more}"


def build_engine(scene, size=None, *, announce: bool = True, **options):
    """``Engine(scene, size=size, **options)``, announcing the adapter and the entities first."""
    from emberfx.engine.engine import Engine

    if announce:
        from emberfx.core.gpu import get_context, software_notice

        ctx = get_context()
        notice = software_notice(ctx)
        if notice:
            say(notice)
        say(f"preparing {describe_entities(scene)} on {ctx.label}")
    start = time.perf_counter()
    engine = Engine(scene, size=size, **options)
    if announce:
        say(f"prepared in {time.perf_counter() - start:.1f} s")
    return engine


def output_size(out, size: tuple[int, int], built: bool = False) -> tuple[int, int]:
    """The size to render ``out`` at: H.264 in an .mp4 (yuv420p, one colour sample for each 2x2
    pixels) needs an even width and height, so an odd one is rounded up, with a note on stderr;
    every other format keeps ``size`` as given. ``built``: the Engine already has ``size``, so
    the video is padded with black instead (app/video.py), and the note says that."""
    w, h = size
    if Path(out).suffix.lower() != ".mp4" or (w % 2 == 0 and h % 2 == 0):
        return w, h
    even = (w + w % 2, h + h % 2)
    done = "padded with black" if built else "rounded up"
    say(f"{Path(out).name}: {w}x{h} {done} to {even[0]}x{even[1]} (H.264 video needs an even "
        f"width and height; .png, .gif and .mov keep the exact size)")
    return even


def render_headless(scene, frames: int, out, *, size=None, engine=None, **options) -> Path:
    """Render ``frames`` fixed steps of ``scene`` to ``out`` (.png, .gif, .mp4) with progress on
    stderr; builds the Engine (announced, at ``output_size``) unless one is given, and closes
    it either way."""
    from emberfx.app.output import render_to_file

    if engine is None:
        size = output_size(out, tuple(size or scene.settings.size))
    else:
        output_size(out, tuple(engine.size), built=True)
    engine = engine or build_engine(scene, size, **options)
    try:
        return render_to_file(engine, frames, out, progress=True)
    finally:
        engine.close()


def headless_output(scene, screenshot=None) -> Path:
    """Where a windowless ``run`` writes: the screenshot when asked for, else ``<scene>.mp4`` in
    the working folder (the scene file's stem, or its name for a scene built in Python)."""
    if screenshot is not None:
        return Path(screenshot)
    path = getattr(scene, "path", None)
    if path:
        return Path(Path(path).stem + ".mp4")
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", scene.settings.name).strip("_")
    return Path(f"{name or 'scene'}.mp4")
